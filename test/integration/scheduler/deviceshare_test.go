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

package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// TestDeviceShare: on a node of 2 GPUs (one per PCIe switch) and 2 RDMA NICs, two pods of half a GPU share
// one GPU and a third goes to the other; a whole-GPU pod waits until a GPU is wholly free and never shares;
// a new scheduler rebuilds the allocations from the pods; a joint GPU + RDMA pod gets the NIC on its GPU's
// switch; a GPU turned unhealthy in the Device gets no new pod.
func TestDeviceShare(t *testing.T) {
	f := newFixture(t)
	stop := startScheduler(t, requestsOnly)
	// The node's allocatable is twice its devices', so that NodeResourcesFit never refuses first: DeviceShare's
	// own accounting of the devices decides.
	node := f.node("a", "0", 0, corev1.ResourceList{
		extension.ResourceGPUCore: resource.MustParse("400"), extension.ResourceGPUMemoryRatio: resource.MustParse("400"),
		extension.ResourceGPUMemory: resource.MustParse("32Gi"), extension.ResourceGPUShared: resource.MustParse("200"),
		extension.ResourceRDMA: resource.MustParse("200"),
	})
	f.device(node, 2, 2)
	gpuPod := func(name string, pct int, annotations map[string]string, extra ...corev1.ResourceName) *corev1.Pod {
		requests := corev1.ResourceList{
			extension.ResourceGPUCore: *resource.NewQuantity(int64(pct), resource.DecimalSI), extension.ResourceGPUMemoryRatio: *resource.NewQuantity(int64(pct), resource.DecimalSI),
			extension.ResourceGPUShared: resource.MustParse("1"),
		}
		for _, r := range extra {
			requests[r] = resource.MustParse("1")
		}
		return f.pod(name, requests, func(p *corev1.Pod) { p.Annotations = annotations })
	}

	s1 := f.devicesOf(gpuPod("s1", 50, nil))
	s2 := f.devicesOf(gpuPod("s2", 50, nil))
	if s1 != "gpu:0" || s2 != "gpu:0" {
		t.Errorf("two pods of half a GPU got %s and %s, want both GPU 0", s1, s2)
	}
	if s3 := f.devicesOf(gpuPod("s3", 60, nil)); s3 != "gpu:1" {
		t.Errorf("a pod of 60%% got %s, want GPU 1 (GPU 0 is full)", s3)
	}
	whole := gpuPod("whole", 100, nil)
	msg := f.unschedulable(whole)
	for _, want := range []string{"no gpu device on the node has 100 gpu-core, 100 gpu-memory-ratio free (2 devices)", "has 40 gpu-core"} {
		if !strings.Contains(msg, want) {
			t.Errorf("PodScheduled message %q does not say %q", msg, want)
		}
	}
	if err := env.Client.Delete(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: "s3"}}, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	if got := f.devicesOf(whole); got != "gpu:1" {
		t.Errorf("the whole-GPU pod got %s once GPU 1 was free, want gpu:1", got)
	}

	// A new scheduler sees GPU 0 full and GPU 1 whole from the pods' annotations.
	stop()
	startScheduler(t, requestsOnly)
	if msg := f.unschedulable(gpuPod("after", 10, nil)); !strings.Contains(msg, "no gpu device on the node has 10 gpu-core, 10 gpu-memory-ratio free") {
		t.Errorf("after a restart, a pod of 10%% of a GPU: %q, want refused for lack of GPU", msg)
	}
}

// TestDeviceShareJointAndHealth: a joint GPU + RDMA pod gets the NIC on its GPU's PCIe switch, and a GPU the
// Device marks unhealthy gets no new pod.
func TestDeviceShareJointAndHealth(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	node := f.node("b", "0", 0, corev1.ResourceList{
		extension.ResourceGPUCore: resource.MustParse("200"), extension.ResourceGPUMemoryRatio: resource.MustParse("200"),
		extension.ResourceGPUMemory: resource.MustParse("32Gi"), extension.ResourceGPUShared: resource.MustParse("200"),
		extension.ResourceRDMA: resource.MustParse("200"),
	})
	device := f.device(node, 2, 2)
	// GPU 0 is taken by half a pod, so the whole GPU is GPU 1, on the second switch.
	half := corev1.ResourceList{extension.ResourceGPUCore: resource.MustParse("50"), extension.ResourceGPUMemoryRatio: resource.MustParse("50"), extension.ResourceGPUShared: resource.MustParse("1")}
	f.devicesOf(f.pod("half", half, nil))
	joint := f.pod("joint", corev1.ResourceList{
		extension.ResourceGPUCore: resource.MustParse("100"), extension.ResourceGPUMemoryRatio: resource.MustParse("100"), extension.ResourceGPUShared: resource.MustParse("1"),
		extension.ResourceRDMA: resource.MustParse("1"),
	}, func(p *corev1.Pod) {
		p.Annotations = map[string]string{extension.AnnotationDeviceJointAllocate: `{"deviceTypes":["gpu","rdma"],"requiredScope":"SamePCIe"}`}
	})
	if got := f.devicesOf(joint); got != "gpu:1 rdma:1" {
		t.Errorf("the joint pod got %s, want GPU 1 and the NIC on its switch, rdma 1", got)
	}

	// GPU 0 turns unhealthy: the free half of it is no longer given.
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(device), device); err != nil {
		t.Fatal(err)
	}
	device.Spec.Devices[0].Health = false
	if err := env.Client.Update(t.Context(), device); err != nil {
		t.Fatal(err)
	}
	if msg := f.unschedulable(f.pod("late", half, nil)); !strings.Contains(msg, "1 unhealthy") {
		t.Errorf("a pod of half a GPU once GPU 0 is unhealthy: %q, want refused naming the unhealthy GPU", msg)
	}
}

// device creates the Device of node as koordlet reports it: gpus GPUs of 16Gi and nics RDMA NICs, GPU i and
// NIC i on PCIe switch i (pci0000:0i), NUMA node i. It is deleted when the test ends.
func (f *fixture) device(node string, gpus, nics int) *schedulingv1alpha1.Device {
	f.t.Helper()
	d := &schedulingv1alpha1.Device{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for i := range gpus {
		d.Spec.Devices = append(d.Spec.Devices, schedulingv1alpha1.DeviceInfo{Type: schedulingv1alpha1.GPU, UUID: fmt.Sprintf("GPU-%d", i), Minor: ptr.To(int32(i)), Health: true,
			Resources: corev1.ResourceList{extension.ResourceGPUCore: resource.MustParse("100"), extension.ResourceGPUMemory: resource.MustParse("16Gi"),
				extension.ResourceGPUMemoryRatio: resource.MustParse("100")},
			Topology: &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: int32(i), PCIEID: fmt.Sprintf("pci0000:0%d", i)}})
	}
	for i := range nics {
		d.Spec.Devices = append(d.Spec.Devices, schedulingv1alpha1.DeviceInfo{Type: schedulingv1alpha1.RDMA, UUID: fmt.Sprintf("0000:1%d:00.0", i), Minor: ptr.To(int32(i)), Health: true,
			Resources: corev1.ResourceList{extension.ResourceRDMA: resource.MustParse("100")},
			Topology:  &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: int32(i), PCIEID: fmt.Sprintf("pci0000:0%d", i)}})
	}
	if err := env.Client.Create(f.t.Context(), d); err != nil {
		f.t.Fatalf("create Device %s: %v", node, err)
	}
	f.t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), d); client.IgnoreNotFound(err) != nil {
			f.t.Errorf("delete Device %s: %v", node, err)
		}
	})
	return d
}

// devicesOf waits until the pod is bound and returns the devices its device-allocated annotation gives it,
// as "gpu:0 rdma:1".
func (f *fixture) devicesOf(p *corev1.Pod) string {
	f.t.Helper()
	f.boundNode(p)
	got := &corev1.Pod{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(p), got); err != nil {
		f.t.Fatal(err)
	}
	alloc, err := extension.GetDeviceAllocations(got.Annotations)
	if err != nil || alloc == nil {
		f.t.Fatalf("pod %s has no device-allocated (%v): annotations %v", p.Name, err, got.Annotations)
	}
	var parts []string
	for _, typ := range []extension.DeviceType{extension.DeviceTypeGPU, extension.DeviceTypeRDMA} {
		for _, a := range alloc[typ] {
			s := fmt.Sprintf("%s:%d", typ, a.Minor)
			for _, vf := range a.VirtualFunctions() {
				s += "/" + vf.BusID
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// TestDeviceShareNUMAAlignment: a SingleNUMANode LSR pod with a whole GPU gets its CPUs on the NUMA node of a
// free GPU: GPU 0 (NUMA node 0) is taken, so NUMA node 1 and GPU 1, although NUMA node 0 rates as well.
func TestDeviceShareNUMAAlignment(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	node := f.node("c", "0", 0, corev1.ResourceList{
		corev1.ResourceCPU:        resource.MustParse("16"),
		extension.ResourceGPUCore: resource.MustParse("400"), extension.ResourceGPUMemoryRatio: resource.MustParse("400"),
		extension.ResourceGPUMemory: resource.MustParse("64Gi"), extension.ResourceGPUShared: resource.MustParse("400"),
	})
	f.topology(node, 2, 4, 2)
	f.device(node, 2, 0)
	gpu := corev1.ResourceList{extension.ResourceGPUCore: resource.MustParse("100"), extension.ResourceGPUMemoryRatio: resource.MustParse("100"),
		extension.ResourceGPUShared: resource.MustParse("1")}
	if got := f.devicesOf(f.pod("plain", gpu, nil)); got != "gpu:0" {
		t.Fatalf("a whole-GPU pod without NUMA policy got %s, want GPU 0", got)
	}
	requests := gpu.DeepCopy()
	requests[corev1.ResourceCPU] = resource.MustParse("2")
	requests[corev1.ResourceMemory] = resource.MustParse("1Gi")
	aligned := f.pod("aligned", requests, func(p *corev1.Pod) {
		p.Labels = map[string]string{extension.LabelPodQoS: string(extension.QoSLSR)}
		p.Annotations = map[string]string{extension.AnnotationNUMATopologySpec: `{"numaTopologyPolicy":"SingleNUMANode"}`}
	})
	if got := f.devicesOf(aligned); got != "gpu:1" {
		t.Errorf("the SingleNUMANode pod got %s, want GPU 1", got)
	}
	got := &corev1.Pod{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(aligned), got); err != nil {
		t.Fatal(err)
	}
	status, err := extension.GetResourceStatus(got.Annotations)
	if err != nil || status == nil || len(status.NUMANodeResources) != 1 || status.NUMANodeResources[0].Node != 1 {
		t.Errorf("the SingleNUMANode pod's resource-status %+v (%v), want its CPUs and memory on NUMA node 1, its GPU's", status, err)
	}
}

// TestDeviceShareReservation: a Reservation of a whole-GPU template holds a GPU (written on the Reservation at
// PreBind); a stranger gets the other GPU, and the owner gets the held one.
func TestDeviceShareReservation(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	node := f.node("d", "0", 0, corev1.ResourceList{
		extension.ResourceGPUCore: resource.MustParse("400"), extension.ResourceGPUMemoryRatio: resource.MustParse("400"),
		extension.ResourceGPUMemory: resource.MustParse("64Gi"), extension.ResourceGPUShared: resource.MustParse("400"),
	})
	f.device(node, 2, 0)
	gpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), extension.ResourceGPUCore: resource.MustParse("100"),
		extension.ResourceGPUMemoryRatio: resource.MustParse("100"), extension.ResourceGPUShared: resource.MustParse("1")}
	name := f.reservationWith("gpu", "1", func(r *schedulingv1alpha1.Reservation) {
		r.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpu, Limits: gpu}
	})
	f.eventuallyReservation(name, schedulingv1alpha1.ReservationAvailable, node)
	var held int32 = -1
	f.eventually("the Reservation has no device-allocated", func(ctx context.Context) (bool, error) {
		r := &schedulingv1alpha1.Reservation{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, r); err != nil {
			return false, err
		}
		alloc, err := extension.GetDeviceAllocations(r.Annotations)
		if err != nil || len(alloc[extension.DeviceTypeGPU]) != 1 {
			return false, nil
		}
		held = alloc[extension.DeviceTypeGPU][0].Minor
		return true, nil
	})
	stranger := f.devicesOf(f.pod("stranger", gpu, nil))
	if stranger == fmt.Sprintf("gpu:%d", held) {
		t.Errorf("a stranger got %s, which the Reservation holds", stranger)
	}
	owner := f.devicesOf(f.pod("owner", gpu, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "owner"} }))
	if want := fmt.Sprintf("gpu:%d", held); owner != want {
		t.Errorf("the owner got %s, want the Reservation's %s", owner, want)
	}
}
