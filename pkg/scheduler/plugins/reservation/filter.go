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
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// preFilterStateKey is the CycleState key of the pod's state.
const preFilterStateKey fwk.StateKey = "PreFilter" + Name

// preFilterState is what PreFilter learnt about the pod. It is never changed after PreFilter.
type preFilterState struct {
	snap     *cache.Snapshot
	requests quantity.Amounts
	// names are the resources of requests, sorted.
	names    []corev1.ResourceName
	affinity *affinity
	// matched holds the reservations the pod may allocate.
	matched sets.Set[types.UID]
	// pre is set for the reserve pod of a pre-allocating Reservation; requests are then its template's.
	pre *preAllocation
}

// Clone returns the state itself: it is immutable.
func (s *preFilterState) Clone() fwk.StateData { return s }

func getPreFilterState(cs fwk.CycleState) (*preFilterState, error) {
	data, err := cs.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("read %q from cycle state: %w", preFilterStateKey, err)
	}
	s, ok := data.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%q in cycle state has type %T", preFilterStateKey, data)
	}
	return s, nil
}

// PreFilter finds the reservations the pod may allocate. It returns Skip when no reservation is placed (and
// the pod has no reservation affinity), the nodes of the matching reservations for a pod with a
// reservation-affinity annotation, and UnschedulableAndUnresolvable when that annotation is malformed or
// matches no Available reservation, or when the pod is the reserve pod of a reservation already placed.
func (p *Plugin) PreFilter(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	logger := klog.FromContext(ctx)
	requests := p.cache.PodRequests(pod)
	s := &preFilterState{snap: p.cache.Snapshot(), requests: requests, names: slices.Sorted(maps.Keys(requests)), matched: sets.New[types.UID]()}
	switch {
	case extension.IsReservePod(pod):
		// A reserve pod never allocates another reservation.
		if node, ok := p.cache.Placed(types.UID(pod.Labels[extension.LabelReservationUID])); ok {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("reservation %q is already placed on node %q", pod.Labels[extension.LabelReservationName], node))
		}
		if isPreAllocating(pod) {
			pa, requests, status := p.newPreAllocation(logger, pod)
			if !status.IsSuccess() {
				return nil, status
			}
			s.pre, s.requests, s.names = pa, requests, requests.Names()
			cs.Write(preFilterStateKey, s)
			if pa.required {
				return &fwk.PreFilterResult{NodeNames: sets.KeySet(pa.candidates)}, nil
			}
			return nil, nil
		}
	case extension.IsReservationIgnored(pod):
		// The pod ignores reservations: it may not use any, and their held resources stay held.
	default:
		a, err := newAffinity(pod)
		if err != nil {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
		}
		s.affinity = a
		nodes := sets.New[string]()
		for _, r := range s.snap.All() {
			if matchesPod(logger, r, pod, a) {
				s.matched.Insert(r.UID)
				nodes.Insert(r.Node)
			}
		}
		if a != nil {
			if nodes.Len() == 0 {
				return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("no Available reservation matches the pod's %s (%d Available reservations checked)", extension.AnnotationReservationAffinity, len(s.snap.All())))
			}
			cs.Write(preFilterStateKey, s)
			return &fwk.PreFilterResult{NodeNames: nodes}, nil
		}
	}
	cs.Write(preFilterStateKey, s)
	if len(s.snap.All()) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

// PreFilterExtensions returns nil: the reservations a pod may use do not depend on other pods.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects the node (Unschedulable) when the pod does not fit in the node's free resources minus what
// the reservations on the node that the pod may not use hold; the reasons name the resource, the numbers and
// the reservations. A pod with a reservation affinity must fit in one of its matching reservations.
func (p *Plugin) Filter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo) *fwk.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if s.pre != nil {
		return s.filterPreAllocation(ni)
	}
	resvs := s.snap.OnNode(ni.Node().Name)
	if len(resvs) == 0 {
		if s.affinity != nil {
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "no reservation on the node matches the pod's "+extension.AnnotationReservationAffinity)
		}
		return nil
	}
	var reasons []string
	for _, c := range resvs {
		if !s.matched.Has(c.UID) {
			continue
		}
		reason := s.misfit(ni, resvs, c)
		if reason == "" {
			return nil
		}
		reasons = append(reasons, reason)
	}
	if s.affinity != nil {
		if len(reasons) == 0 {
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "no reservation on the node matches the pod's "+extension.AnnotationReservationAffinity)
		}
		return fwk.NewStatus(fwk.Unschedulable, reasons...)
	}
	reason := s.misfit(ni, resvs, nil)
	if reason == "" {
		return nil
	}
	return fwk.NewStatus(fwk.Unschedulable, append(reasons, reason)...)
}

// fitting returns the reservations on the node that the pod may allocate and fits in.
func (s *preFilterState) fitting(ni fwk.NodeInfo) []*cache.Info {
	resvs := s.snap.OnNode(ni.Node().Name)
	var out []*cache.Info
	for _, c := range resvs {
		if s.matched.Has(c.UID) && s.misfit(ni, resvs, c) == "" {
			out = append(out, c)
		}
	}
	return out
}

// misfit returns why the pod does not fit on the node when it allocates the reservation use (nil: none), or
// "" when it fits. The resources held by every other reservation on the node are not free; with the
// Restricted policy, what the pod requests of a resource use reserves must come from use alone.
func (s *preFilterState) misfit(ni fwk.NodeInfo, resvs []*cache.Info, use *cache.Info) string {
	for _, name := range s.names {
		req := s.requests[name]
		if use != nil && use.Policy == schedv1alpha1.ReservationAllocatePolicyRestricted {
			if _, reserved := use.Allocatable[name]; reserved && req > use.Unallocated(name) {
				return fmt.Sprintf("reservation %q (Restricted) %s: %s unallocated, pod requests %s", use.Name, name, quantity.Format(name, use.Unallocated(name)), quantity.Format(name, req))
			}
		}
		var held int64
		for _, r := range resvs {
			if r != use {
				held += r.Held[name]
			}
		}
		if held == 0 {
			continue
		}
		if f := free(ni, name); req > f-held {
			return fmt.Sprintf("node %s: %s free, %s held by %s, pod requests %s", name, quantity.Format(name, max(f, 0)), quantity.Format(name, held), holders(resvs, use, name), quantity.Format(name, req))
		}
	}
	return ""
}

// holders names the reservations other than use that hold some of resource name.
func holders(resvs []*cache.Info, use *cache.Info, name corev1.ResourceName) string {
	var names []string
	for _, r := range resvs {
		if r != use && r.Held[name] > 0 {
			names = append(names, fmt.Sprintf("%q", r.Name))
		}
	}
	if len(names) == 1 {
		return "reservation " + names[0]
	}
	return "reservations " + strings.Join(names, ", ")
}
