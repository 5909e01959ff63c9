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

package manager

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/manager"
	"github.com/koord-dev/koord/pkg/manager/controller/deviceresource"
)

// TestDeviceResourceController: a node's Device (2 GPUs of 80Gi, one RDMA NIC) becomes its device resources and
// GPU labels; a GPU turning unhealthy leaves the node at once; deleting the Device removes them.
func TestDeviceResourceController(t *testing.T) {
	ensureSystemNamespace(t)
	opts := testOptions(t)
	opts.Controllers = []string{manager.ControllerDeviceResource}
	startManager(t, opts)
	ctx := t.Context()
	node := createSLONode(t, "device-node", nil, nil)

	gpu := func(minor int32, healthy bool) schedulingv1alpha1.DeviceInfo {
		return schedulingv1alpha1.DeviceInfo{Type: schedulingv1alpha1.GPU, UUID: "GPU-" + string(rune('0'+minor)), Minor: ptr.To(minor), Health: healthy,
			Resources: corev1.ResourceList{
				extension.ResourceGPUCore: resource.MustParse("100"), extension.ResourceGPUMemory: resource.MustParse("80Gi"),
				extension.ResourceGPUMemoryRatio: resource.MustParse("100"),
			}}
	}
	device := &schedulingv1alpha1.Device{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: map[string]string{extension.LabelGPUModel: "A100-SXM4-80GB", extension.LabelGPUVendor: "nvidia"}},
		Spec: schedulingv1alpha1.DeviceSpec{Devices: []schedulingv1alpha1.DeviceInfo{gpu(0, true), gpu(1, true),
			{Type: schedulingv1alpha1.RDMA, UUID: "0000:18:00.0", Minor: ptr.To[int32](0), Health: true,
				Resources: corev1.ResourceList{extension.ResourceRDMA: resource.MustParse("100")}}}},
	}
	createOrFail(t, device)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), device) })

	allocatable := func(want map[corev1.ResourceName]string) {
		t.Helper()
		var got map[corev1.ResourceName]string
		eventually(t, "the node's device resources", func(ctx context.Context) (bool, error) {
			n := &corev1.Node{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(node), n); err != nil {
				return false, err
			}
			got = map[corev1.ResourceName]string{}
			for _, name := range deviceresource.ResourceNames {
				if q, ok := n.Status.Allocatable[name]; ok {
					got[name] = q.String()
					if c := n.Status.Capacity[name]; c.Cmp(q) != 0 {
						return false, nil
					}
				}
			}
			return cmp.Equal(want, got), nil
		})
	}
	allocatable(map[corev1.ResourceName]string{
		extension.ResourceGPU: "200", extension.ResourceGPUCore: "200", extension.ResourceGPUMemory: "160Gi",
		extension.ResourceGPUMemoryRatio: "200", extension.ResourceGPUShared: "200", extension.ResourceRDMA: "100",
	})
	n := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(node), n); err != nil {
		t.Fatal(err)
	}
	if got := n.Labels[extension.LabelGPUModel]; got != "A100-SXM4-80GB" {
		t.Errorf("node label %s = %q, want the Device's A100-SXM4-80GB", extension.LabelGPUModel, got)
	}

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(device), device); err != nil {
		t.Fatal(err)
	}
	device.Spec.Devices[1].Health = false
	if err := env.Client.Update(ctx, device); err != nil {
		t.Fatal(err)
	}
	allocatable(map[corev1.ResourceName]string{
		extension.ResourceGPU: "100", extension.ResourceGPUCore: "100", extension.ResourceGPUMemory: "80Gi",
		extension.ResourceGPUMemoryRatio: "100", extension.ResourceGPUShared: "100", extension.ResourceRDMA: "100",
	})

	if err := env.Client.Delete(ctx, device); err != nil {
		t.Fatal(err)
	}
	allocatable(map[corev1.ResourceName]string{})
}
