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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

func TestValidateReservationArgs(t *testing.T) {
	path := field.NewPath("args")
	valid := func() *config.ReservationArgs {
		return &config.ReservationArgs{
			MinCandidateNodesPercentage: 10,
			MinCandidateNodesAbsolute:   100,
			ControllerWorkers:           1,
			GCDurationSeconds:           86400,
			GCIntervalSeconds:           60,
			ResyncIntervalSeconds:       60,
		}
	}
	tests := map[string]struct {
		edit func(*config.ReservationArgs)
		want field.ErrorList
	}{
		"defaults are valid": {},
		"other values are valid": {
			edit: func(a *config.ReservationArgs) {
				a.EnablePreemption = true
				a.MinCandidateNodesPercentage = 0
				a.ControllerWorkers = 4
				a.IgnoredResources = []corev1.ResourceName{"cpu", "example.com/gpu"}
				a.PreAllocationConfig = &config.PreAllocationConfig{
					ClusterLabelKey:              "pod.koordinator.sh/is-pre-allocatable",
					ClusterPriorityAnnotationKey: "pod.koordinator.sh/pre-allocatable-priority",
				}
			},
		},
		"empty pre-allocation keys are valid": {
			edit: func(a *config.ReservationArgs) { a.PreAllocationConfig = &config.PreAllocationConfig{} },
		},
		"malformed pre-allocation keys": {
			edit: func(a *config.ReservationArgs) {
				a.PreAllocationConfig = &config.PreAllocationConfig{ClusterLabelKey: "not a key", ClusterPriorityAnnotationKey: "/x"}
			},
			want: field.ErrorList{
				field.Invalid(path.Child("preAllocationConfig", "clusterLabelKey"), nil, ""),
				field.Invalid(path.Child("preAllocationConfig", "clusterPriorityAnnotationKey"), nil, ""),
			},
		},
		"pre-allocation cluster mode and preference are valid": {
			edit: func(a *config.ReservationArgs) {
				a.PreAllocationConfig = &config.PreAllocationConfig{EnableClusterMode: true, PreferNoPreAllocatedPods: true}
			},
		},
		"candidate nodes out of range": {
			edit: func(a *config.ReservationArgs) {
				a.MinCandidateNodesPercentage = 101
				a.MinCandidateNodesAbsolute = -1
			},
			want: field.ErrorList{
				field.Invalid(path.Child("minCandidateNodesPercentage"), nil, ""),
				field.Invalid(path.Child("minCandidateNodesAbsolute"), nil, ""),
			},
		},
		"candidate nodes both zero": {
			edit: func(a *config.ReservationArgs) { a.MinCandidateNodesPercentage, a.MinCandidateNodesAbsolute = 0, 0 },
			want: field.ErrorList{field.Invalid(path.Child("minCandidateNodesAbsolute"), nil, "")},
		},
		"no worker and zero durations": {
			edit: func(a *config.ReservationArgs) {
				a.ControllerWorkers = 0
				a.GCDurationSeconds = 0
				a.GCIntervalSeconds = -1
				a.ResyncIntervalSeconds = 0
			},
			want: field.ErrorList{
				field.Invalid(path.Child("controllerWorkers"), nil, ""),
				field.Invalid(path.Child("gcDurationSeconds"), nil, ""),
				field.Invalid(path.Child("gcIntervalSeconds"), nil, ""),
				field.Invalid(path.Child("resyncIntervalSeconds"), nil, ""),
			},
		},
		"bad and duplicate ignored resources": {
			edit: func(a *config.ReservationArgs) {
				a.IgnoredResources = []corev1.ResourceName{"cpu", "not a name", "cpu"}
			},
			want: field.ErrorList{
				field.Invalid(path.Child("ignoredResources").Index(1), nil, ""),
				field.Duplicate(path.Child("ignoredResources").Index(2), nil),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := valid()
			if tc.edit != nil {
				tc.edit(args)
			}
			got := ValidateReservationArgs(path, args)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidateReservationArgs (-want,+got):\n%s", diff)
			}
		})
	}
}
