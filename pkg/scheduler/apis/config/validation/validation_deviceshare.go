/*
Copyright 2026 The Koord Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

// ValidateDeviceShareArgs checks DeviceShareArgs after defaulting: a scoring strategy of a known type over
// distinct resources with weights in [1, 100], and GPU models that name a model.
func ValidateDeviceShareArgs(path *field.Path, args *config.DeviceShareArgs) field.ErrorList {
	errs := validateScoring(path.Child("scoringStrategy"), args.ScoringStrategy)
	for i, m := range args.GPUShareUnsupportedModels {
		if m.Model == "" {
			errs = append(errs, field.Required(path.Child("gpuShareUnsupportedModels").Index(i).Child("model"), ""))
		}
	}
	return errs
}
