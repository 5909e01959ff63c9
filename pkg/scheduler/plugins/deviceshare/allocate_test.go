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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/deviceshare/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

const gi = int64(1 << 30)

// testArgs are the plugin's default args.
func testArgs() *config.DeviceShareArgs {
	return &config.DeviceShareArgs{ScoringStrategy: &config.ScoringStrategy{Type: config.LeastAllocated, Resources: []config.ResourceWeight{
		{Name: "koordinator.sh/gpu-memory-ratio", Weight: 1}, {Name: "koordinator.sh/gpu-memory", Weight: 1},
		{Name: "koordinator.sh/rdma", Weight: 1}, {Name: "koordinator.sh/fpga", Weight: 1},
	}}}
}

// twoSwitches is a node of 4 GPUs of 16Gi and 2 RDMA NICs on two PCIe switches, one per NUMA node: GPUs 0, 1
// and NIC 0 (VFs 0000:18:00.2, .3) on pci0000:00, NUMA node 0; GPUs 2, 3 and NIC 1 (VFs 0000:98:00.2, .3)
// on pci0000:80, NUMA node 1. unhealthy lists "type/minor" of unhealthy devices.
func twoSwitches(t *testing.T, unhealthy ...string) *cache.Node {
	t.Helper()
	d := &schedulingv1alpha1.Device{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{extension.LabelGPUModel: "A10", extension.LabelGPUVendor: "nvidia"}}}
	sick := func(typ string, minor int) bool {
		for _, u := range unhealthy {
			if u == fmt.Sprintf("%s/%d", typ, minor) {
				return false
			}
		}
		return true
	}
	pcie := func(minor int) string { return []string{"pci0000:00", "pci0000:80"}[minor] }
	for i := range 4 {
		d.Spec.Devices = append(d.Spec.Devices, schedulingv1alpha1.DeviceInfo{Type: "gpu", UUID: fmt.Sprintf("GPU-%d", i), Minor: ptr.To(int32(i)), Health: sick("gpu", i),
			Resources: corev1.ResourceList{extension.ResourceGPUCore: resource.MustParse("100"), extension.ResourceGPUMemory: resource.MustParse("16Gi"),
				extension.ResourceGPUMemoryRatio: resource.MustParse("100")},
			Topology: &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: int32(i / 2), PCIEID: pcie(i / 2)}})
	}
	for i := range 2 {
		bus := []string{"18", "98"}[i]
		d.Spec.Devices = append(d.Spec.Devices, schedulingv1alpha1.DeviceInfo{Type: "rdma", UUID: "0000:" + bus + ":00.0", Minor: ptr.To(int32(i)), Health: sick("rdma", i),
			Resources: corev1.ResourceList{extension.ResourceRDMA: resource.MustParse("100")},
			Topology:  &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: int32(i), PCIEID: pcie(i)},
			VFGroups: []schedulingv1alpha1.VirtualFunctionGroup{{VFs: []schedulingv1alpha1.VirtualFunction{
				{Minor: 1, BusID: "0000:" + bus + ":00.3"}, {Minor: 0, BusID: "0000:" + bus + ":00.2"},
			}}}})
	}
	n, err := cache.NodeFromDevice(d)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// used is a usage: GPU minor → gpu-memory-ratio (and as much core) in use; vfs the VFs in use.
func used(gpus map[int]int64, vfs ...string) *cache.Usage {
	u := &cache.Usage{Used: map[extension.DeviceType]map[int]quantity.Amounts{"gpu": {}}, VFs: map[string]bool{}}
	for minor, pct := range gpus {
		u.Used["gpu"][minor] = quantity.Amounts{extension.ResourceGPUCore: pct, extension.ResourceGPUMemoryRatio: pct, extension.ResourceGPUMemory: pct * 16 * gi / 100}
	}
	for _, vf := range vfs {
		u.VFs[vf] = true
	}
	return u
}

// withReservation adds to u a Reservation uid holding pct percent of GPU minor (already in u.Used).
func withReservation(u *cache.Usage, uid types.UID, minor int, pct int64) *cache.Usage {
	u.Reserved = map[types.UID]map[extension.DeviceType]map[int]quantity.Amounts{uid: {"gpu": {minor: {
		extension.ResourceGPUCore: pct, extension.ResourceGPUMemoryRatio: pct, extension.ResourceGPUMemory: pct * 16 * gi / 100,
	}}}}
	return u
}

// podOf is a pod requesting the resources name=value, with the annotations given.
func podOf(annotations map[string]string, resources ...string) *corev1.Pod {
	list := corev1.ResourceList{}
	for _, r := range resources {
		name, v, _ := strings.Cut(r, "=")
		list[corev1.ResourceName(name)] = resource.MustParse(v)
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: list}}}}}
}

// minors renders an allocation as "gpu:0(50 gpu-core, ...) rdma:1[vf 0000:98:00.2]".
func minors(a extension.DeviceAllocations) string {
	var parts []string
	for _, typ := range []extension.DeviceType{"gpu", "rdma", "fpga"} {
		for _, d := range a[typ] {
			s := fmt.Sprintf("%s:%d(%s)", typ, d.Minor, describe(quantity.FromList(d.Resources)))
			for _, vf := range d.VirtualFunctions() {
				s += "[vf " + vf.BusID + "]"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

const (
	core   = "koordinator.sh/gpu-core"
	ratio  = "koordinator.sh/gpu-memory-ratio"
	memory = "koordinator.sh/gpu-memory"
	shared = "koordinator.sh/gpu.shared"
)

func TestAllocate(t *testing.T) {
	half := []string{core + "=50", ratio + "=50", shared + "=1"}
	whole := func(n int) []string {
		return []string{core + fmt.Sprintf("=%d", n*100), ratio + fmt.Sprintf("=%d", n*100), shared + fmt.Sprintf("=%d", n)}
	}
	hint := func(h string) map[string]string { return map[string]string{extension.AnnotationDeviceAllocateHint: h} }
	joint := map[string]string{extension.AnnotationDeviceJointAllocate: `{"deviceTypes":["gpu","rdma"],"requiredScope":"SamePCIe"}`}
	tests := map[string]struct {
		pod       *corev1.Pod
		usage     *cache.Usage
		unhealthy []string
		args      func(*config.DeviceShareArgs)
		// numa are the NUMA nodes NodeNUMAResource chose; resvs the Reservations the pod may allocate.
		numa    []int
		resvs   []types.UID
		want    string
		wantErr string
	}{
		"half a GPU on an empty node: the lowest minor": {pod: podOf(nil, half...), usage: used(nil),
			want: "gpu:0(50 gpu-core, 8Gi gpu-memory, 50 gpu-memory-ratio)"},
		// GPU 2 is half used: a half goes there, keeping whole GPUs whole.
		"half a GPU joins a shared one": {pod: podOf(nil, half...), usage: used(map[int]int64{2: 50}),
			want: "gpu:2(50 gpu-core, 8Gi gpu-memory, 50 gpu-memory-ratio)"},
		// 60 percent does not fit beside 50: it goes to the other GPU of that switch, keeping switch 0 free.
		"60 percent does not fit beside 50": {pod: podOf(nil, core+"=60", ratio+"=60", shared+"=1"), usage: used(map[int]int64{2: 50}),
			want: "gpu:3(60 gpu-core, 10307921510 gpu-memory, 60 gpu-memory-ratio)"},
		"memory in bytes": {pod: podOf(nil, core+"=25", memory+"=4Gi", shared+"=1"), usage: used(nil),
			want: "gpu:0(25 gpu-core, 4Gi gpu-memory, 25 gpu-memory-ratio)"},
		"an unhealthy GPU gets nothing": {pod: podOf(nil, half...), usage: used(nil), unhealthy: []string{"gpu/0"},
			want: "gpu:1(50 gpu-core, 8Gi gpu-memory, 50 gpu-memory-ratio)"},
		// GPU 0 is half used: a whole GPU goes beside it on its switch (bin packing switches).
		"a whole GPU next to a used one": {pod: podOf(nil, whole(1)...), usage: used(map[int]int64{0: 50}),
			want: "gpu:1(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio)"},
		"two whole GPUs on one switch": {pod: podOf(nil, whole(2)...), usage: used(nil),
			want: "gpu:0(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio) gpu:1(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio)"},
		"two whole GPUs on the switch that has two free": {pod: podOf(nil, whole(2)...), usage: used(map[int]int64{1: 10}),
			want: "gpu:2(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio) gpu:3(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio)"},
		"nvidia.com/gpu": {pod: podOf(nil, "nvidia.com/gpu=2"), usage: used(map[int]int64{1: 10}),
			want: "gpu:2(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio) gpu:3(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio)"},
		"three whole GPUs over the switches": {pod: podOf(nil, whole(3)...), usage: used(nil),
			want: "gpu:0(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio) gpu:1(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio) gpu:2(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio)"},
		"requiredTopologyScope PCIe": {pod: podOf(hint(`{"gpu":{"requiredTopologyScope":"PCIe"}}`), whole(2)...), usage: used(map[int]int64{1: 10, 3: 10}),
			wantErr: "2 of the node's gpu devices fit the pod, at most 1 on one PCIe; the pod needs 2 on one (requiredTopologyScope PCIe)"},
		"exclusivePolicy PCIeLevel": {pod: podOf(hint(`{"gpu":{"exclusivePolicy":"PCIeLevel"}}`), whole(1)...), usage: used(map[int]int64{0: 10}),
			want: "gpu:2(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio)"},
		"no GPU has enough free": {pod: podOf(nil, core+"=60", ratio+"=60", shared+"=1"), usage: used(map[int]int64{0: 50, 1: 50, 2: 70, 3: 90}), unhealthy: []string{"gpu/3"},
			wantErr: "no gpu device on the node has 60 gpu-core, 60 gpu-memory-ratio free (4 devices, 1 unhealthy); the freest, minor 0, has 50 gpu-core, 8Gi gpu-memory, 50 gpu-memory-ratio"},
		"too few whole GPUs": {pod: podOf(nil, whole(2)...), usage: used(map[int]int64{0: 50, 1: 50, 2: 70}),
			wantErr: "the pod needs 2 gpu devices with 100 gpu-core, 100 gpu-memory-ratio free each, 1 of them have (4 devices)"},
		"a selector": {pod: podOf(hint(`{"gpu":{"selector":{"matchLabels":{"absent":"x"}}}}`), half...), usage: used(nil),
			wantErr: "no gpu device on the node has 50 gpu-core, 50 gpu-memory-ratio free (4 devices)"},
		"a node without NICs of the type": {pod: podOf(nil, "koordinator.sh/fpga=100"), usage: used(nil), wantErr: "node has no fpga devices"},
		"GPU sharing not supported on the model": {pod: podOf(nil, half...), usage: used(nil),
			args: func(a *config.DeviceShareArgs) {
				a.GPUShareUnsupportedModels = []config.GPUModel{{Vendor: "nvidia", Model: "A10"}}
			},
			wantErr: "GPUs of model A10 (vendor nvidia) are not shared (gpuShareUnsupportedModels); the pod asks for a part of a GPU"},
		// Joint: the NIC on the GPUs' switch.
		"joint GPU and RDMA": {pod: podOf(joint, append(whole(2), "koordinator.sh/rdma=100")...), usage: used(map[int]int64{0: 10}),
			want: "gpu:2(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio) gpu:3(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio) rdma:1(100 rdma)"},
		"joint with a VF": {pod: podOf(map[string]string{extension.AnnotationDeviceJointAllocate: joint[extension.AnnotationDeviceJointAllocate],
			extension.AnnotationDeviceAllocateHint: `{"rdma":{"vfSelector":{}}}`}, append(whole(1), "koordinator.sh/rdma=1")...),
			usage: used(map[int]int64{0: 10, 1: 10}, "0000:98:00.2"),
			want:  "gpu:2(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio) rdma:1(1 rdma)[vf 0000:98:00.3]"},
		"joint SamePCIe with the switch's NIC unhealthy": {pod: podOf(joint, append(whole(2), "koordinator.sh/rdma=100")...), usage: used(map[int]int64{0: 10}),
			unhealthy: []string{"rdma/1"},
			wantErr:   "the rdma devices that fit are on PCIe switches [pci0000:00], the pod's gpu on [pci0000:80] (device-joint-allocate requiredScope SamePCIe)"},
		"within the NUMA node NodeNUMAResource chose": {pod: podOf(nil, half...), usage: used(nil), numa: []int{1},
			want: "gpu:2(50 gpu-core, 8Gi gpu-memory, 50 gpu-memory-ratio)"},
		"nothing free on the chosen NUMA node": {pod: podOf(nil, whole(1)...), usage: used(map[int]int64{2: 10, 3: 10}), numa: []int{1},
			wantErr: "on NUMA nodes [1] (the pod's CPUs and memory there, NodeNUMAResource): no gpu device on the node has 100 gpu-core, 100 gpu-memory-ratio free (4 devices); the freest, minor 2, has 90 gpu-core, 15461882266 gpu-memory, 90 gpu-memory-ratio"},
		// A Reservation holds GPU 3 whole: its owner takes it first, a stranger cannot.
		"an owner takes its Reservation's GPU": {pod: podOf(nil, whole(1)...), usage: withReservation(used(map[int]int64{3: 100}), "r1", 3, 100), resvs: []types.UID{"r1"},
			want: "gpu:3(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio)"},
		// (GPU 2, beside the held one: switches are bin-packed.)
		"a stranger does not": {pod: podOf(nil, whole(1)...), usage: withReservation(used(map[int]int64{3: 100}), "r1", 3, 100),
			want: "gpu:2(100 gpu-core, 16Gi gpu-memory, 100 gpu-memory-ratio)"},
		"every NIC": {pod: podOf(hint(`{"rdma":{"allocateStrategy":"ApplyForAll"}}`), "koordinator.sh/rdma=1"), usage: used(nil),
			want: "rdma:0(1 rdma) rdma:1(1 rdma)"},
		"NICs as a count": {pod: podOf(hint(`{"rdma":{"allocateStrategy":"RequestsAsCount","exclusivePolicy":"DeviceLevel"}}`), "koordinator.sh/rdma=2"), usage: used(nil),
			want: "rdma:0(100 rdma) rdma:1(100 rdma)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, err := requestOf(tc.pod)
			if err != nil || req == nil {
				t.Fatalf("requestOf = %v, %v", req, err)
			}
			args := testArgs()
			if tc.args != nil {
				tc.args(args)
			}
			got, err := newRules(args).allocate(twoSwitches(t, tc.unhealthy...), tc.usage, req, tc.numa, grantOf(tc.usage, tc.resvs))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("allocate error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, minors(got)); diff != "" {
				t.Errorf("allocate (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestRequestOf(t *testing.T) {
	tests := map[string]struct {
		pod     *corev1.Pod
		want    string
		wantErr string
	}{
		"no device":                      {pod: podOf(nil, "cpu=1")},
		"nvidia.com/gpu":                 {pod: podOf(nil, "nvidia.com/gpu=2"), want: "gpu: 2 × 100 gpu-core, 100 gpu-memory-ratio"},
		"koordinator.sh/gpu":             {pod: podOf(nil, "koordinator.sh/gpu=50"), want: "gpu: 1 × 50 gpu-core, 50 gpu-memory-ratio shared"},
		"whole GPUs by ratio":            {pod: podOf(nil, core+"=200", ratio+"=200"), want: "gpu: 2 × 100 gpu-core, 100 gpu-memory-ratio"},
		"whole GPUs by core with memory": {pod: podOf(nil, core+"=200", memory+"=32Gi"), want: "gpu: 2 × 100 gpu-core, 16Gi gpu-memory shared"},
		"shared over two":                {pod: podOf(nil, core+"=100", ratio+"=100", shared+"=2"), want: "gpu: 2 × 50 gpu-core, 50 gpu-memory-ratio shared"},
		"rdma whole":                     {pod: podOf(nil, "koordinator.sh/rdma=200"), want: "rdma: 2 × 100 rdma"},
		"core alone":                     {pod: podOf(nil, core+"=50"), wantErr: "a GPU request needs koordinator.sh/gpu-memory-ratio or koordinator.sh/gpu-memory"},
		"both memories":                  {pod: podOf(nil, ratio+"=50", memory+"=1Gi"), wantErr: "koordinator.sh/gpu-memory-ratio and koordinator.sh/gpu-memory cannot be requested together"},
		"vendor mixed":                   {pod: podOf(nil, "nvidia.com/gpu=1", ratio+"=50"), wantErr: "nvidia.com/gpu cannot be requested with other GPU resources"},
		"a share above 100":              {pod: podOf(nil, core+"=150", ratio+"=150"), wantErr: "koordinator.sh/gpu-core 150 is more than 100 on each of 1 GPUs (above 100, ask for whole GPUs in multiples of 100)"},
		"not divisible":                  {pod: podOf(nil, core+"=101", ratio+"=100", shared+"=2"), wantErr: "koordinator.sh/gpu-core 101 is not divisible over 2 GPUs"},
		"rdma share above 100":           {pod: podOf(nil, "koordinator.sh/rdma=150"), wantErr: "koordinator.sh/rdma 150: at most 100 (a share of one device) or a multiple of 100 (whole devices)"},
		"npu":                            {pod: podOf(nil, "huawei.com/npu-core=1"), wantErr: "huawei.com/npu-core: Huawei NPUs are not supported by Koord's DeviceShare yet"},
		"a malformed hint": {pod: podOf(map[string]string{extension.AnnotationDeviceAllocateHint: `{"gpu":{"requiredTopologyScope":"Rack"}}`}, "nvidia.com/gpu=1"),
			wantErr: `annotation "scheduling.koordinator.sh/device-allocate-hint": gpu.requiredTopologyScope: unsupported value "Rack" (Device, PCIe, NUMANode or Node)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, err := requestOf(tc.pod)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("requestOf error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if req != nil {
				var parts []string
				for _, typ := range []extension.DeviceType{"gpu", "rdma", "fpga"} {
					if tr := req.types[typ]; tr != nil {
						s := fmt.Sprintf("%s: %d × %s", typ, tr.count, describe(tr.per))
						if tr.shared {
							s += " shared"
						}
						parts = append(parts, s)
					}
				}
				got = strings.Join(parts, "; ")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requestOf (-want,+got):\n%s", diff)
			}
		})
	}
}

// FuzzAllocate checks allocate on random usages, requests and hints: it never panics, gives every type the
// number of devices asked, never more of a device than it has free, never an unhealthy device, and never a
// virtual function twice.
func FuzzAllocate(f *testing.F) {
	f.Add(uint8(50), uint8(1), uint8(0), uint64(0x0a0b), uint8(0), uint8(0), uint8(3))
	f.Add(uint8(200), uint8(2), uint8(100), uint64(0x3210), uint8(1), uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, pct, sharedN, rdma uint8, usage uint64, hintKind, jointKind, sick uint8) {
		var unhealthy []string
		if sick&1 != 0 {
			unhealthy = append(unhealthy, "gpu/1")
		}
		if sick&2 != 0 {
			unhealthy = append(unhealthy, "rdma/0")
		}
		n := twoSwitches(t, unhealthy...)
		gpus := map[int]int64{}
		for i := range 4 {
			gpus[i] = int64((usage >> (8 * i)) & 0xff % 101)
		}
		var vfs []string
		if usage>>32&1 != 0 {
			vfs = append(vfs, "0000:18:00.2")
		}
		u := used(gpus, vfs...)
		res := []string{}
		if p := int(pct)%401 + 1; sharedN%3 == 0 {
			res = append(res, fmt.Sprintf("%s=%d", "koordinator.sh/gpu", p))
		} else {
			res = append(res, fmt.Sprintf("%s=%d", core, p), fmt.Sprintf("%s=%d", ratio, p), fmt.Sprintf("%s=%d", shared, int(sharedN)%4+1))
		}
		if rdma > 0 {
			res = append(res, fmt.Sprintf("koordinator.sh/rdma=%d", int(rdma)%300+1))
		}
		annotations := map[string]string{}
		switch hintKind % 4 {
		case 1:
			annotations[extension.AnnotationDeviceAllocateHint] = `{"rdma":{"vfSelector":{}},"gpu":{"requiredTopologyScope":"PCIe"}}`
		case 2:
			annotations[extension.AnnotationDeviceAllocateHint] = `{"gpu":{"exclusivePolicy":"PCIeLevel"},"rdma":{"allocateStrategy":"RequestsAsCount"}}`
		case 3:
			annotations[extension.AnnotationDeviceAllocateHint] = `{"rdma":{"allocateStrategy":"ApplyForAll"}}`
		}
		if jointKind%2 == 1 {
			annotations[extension.AnnotationDeviceJointAllocate] = `{"deviceTypes":["gpu","rdma"],"requiredScope":"SamePCIe"}`
		}
		req, err := requestOf(podOf(annotations, res...))
		if err != nil || req == nil {
			return
		}
		got, err := newRules(testArgs()).allocate(n, u, req, nil, grant{})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a reason")
			}
			return
		}
		for typ, tr := range req.types {
			if !tr.all && len(got[typ]) < tr.count {
				t.Fatalf("%s: %d devices, the pod asked %d", typ, len(got[typ]), tr.count)
			}
			seen := map[int32]bool{}
			for _, a := range got[typ] {
				if seen[a.Minor] {
					t.Fatalf("%s minor %d given twice: %s", typ, a.Minor, minors(got))
				}
				seen[a.Minor] = true
				var dev *cache.Device
				for i := range n.Devices[typ] {
					if n.Devices[typ][i].Minor == int(a.Minor) {
						dev = &n.Devices[typ][i]
					}
				}
				if dev == nil || !dev.Healthy {
					t.Fatalf("%s minor %d: not a healthy device of the node", typ, a.Minor)
				}
				free := freeOf(dev, u.Used[typ][dev.Minor])
				for name, v := range quantity.FromList(a.Resources) {
					if v > free[name] {
						t.Fatalf("%s minor %d: gave %d %s, it has %d free", typ, a.Minor, v, name, free[name])
					}
				}
				for _, vf := range a.VirtualFunctions() {
					if u.VFs[vf.BusID] {
						t.Fatalf("VF %s given while in use", vf.BusID)
					}
				}
			}
		}
	})
}
