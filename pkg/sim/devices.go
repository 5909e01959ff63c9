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

package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/devices"
)

// AnnotationDevices gives a simulated node's devices as "gpu=<count>x<memory>,rdma=<count>", e.g.
// "gpu=4x16Gi,rdma=2": GPUs and RDMA NICs spread over the node's NUMA nodes (its sockets, see
// AnnotationCPUTopology) in order, each NUMA node with one PCIe switch (pci0000:00, pci0000:80, ...), every NIC
// with 4 virtual functions. The simulated agent reports them as the node's Device, as koordlet does.
const AnnotationDevices = "sim.koord.dev/devices"

// simDevices is a parsed AnnotationDevices.
type simDevices struct {
	gpus      int
	gpuMemory resource.Quantity
	nics      int
}

// ValidateDevices checks a value of AnnotationDevices.
func ValidateDevices(v string) error {
	_, err := parseDevices(v)
	return err
}

// devicesOf parses the annotation of node; nil without it.
func devicesOf(node *corev1.Node) (*simDevices, error) {
	v, ok := node.Annotations[AnnotationDevices]
	if !ok {
		return nil, nil
	}
	return parseDevices(v)
}

// parseDevices parses a value of AnnotationDevices.
func parseDevices(v string) (*simDevices, error) {
	bad := func(why string) error {
		return fmt.Errorf("annotation %s: %q: %s (want gpu=<count>x<memory>,rdma=<count>)", AnnotationDevices, v, why)
	}
	d := &simDevices{}
	for _, part := range strings.Split(v, ",") {
		kind, spec, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, bad(fmt.Sprintf("%q has no =", part))
		}
		switch kind {
		case "gpu":
			n, mem, ok := strings.Cut(spec, "x")
			count, err := strconv.Atoi(n)
			if !ok || err != nil || count < 0 {
				return nil, bad(fmt.Sprintf("gpu=%s is not <count>x<memory>", spec))
			}
			q, err := resource.ParseQuantity(mem)
			if err != nil || q.Sign() <= 0 {
				return nil, bad(fmt.Sprintf("gpu memory %q is not a positive quantity", mem))
			}
			d.gpus, d.gpuMemory = count, q
		case "rdma":
			count, err := strconv.Atoi(spec)
			if err != nil || count < 0 {
				return nil, bad(fmt.Sprintf("rdma=%s is not a count", spec))
			}
			d.nics = count
		default:
			return nil, bad(fmt.Sprintf("unknown device kind %q", kind))
		}
	}
	return d, nil
}

// deviceSource is a simulated node's devices for the devices reporter: those its annotation declares.
type deviceSource struct {
	name string
	node func() *corev1.Node
}

// Name implements devices.Source.
func (s deviceSource) Name() string { return "sim" }

// Discover implements devices.Source from the node's annotations.
func (s deviceSource) Discover(context.Context) (devices.Found, error) {
	node := s.node()
	if node == nil {
		return devices.Found{}, fmt.Errorf("node %s is not known yet", s.name)
	}
	d, err := devicesOf(node)
	if err != nil || d == nil {
		return devices.Found{}, err
	}
	numa := 1
	if t, err := topologyOf(node); err == nil && len(t.NUMANodes) > 0 {
		numa = len(t.NUMANodes)
	}
	at := func(i, n int) (int32, string) {
		id := i * numa / max(n, 1)
		return int32(id), fmt.Sprintf("pci0000:%02x", id*0x80%0x100+id/2)
	}
	var found devices.Found
	for i := range d.gpus {
		id, pcie := at(i, d.gpus)
		found.Devices = append(found.Devices, schedulingv1alpha1.DeviceInfo{
			Type: schedulingv1alpha1.GPU, UUID: fmt.Sprintf("GPU-%s-%d", node.Name, i), Minor: ptr.To(int32(i)), Health: true,
			Resources: corev1.ResourceList{
				extension.ResourceGPUCore:        *resource.NewQuantity(100, resource.DecimalSI),
				extension.ResourceGPUMemory:      d.gpuMemory.DeepCopy(),
				extension.ResourceGPUMemoryRatio: *resource.NewQuantity(100, resource.DecimalSI),
			},
			Topology: &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: id, PCIEID: pcie, BusID: fmt.Sprintf("0000:%02x:00.0", 0x10+i)},
		})
	}
	for i := range d.nics {
		id, pcie := at(i, d.nics)
		bus := 0x80 + i
		var vfs []schedulingv1alpha1.VirtualFunction
		for v := range 4 {
			vfs = append(vfs, schedulingv1alpha1.VirtualFunction{Minor: int32(v), BusID: fmt.Sprintf("0000:%02x:00.%d", bus, v+1)})
		}
		found.Devices = append(found.Devices, schedulingv1alpha1.DeviceInfo{
			Type: schedulingv1alpha1.RDMA, UUID: fmt.Sprintf("0000:%02x:00.0", bus), Minor: ptr.To(int32(i)), Health: true,
			Resources: corev1.ResourceList{extension.ResourceRDMA: *resource.NewQuantity(100, resource.DecimalSI)},
			Topology:  &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: id, PCIEID: pcie, BusID: fmt.Sprintf("0000:%02x:00.0", bus)},
			VFGroups:  []schedulingv1alpha1.VirtualFunctionGroup{{VFs: vfs}},
		})
	}
	if d.gpus > 0 {
		found.Labels = map[string]string{extension.LabelGPUVendor: "nvidia", extension.LabelGPUModel: "SIM-" + d.gpuMemory.String()}
	}
	return found, nil
}
