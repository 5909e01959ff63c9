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
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

// supportedGangMatchPolicies are the values DefaultMatchPolicy may take.
var supportedGangMatchPolicies = []string{
	string(extension.GangMatchPolicyOnceSatisfied),
	string(extension.GangMatchPolicyOnlyWaiting),
	string(extension.GangMatchPolicyWaitingAndRunning),
}

// ValidateCoschedulingArgs checks CoschedulingArgs after defaulting: a positive default timeout, at least one
// controller worker, a known default match policy, and preemption and network-topology placement off (Koord
// implements neither).
func ValidateCoschedulingArgs(path *field.Path, args *config.CoschedulingArgs) field.ErrorList {
	var errs field.ErrorList
	if args.DefaultTimeout.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("defaultTimeout"), args.DefaultTimeout.Duration.String(), "must be greater than 0"))
	}
	if args.ControllerWorkers < 1 {
		errs = append(errs, field.Invalid(path.Child("controllerWorkers"), args.ControllerWorkers, "must be at least 1"))
	}
	if !slices.Contains(supportedGangMatchPolicies, args.DefaultMatchPolicy) {
		errs = append(errs, field.NotSupported(path.Child("defaultMatchPolicy"), args.DefaultMatchPolicy, supportedGangMatchPolicies))
	}
	return errs
}
