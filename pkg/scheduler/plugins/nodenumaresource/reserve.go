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

package nodenumaresource

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/numahint"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation"
)

// reserveStateKey keys what Reserve gave the pod.
const reserveStateKey fwk.StateKey = "Reserve" + Name

// reserved is the allocation Reserve made.
type reserved struct{ alloc *allocation }

// Clone returns the state itself: it is immutable.
func (r *reserved) Clone() fwk.StateData { return r }

// Reserve gives the pod its CPUs and NUMA resources on the node and records them at once, so that the next
// cycle sees them. It returns Unschedulable when the node can no longer give them (another pod took them
// since Filter).
func (p *Plugin) Reserve(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	s := getState(cs)
	if s == nil {
		return nil
	}
	ni, err := p.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("get node %s: %w", nodeName, err))
	}
	// An owner that the Reservation plugin (whose Reserve runs first) gave a Reservation takes its CPUs.
	var resvs []types.UID
	chosen, owner := reservation.Chosen(cs)
	if owner {
		resvs = []types.UID{chosen}
	}
	alloc, err := p.allocationOn(pod, s.req, ni.Node(), resvs, numahint.Get(cs))
	if err != nil {
		return fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	if alloc == nil || (alloc.cpus.IsEmpty() && len(alloc.numa) == 0) {
		return nil
	}
	a := cache.Allocation{Node: nodeName, CPUs: alloc.cpus, NUMA: alloc.numa, Exclusive: s.req.exclusive}
	if owner {
		a.Reservation = chosen
	}
	p.cache.Assume(pod.UID, a)
	cs.Write(reserveStateKey, &reserved{alloc: alloc})
	klog.FromContext(ctx).V(3).Info("Allocated CPUs", "pod", klog.KObj(pod), "node", nodeName, "cpuset", alloc.cpus.String(), "numaNodes", len(alloc.numa))
	return nil
}

// Unreserve gives back what Reserve gave.
func (p *Plugin) Unreserve(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, _ string) {
	if _, err := cs.Read(reserveStateKey); err != nil {
		return
	}
	p.cache.ForgetAssumed(pod.UID)
	if extension.IsReservePod(pod) {
		p.cache.ForgetAssumed(types.UID(pod.Labels[extension.LabelReservationUID]))
	}
	cs.Delete(reserveStateKey)
}

// PreBindPreFlight skips pods Reserve gave nothing.
func (p *Plugin) PreBindPreFlight(_ context.Context, cs fwk.CycleState, _ *corev1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	if _, err := cs.Read(reserveStateKey); err != nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return &fwk.PreBindPreFlightResult{AllowParallel: true}, nil
}

// PreBind writes the allocation in the pod's scheduling.koordinator.sh/resource-status (with DefaultPreBind
// in the profile, in its one patch), which koordlet applies and the plugin rebuilds its state from.
func (p *Plugin) PreBind(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	data, err := cs.Read(reserveStateKey)
	if err != nil {
		return nil
	}
	r, ok := data.(*reserved)
	if !ok {
		return nil
	}
	status := &extension.ResourceStatus{CPUSet: r.alloc.cpus.String()}
	ids := make([]int, 0, len(r.alloc.numa))
	for id := range r.alloc.numa {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		status.NUMANodeResources = append(status.NUMANodeResources, extension.NUMANodeResource{Node: int32(id), Resources: r.alloc.numa[id].List()})
	}
	annotated := &metav1.ObjectMeta{}
	if err := extension.SetResourceStatus(annotated, status); err != nil {
		return fwk.AsStatus(err)
	}
	if extension.IsReservePod(pod) {
		return p.preBindReservation(ctx, pod, nodeName, r.alloc, annotated.Annotations)
	}
	if plugins.PodChangesOf(cs).Annotate(annotated.Annotations) {
		return nil
	}
	if err := plugins.PatchPodMetadata(ctx, p.handle.ClientSet(), pod, nil, annotated.Annotations); err != nil {
		return fwk.AsStatus(fmt.Errorf("write %s: %w", extension.AnnotationResourceStatus, err))
	}
	return nil
}

// preBindReservation writes the CPUs of a Reservation's reserve pod onto the Reservation (its reserve pod is
// deleted once placed) and holds them under the Reservation's UID at once, for its owners to take.
func (p *Plugin) preBindReservation(ctx context.Context, pod *corev1.Pod, nodeName string, alloc *allocation, annotations map[string]string) *fwk.Status {
	name, uid := pod.Labels[extension.LabelReservationName], types.UID(pod.Labels[extension.LabelReservationUID])
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return fwk.AsStatus(err)
	}
	if _, err := p.koord.SchedulingV1alpha1().Reservations().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fwk.AsStatus(fmt.Errorf("write %s on reservation %s: %w", extension.AnnotationResourceStatus, name, err))
	}
	p.cache.Assume(uid, cache.Allocation{Node: nodeName, CPUs: alloc.cpus, NUMA: alloc.numa, Reserves: true})
	return nil
}
