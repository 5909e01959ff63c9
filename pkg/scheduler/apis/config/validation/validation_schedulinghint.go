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

// ValidateSchedulingHintArgs checks SchedulingHintArgs after defaulting: a positive maxHintNodes.
func ValidateSchedulingHintArgs(path *field.Path, args *config.SchedulingHintArgs) field.ErrorList {
	var errs field.ErrorList
	if args.MaxHintNodes <= 0 {
		errs = append(errs, field.Invalid(path.Child("maxHintNodes"), args.MaxHintNodes, "must be positive"))
	}
	return errs
}
