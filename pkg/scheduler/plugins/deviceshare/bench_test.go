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
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/deviceshare/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// BenchmarkAllocate is the work of one Filter (and Reserve) on a node of 8 GPUs of 80Gi on 4 PCIe switches
// and 4 RDMA NICs of 8 VFs, half the GPUs partly used: a part of a GPU, and 2 whole GPUs with a NIC VF on
// their switch.
func BenchmarkAllocate(b *testing.B) {
	d := &schedulingv1alpha1.Device{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	for i := range 8 {
		d.Spec.Devices = append(d.Spec.Devices, schedulingv1alpha1.DeviceInfo{Type: "gpu", UUID: fmt.Sprint(i), Minor: ptr.To(int32(i)), Health: true,
			Resources: corev1.ResourceList{extension.ResourceGPUCore: resource.MustParse("100"), extension.ResourceGPUMemory: resource.MustParse("80Gi"),
				extension.ResourceGPUMemoryRatio: resource.MustParse("100")},
			Topology: &schedulingv1alpha1.DeviceTopology{NodeID: int32(i / 4), PCIEID: fmt.Sprintf("pci0000:%02x", i/2)}})
	}
	for i := range 4 {
		var vfs []schedulingv1alpha1.VirtualFunction
		for v := range 8 {
			vfs = append(vfs, schedulingv1alpha1.VirtualFunction{Minor: int32(v), BusID: fmt.Sprintf("0000:%02x:00.%d", 0x80+i, v)})
		}
		d.Spec.Devices = append(d.Spec.Devices, schedulingv1alpha1.DeviceInfo{Type: "rdma", UUID: fmt.Sprint(i), Minor: ptr.To(int32(i)), Health: true,
			Resources: corev1.ResourceList{extension.ResourceRDMA: resource.MustParse("100")},
			Topology:  &schedulingv1alpha1.DeviceTopology{NodeID: int32(i / 2), PCIEID: fmt.Sprintf("pci0000:%02x", i)},
			VFGroups:  []schedulingv1alpha1.VirtualFunctionGroup{{VFs: vfs}}})
	}
	n, err := cache.NodeFromDevice(d)
	if err != nil {
		b.Fatal(err)
	}
	u := &cache.Usage{Used: map[extension.DeviceType]map[int]quantity.Amounts{"gpu": {}}, VFs: map[string]bool{"0000:80:00.0": true}}
	for _, i := range []int{0, 2, 4, 6} {
		u.Used["gpu"][i] = quantity.Amounts{extension.ResourceGPUCore: 30, extension.ResourceGPUMemoryRatio: 30, extension.ResourceGPUMemory: 24 << 30}
	}
	r := newRules(testArgs())
	for name, pod := range map[string]*corev1.Pod{
		"part":  podOf(nil, core+"=50", ratio+"=50", shared+"=1"),
		"joint": podOf(map[string]string{extension.AnnotationDeviceJointAllocate: `{"deviceTypes":["gpu","rdma"],"requiredScope":"SamePCIe"}`, extension.AnnotationDeviceAllocateHint: `{"rdma":{"vfSelector":{}}}`}, core+"=200", ratio+"=200", shared+"=2", "koordinator.sh/rdma=1"),
	} {
		req, err := requestOf(pod)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := r.allocate(n, u, req, nil, grant{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPodWithoutDevices is all the plugin does for a pod that asks for no device in a scheduling cycle:
// PreFilter and PreScore, which both Skip, so that kube-scheduler calls neither Filter nor Score on any node.
func BenchmarkPodWithoutDevices(b *testing.B) {
	pod := podOf(nil, "cpu=2", "memory=4Gi")
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "sidecar", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}})
	p := &Plugin{args: testArgs()}
	ctx := b.Context()
	for b.Loop() {
		plugintest.ExpectSkipped(ctx, b, p, pod)
	}
}
