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

package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestSetDefaultsReservationArgs(t *testing.T) {
	tests := map[string]struct {
		in   *ReservationArgs
		want *ReservationArgs
	}{
		"empty": {
			in: &ReservationArgs{},
			want: &ReservationArgs{
				EnablePreemption:            ptr.To(false),
				MinCandidateNodesPercentage: ptr.To[int32](10),
				MinCandidateNodesAbsolute:   ptr.To[int32](100),
				ControllerWorkers:           ptr.To[int32](1),
				GCDurationSeconds:           86400,
				GCIntervalSeconds:           ptr.To[int64](60),
				ResyncIntervalSeconds:       ptr.To[int64](60),
			},
		},
		"set values stay": {
			in: &ReservationArgs{
				EnablePreemption:            ptr.To(true),
				MinCandidateNodesPercentage: ptr.To[int32](0),
				MinCandidateNodesAbsolute:   ptr.To[int32](5),
				ControllerWorkers:           ptr.To[int32](3),
				GCDurationSeconds:           10,
				GCIntervalSeconds:           ptr.To[int64](1),
				ResyncIntervalSeconds:       ptr.To[int64](2),
				IgnoredResources:            []corev1.ResourceName{"example.com/gpu"},
			},
			want: &ReservationArgs{
				EnablePreemption:            ptr.To(true),
				MinCandidateNodesPercentage: ptr.To[int32](0),
				MinCandidateNodesAbsolute:   ptr.To[int32](5),
				ControllerWorkers:           ptr.To[int32](3),
				GCDurationSeconds:           10,
				GCIntervalSeconds:           ptr.To[int64](1),
				ResyncIntervalSeconds:       ptr.To[int64](2),
				IgnoredResources:            []corev1.ResourceName{"example.com/gpu"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			SetDefaults_ReservationArgs(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("SetDefaults_ReservationArgs (-want,+got):\n%s", diff)
			}
		})
	}
}
