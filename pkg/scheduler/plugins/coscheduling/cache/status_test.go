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

package cache

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestPodGroupStatus(t *testing.T) {
	start := metav1.NewTime(utiltesting.Now)
	earlier := metav1.NewTime(utiltesting.Now.Add(-time.Hour))
	tests := map[string]struct {
		status v1alpha1.PodGroupStatus
		counts Counts
		want   v1alpha1.PodGroupStatus
	}{
		"no members": {
			want: v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupPending},
		},
		"too few members": {
			counts: Counts{Members: 2},
			want:   v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupPending},
		},
		"enough members": {
			counts: Counts{Members: 3},
			want:   v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupPreScheduling, ScheduleStartTime: start},
		},
		"some bound": {
			status: v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupPreScheduling, ScheduleStartTime: earlier},
			counts: Counts{Members: 3, Bound: 2},
			want:   v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupScheduling, Scheduled: 2, ScheduleStartTime: earlier},
		},
		"all bound": {
			counts: Counts{Members: 3, Bound: 3, Running: 1},
			want:   v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupScheduled, Scheduled: 3, Running: 1, ScheduleStartTime: start},
		},
		"running, with succeeded members counted": {
			status: v1alpha1.PodGroupStatus{Succeeded: 1, OccupiedBy: "job-uid"},
			counts: Counts{Members: 2, Bound: 2, Running: 2},
			want: v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupRunning, Scheduled: 2, Running: 2, Succeeded: 1,
				OccupiedBy: "job-uid", ScheduleStartTime: start},
		},
		"finished is final": {
			status: v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupFinished, Succeeded: 3},
			want:   v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupFinished, Succeeded: 3},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pg := utiltesting.MakePodGroup("train", 3).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()
			pg.Status = tc.status
			got := PodGroupStatus(pg, tc.counts, start)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodGroupStatus() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestCounts(t *testing.T) {
	cache, _ := newTestCache()
	running := utiltesting.MakePod("a").PodGroup("train").Node("node-1").Obj()
	running.Status.Phase = corev1.PodRunning
	cache.AddOrUpdatePod(running)
	cache.AddOrUpdatePod(utiltesting.MakePod("b").PodGroup("train").Node("node-1").Obj())
	cache.AddOrUpdatePod(utiltesting.MakePod("c").PodGroup("train").Obj())
	got, ok := cache.Counts(gid("train"))
	if diff := cmp.Diff(Counts{Members: 3, Bound: 2, Running: 1}, got); !ok || diff != "" {
		t.Errorf("Counts() ok=%v (-want,+got):\n%s", ok, diff)
	}
	if _, ok := cache.Counts(gid("none")); ok {
		t.Errorf("Counts() of an unknown gang is known")
	}
}
