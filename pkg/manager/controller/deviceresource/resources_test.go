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

package deviceresource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

func TestResources(t *testing.T) {
	gpu := func(healthy bool, memory string) schedulingv1alpha1.DeviceInfo {
		return schedulingv1alpha1.DeviceInfo{Type: schedulingv1alpha1.GPU, Health: healthy, Resources: corev1.ResourceList{
			extension.ResourceGPUCore: resource.MustParse("100"), extension.ResourceGPUMemory: resource.MustParse(memory),
			extension.ResourceGPUMemoryRatio: resource.MustParse("100"),
		}}
	}
	rdma := func(healthy bool) schedulingv1alpha1.DeviceInfo {
		return schedulingv1alpha1.DeviceInfo{Type: schedulingv1alpha1.RDMA, Health: healthy}
	}
	device := func(labels map[string]string, devs ...schedulingv1alpha1.DeviceInfo) *schedulingv1alpha1.Device {
		return &schedulingv1alpha1.Device{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: schedulingv1alpha1.DeviceSpec{Devices: devs}}
	}
	tests := map[string]struct {
		device *schedulingv1alpha1.Device
		want   map[corev1.ResourceName]string
	}{
		"no Device":          {device: nil, want: nil},
		"no healthy devices": {device: device(nil, gpu(false, "16Gi"), rdma(false)), want: nil},
		"GPUs of two sizes, one unhealthy, and NICs": {
			device: device(nil, gpu(true, "16Gi"), gpu(true, "32Gi"), gpu(false, "80Gi"), rdma(true), rdma(true), rdma(false)),
			want: map[corev1.ResourceName]string{extension.ResourceGPU: "200", extension.ResourceGPUCore: "200", extension.ResourceGPUMemory: "48Gi",
				extension.ResourceGPUMemoryRatio: "200", extension.ResourceGPUShared: "200", extension.ResourceRDMA: "200"},
		},
		// koordinator.sh/gpu means NVIDIA GPUs, as in Koordinator.
		"another vendor": {
			device: device(map[string]string{extension.LabelGPUVendor: "amd"}, gpu(true, "64Gi")),
			want: map[corev1.ResourceName]string{extension.ResourceGPUCore: "100", extension.ResourceGPUMemory: "64Gi",
				extension.ResourceGPUMemoryRatio: "100", extension.ResourceGPUShared: "100"},
		},
		"FPGAs": {
			device: device(nil, schedulingv1alpha1.DeviceInfo{Type: schedulingv1alpha1.FPGA, Health: true,
				Resources: corev1.ResourceList{extension.ResourceFPGA: resource.MustParse("100")}}),
			want: map[corev1.ResourceName]string{extension.ResourceFPGA: "100"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got map[corev1.ResourceName]string
			if list := Resources(tc.device); list != nil {
				got = map[corev1.ResourceName]string{}
				for k, v := range list {
					got[k] = v.String()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resources (-want,+got):\n%s", diff)
			}
		})
	}
}
