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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// Counts are what the status of a PodGroup is computed from.
type Counts struct {
	// Members is the number of the gang's pods the scheduler sees (terminated pods it does not).
	Members int32
	// Bound is the number of members bound to a node.
	Bound int32
	// Running is the number of bound members in phase Running.
	Running int32
}

// Counts returns the counts of the gang's members, and whether the gang exists.
func (c *Cache) Counts(id ID) (Counts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gangs[id]
	if g == nil {
		return Counts{}, false
	}
	n := Counts{Members: int32(len(g.members)), Bound: int32(g.bound)}
	for _, m := range g.members {
		if m.state == bound && m.pod.Status.Phase == corev1.PodRunning {
			n.Running++
		}
	}
	return n, true
}

// PodGroupStatus returns the status pg should have with its members counted in n, at time now: scheduled
// and running counts, and the phase, in the order Running (running + succeeded ≥ minMember), Scheduled
// (bound ≥ minMember), Scheduling (some bound), PreScheduling (minMember pods exist), Pending. The
// scheduler does not see terminated pods, so Succeeded, Failed and OccupiedBy are kept as they are, and so
// are the final phases Finished and Failed, which only a controller watching terminated pods can set.
// ScheduleStartTime is set when the group first gets enough pods.
func PodGroupStatus(pg *v1alpha1.PodGroup, n Counts, now metav1.Time) v1alpha1.PodGroupStatus {
	st := *pg.Status.DeepCopy()
	st.Scheduled, st.Running = n.Bound, n.Running
	if st.Phase == v1alpha1.PodGroupFinished || st.Phase == v1alpha1.PodGroupFailed {
		return st
	}
	minMember := pg.Spec.MinMember
	switch {
	case n.Members == 0 && n.Bound == 0:
		st.Phase = v1alpha1.PodGroupPending
	case n.Running > 0 && n.Running+st.Succeeded >= minMember:
		st.Phase = v1alpha1.PodGroupRunning
	case n.Bound > 0 && n.Bound >= minMember:
		st.Phase = v1alpha1.PodGroupScheduled
	case n.Bound > 0:
		st.Phase = v1alpha1.PodGroupScheduling
	case n.Members >= minMember:
		st.Phase = v1alpha1.PodGroupPreScheduling
	default:
		st.Phase = v1alpha1.PodGroupPending
	}
	if st.Phase != v1alpha1.PodGroupPending && st.ScheduleStartTime.IsZero() {
		st.ScheduleStartTime = now
	}
	return st
}
