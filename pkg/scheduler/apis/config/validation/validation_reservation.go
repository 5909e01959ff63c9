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
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	metavalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

// ValidateReservationArgs checks ReservationArgs after defaulting: candidate-node settings as kube-scheduler's
// DefaultPreemption wants them, at least one controller worker, positive GC duration and intervals, and
// distinct, well-formed ignored resource names, and well-formed keys in preAllocationConfig.
func ValidateReservationArgs(path *field.Path, args *config.ReservationArgs) field.ErrorList {
	var errs field.ErrorList
	if p := args.MinCandidateNodesPercentage; p < 0 || p > 100 {
		errs = append(errs, field.Invalid(path.Child("minCandidateNodesPercentage"), p, "must be in the range [0, 100]"))
	}
	if a := args.MinCandidateNodesAbsolute; a < 0 {
		errs = append(errs, field.Invalid(path.Child("minCandidateNodesAbsolute"), a, "must not be negative"))
	}
	if args.MinCandidateNodesPercentage == 0 && args.MinCandidateNodesAbsolute == 0 {
		errs = append(errs, field.Invalid(path.Child("minCandidateNodesAbsolute"), 0, "must not be 0 when minCandidateNodesPercentage is 0"))
	}
	if args.ControllerWorkers < 1 {
		errs = append(errs, field.Invalid(path.Child("controllerWorkers"), args.ControllerWorkers, "must be at least 1"))
	}
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"gcDurationSeconds", args.GCDurationSeconds},
		{"gcIntervalSeconds", args.GCIntervalSeconds},
		{"resyncIntervalSeconds", args.ResyncIntervalSeconds},
	} {
		if f.value <= 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, "must be greater than 0"))
		}
	}
	seen := sets.New[string]()
	for i, r := range args.IgnoredResources {
		p := path.Child("ignoredResources").Index(i)
		switch {
		case seen.Has(string(r)):
			errs = append(errs, field.Duplicate(p, r))
		case len(metavalidation.IsQualifiedName(string(r))) > 0:
			errs = append(errs, field.Invalid(p, r, "must be a resource name such as cpu or example.com/gpu"))
		}
		seen.Insert(string(r))
	}
	if c := args.PreAllocationConfig; c != nil {
		p := path.Child("preAllocationConfig")
		for _, f := range []struct {
			name, value string
		}{
			{"clusterLabelKey", c.ClusterLabelKey},
			{"clusterPriorityAnnotationKey", c.ClusterPriorityAnnotationKey},
		} {
			if f.value == "" {
				continue
			}
			if msgs := metavalidation.IsQualifiedName(f.value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child(f.name), f.value, "must be a label or annotation key: "+strings.Join(msgs, "; ")))
			}
		}
	}
	return errs
}
