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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
)

// reserveStateKey is the CycleState key of the reservation the pod allocates.
const reserveStateKey fwk.StateKey = "Reserve" + Name

// reserveState is the reservation Reserve chose for the pod; for the reserve pod of a pre-allocating
// Reservation, the Reservation and the running pods it takes.
type reserveState struct {
	uid  types.UID
	name string
	// preAllocated are the running pods a pre-allocating Reservation takes; assumed are those of them whose
	// allocation Reserve recorded (the others allocated the Reservation already).
	preAllocated []*corev1.Pod
	assumed      []types.UID
}

// Clone returns the state itself: it is immutable.
func (s *reserveState) Clone() fwk.StateData { return s }

func getReserveState(cs fwk.CycleState) *reserveState {
	data, err := cs.Read(reserveStateKey)
	if err != nil {
		return nil
	}
	s, _ := data.(*reserveState)
	return s
}

// Reserve chooses the reservation on the node that the pod allocates (smallest reservation order, then most
// allocated) and records the allocation in the cache at once, so the next cycle sees it. A pod that may use
// none runs on the node's free resources. For the reserve pod of a pre-allocating Reservation it records the
// running pods the Reservation takes on the node as its allocations. It returns Success, or Error when the
// node is unknown.
func (p *Plugin) Reserve(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	if extension.IsReservePod(pod) {
		return p.reservePreAllocation(ctx, cs, pod, nodeName)
	}
	s, err := getPreFilterState(cs)
	if err != nil || s.matched.Len() == 0 {
		return nil
	}
	ni, err := p.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("get node %s: %w", nodeName, err))
	}
	chosen := s.choose(s.fitting(ni))
	if chosen == nil {
		return nil
	}
	p.cache.Assume(cache.Allocation{Pod: podRef(pod), ResvUID: chosen.UID, ResvName: chosen.Name, Requests: s.requests})
	cs.Write(reserveStateKey, &reserveState{uid: chosen.UID, name: chosen.Name})
	klog.FromContext(ctx).V(3).Info("Allocated a reservation", "pod", klog.KObj(pod), "reservation", chosen.Name, "node", nodeName)
	return nil
}

// Unreserve releases the allocation Reserve recorded.
func (p *Plugin) Unreserve(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) {
	rs := getReserveState(cs)
	if rs == nil {
		return
	}
	for _, uid := range rs.assumed {
		p.cache.Forget(uid)
	}
	if _, ok := p.cache.Forget(pod.UID); ok {
		klog.FromContext(ctx).V(3).Info("Released a reservation", "pod", klog.KObj(pod), "reservation", rs.name, "node", nodeName)
	}
	cs.Delete(reserveStateKey)
}

// PreBindPreFlight returns Skip for pods that allocate no reservation.
func (p *Plugin) PreBindPreFlight(_ context.Context, cs fwk.CycleState, _ *corev1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	if getReserveState(cs) == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return &fwk.PreBindPreFlightResult{AllowParallel: true}, nil
}

// PreBind writes the reservation-allocated annotation on the pod, so that the allocation survives a scheduler
// restart: through DefaultPreBind's one patch when the profile has it (plugins.PodChanges), else itself. It
// returns Error when the patch fails; the pod is then retried and the allocation released.
func (p *Plugin) PreBind(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, _ string) *fwk.Status {
	rs := getReserveState(cs)
	if rs == nil {
		return nil
	}
	if extension.IsReservePod(pod) {
		return p.preBindPreAllocation(ctx, rs)
	}
	annotated := &metav1.ObjectMeta{}
	if err := extension.SetReservationAllocated(annotated, &extension.ReservationAllocated{Name: rs.name, UID: rs.uid}); err != nil {
		return fwk.AsStatus(err)
	}
	if plugins.PodChangesOf(cs).Annotate(annotated.Annotations) {
		return nil
	}
	if err := plugins.PatchPodMetadata(ctx, p.kube, pod, nil, annotated.Annotations); err != nil {
		return fwk.AsStatus(fmt.Errorf("annotate pod with reservation %q: %w", rs.name, err))
	}
	return nil
}

// reservePreAllocation chooses the running pods the pre-allocating Reservation of the reserve pod takes on
// the node and records them as its allocations; other reserve pods need nothing.
func (p *Plugin) reservePreAllocation(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	s, err := getPreFilterState(cs)
	if err != nil || s.pre == nil {
		return nil
	}
	ni, err := p.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("get node %s: %w", nodeName, err))
	}
	c := s.preAllocate(ni, s.snap.OnNode(nodeName))
	if c.reason != "" {
		return fwk.NewStatus(fwk.Unschedulable, c.reason)
	}
	if len(c.taken) == 0 {
		return nil
	}
	rs := &reserveState{uid: s.pre.resv.UID, name: s.pre.resv.Name}
	for _, t := range c.taken {
		rs.preAllocated = append(rs.preAllocated, t.pod)
		if uid, ok := p.cache.AllocationOf(t.pod.UID); ok && uid == rs.uid {
			continue
		}
		p.cache.Assume(cache.Allocation{Pod: podRef(t.pod), ResvUID: rs.uid, ResvName: rs.name, Requests: t.requests})
		rs.assumed = append(rs.assumed, t.pod.UID)
	}
	cs.Write(reserveStateKey, rs)
	klog.FromContext(ctx).V(2).Info("Pre-allocated running pods to a reservation", "reservation", rs.name, "node", nodeName,
		"pods", klog.KObjSlice(rs.preAllocated))
	return nil
}

// preBindPreAllocation writes the reservation-allocated annotation on every running pod the Reservation takes,
// so that they count as its owners (and keep counting after a restart). A pod that is gone, replaced or
// ending fails the cycle: the reserve pod is tried again.
func (p *Plugin) preBindPreAllocation(ctx context.Context, rs *reserveState) *fwk.Status {
	annotated := &metav1.ObjectMeta{}
	if err := extension.SetReservationAllocated(annotated, &extension.ReservationAllocated{Name: rs.name, UID: rs.uid}); err != nil {
		return fwk.AsStatus(err)
	}
	for _, taken := range rs.preAllocated {
		cur, err := p.pods.Pods(taken.Namespace).Get(taken.Name)
		if err != nil || cur.UID != taken.UID || cur.DeletionTimestamp != nil ||
			cur.Status.Phase == corev1.PodSucceeded || cur.Status.Phase == corev1.PodFailed {
			return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("pre-allocated pod %s is gone or ending", klog.KObj(taken)))
		}
		if err := plugins.PatchPodMetadata(ctx, p.kube, cur, nil, annotated.Annotations); err != nil {
			return fwk.AsStatus(fmt.Errorf("annotate pre-allocated pod %s with reservation %q: %w", klog.KObj(taken), rs.name, err))
		}
	}
	return nil
}

// Chosen returns the Reservation this plugin's Reserve gave the pod in the cycle, for plugins whose Reserve
// runs after it (NodeNUMAResource gives an owner the Reservation's CPUs).
func Chosen(cs fwk.CycleState) (types.UID, bool) {
	rs := getReserveState(cs)
	if rs == nil || rs.uid == "" || len(rs.preAllocated) > 0 {
		return "", false
	}
	return rs.uid, true
}

// Matched returns the Reservations on the node the pod may allocate and fits in, as this plugin's Filter
// decides, for plugins that give owners what a Reservation holds.
func Matched(cs fwk.CycleState, ni fwk.NodeInfo) []types.UID {
	s, err := getPreFilterState(cs)
	if err != nil || s.matched.Len() == 0 {
		return nil
	}
	var out []types.UID
	for _, r := range s.fitting(ni) {
		out = append(out, r.UID)
	}
	return out
}
