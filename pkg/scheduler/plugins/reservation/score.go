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

package reservation

import (
	"cmp"
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
)

// preScoreStateKey is the CycleState key of the pod's scoring state.
const preScoreStateKey fwk.StateKey = "PreScore" + Name

// preScoreState holds the smallest reservation order among the reservations the pod may allocate.
type preScoreState struct {
	minOrder int64
}

// Clone returns the state itself: it is immutable.
func (s *preScoreState) Clone() fwk.StateData { return s }

// PreScore returns Skip for pods that may allocate no reservation, so that only nodes matter to them; the
// reserve pod of a pre-allocating Reservation is scored.
func (p *Plugin) PreScore(_ context.Context, cs fwk.CycleState, _ *corev1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	s, err := getPreFilterState(cs)
	if err == nil && s.pre != nil {
		return nil
	}
	if err != nil || s.matched.Len() == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	var minOrder int64
	for _, r := range s.snap.All() {
		if s.matched.Has(r.UID) && r.Order > 0 && (minOrder == 0 || r.Order < minOrder) {
			minOrder = r.Order
		}
	}
	cs.Write(preScoreStateKey, &preScoreState{minOrder: minOrder})
	return nil
}

// Score prefers nodes with a reservation the pod may allocate and fits in: MaxScore for the node of the
// reservation with the smallest reservation-order label, else how allocated the best reservation on the node
// would be with the pod (at least 1); 0 for nodes without one. The reserve pod of a pre-allocating Reservation
// is scored by scorePreAllocation. It always returns Success.
func (p *Plugin) Score(_ context.Context, cs fwk.CycleState, _ *corev1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	s, err := getPreFilterState(cs)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if s.pre != nil {
		return s.scorePreAllocation(ni), nil
	}
	var minOrder int64
	if data, err := cs.Read(preScoreStateKey); err == nil {
		if ps, ok := data.(*preScoreState); ok {
			minOrder = ps.minOrder
		}
	}
	best := s.choose(s.fitting(ni))
	if best == nil {
		return 0, nil
	}
	if best.Order > 0 && best.Order == minOrder {
		return fwk.MaxScore, nil
	}
	return max(1, s.mostAllocated(best)), nil
}

// ScoreExtensions returns nil: scores are already in [0, MaxScore].
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

// mostAllocated is the mean, over the reservation's resources, of the percentage allocated once the pod
// allocates it.
func (s *preFilterState) mostAllocated(r *cache.Info) int64 {
	if len(r.Allocatable) == 0 {
		return 0
	}
	var sum int64
	for name, total := range r.Allocatable {
		used := r.Allocated[name] + min(s.requests[name], r.Unallocated(name))
		sum += used * fwk.MaxScore / total
	}
	return sum / int64(len(r.Allocatable))
}

// choose picks the reservation the pod allocates among candidates: the smallest positive reservation order
// first, then the most allocated, then by name. It returns nil when there is no candidate.
func (s *preFilterState) choose(candidates []*cache.Info) *cache.Info {
	if len(candidates) == 0 {
		return nil
	}
	return slices.MinFunc(candidates, func(a, b *cache.Info) int {
		return cmp.Or(
			compareOrder(a.Order, b.Order),
			cmp.Compare(s.mostAllocated(b), s.mostAllocated(a)),
			cmp.Compare(a.Name, b.Name),
		)
	})
}

// compareOrder orders reservation orders with 0 (none) last.
func compareOrder(a, b int64) int {
	switch {
	case a == b:
		return 0
	case a == 0:
		return 1
	case b == 0:
		return -1
	}
	return cmp.Compare(a, b)
}
