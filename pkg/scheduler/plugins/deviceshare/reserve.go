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

package deviceshare

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/deviceshare/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation"
)

// reserveStateKey keys what Reserve gave the pod.
const reserveStateKey fwk.StateKey = "Reserve" + Name

// reserved is the allocation Reserve made.
type reserved struct{ alloc extension.DeviceAllocations }

// Clone returns the state itself: it is immutable.
func (r *reserved) Clone() fwk.StateData { return r }

// Reserve gives the pod its devices on the node and records them at once, so that the next cycle sees them.
// It returns Unschedulable when the node can no longer give them (another pod took them since Filter).
func (p *Plugin) Reserve(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	s := getState(cs)
	if s == nil {
		return nil
	}
	// An owner that the Reservation plugin (whose Reserve runs first) gave a Reservation takes its devices.
	var resvs []types.UID
	chosen, owner := reservation.Chosen(cs)
	if owner {
		resvs = []types.UID{chosen}
	}
	alloc, err := p.allocationOn(pod, s.req, nodeName, p.numaOf(cs, nodeName), resvs)
	if err != nil {
		return fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	a := cache.Allocation{Node: nodeName, Devices: alloc}
	if owner {
		a.Reservation = chosen
	}
	p.cache.Assume(pod.UID, a)
	cs.Write(reserveStateKey, &reserved{alloc: alloc})
	klog.FromContext(ctx).V(3).Info("Allocated devices", "pod", klog.KObj(pod), "node", nodeName, "devices", summary(alloc))
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

// PreBind writes the allocation in the pod's scheduling.koordinator.sh/device-allocated (with DefaultPreBind
// in the profile, in its one patch), which koordlet reads and the plugin rebuilds its state from.
func (p *Plugin) PreBind(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	data, err := cs.Read(reserveStateKey)
	if err != nil {
		return nil
	}
	r, ok := data.(*reserved)
	if !ok {
		return nil
	}
	annotated := &metav1.ObjectMeta{}
	if err := extension.SetDeviceAllocations(annotated, r.alloc); err != nil {
		return fwk.AsStatus(err)
	}
	if extension.IsReservePod(pod) {
		return p.preBindReservation(ctx, pod, nodeName, r.alloc, annotated.Annotations)
	}
	if plugins.PodChangesOf(cs).Annotate(annotated.Annotations) {
		return nil
	}
	if err := plugins.PatchPodMetadata(ctx, p.handle.ClientSet(), pod, nil, annotated.Annotations); err != nil {
		return fwk.AsStatus(fmt.Errorf("write %s: %w", extension.AnnotationDeviceAllocated, err))
	}
	return nil
}

// preBindReservation writes the devices of a Reservation's reserve pod onto the Reservation (its reserve pod
// is deleted once placed) and holds them under the Reservation's UID at once, for its owners to take.
func (p *Plugin) preBindReservation(ctx context.Context, pod *corev1.Pod, nodeName string, alloc extension.DeviceAllocations, annotations map[string]string) *fwk.Status {
	name, uid := pod.Labels[extension.LabelReservationName], types.UID(pod.Labels[extension.LabelReservationUID])
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return fwk.AsStatus(err)
	}
	if _, err := p.koord.SchedulingV1alpha1().Reservations().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fwk.AsStatus(fmt.Errorf("write %s on reservation %s: %w", extension.AnnotationDeviceAllocated, name, err))
	}
	p.cache.Assume(uid, cache.Allocation{Node: nodeName, Devices: alloc, Reserves: true})
	p.cache.ForgetAssumed(pod.UID)
	return nil
}

// summary names the devices of an allocation for logs: "gpu:0,1 rdma:1".
func summary(a extension.DeviceAllocations) string {
	out := ""
	for _, t := range []extension.DeviceType{extension.DeviceTypeGPU, extension.DeviceTypeRDMA, extension.DeviceTypeFPGA} {
		if len(a[t]) == 0 {
			continue
		}
		if out != "" {
			out += " "
		}
		out += string(t) + ":"
		for i, d := range a[t] {
			if i > 0 {
				out += ","
			}
			out += fmt.Sprint(d.Minor)
		}
	}
	return out
}
