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

package devices

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// sysfs is a fake /sys under a temporary directory.
type sysfs struct {
	t    *testing.T
	root string
}

func newSysfs(t *testing.T) *sysfs { return &sysfs{t: t, root: t.TempDir()} }

func (s *sysfs) write(path, content string) {
	s.t.Helper()
	p := filepath.Join(s.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sysfs) link(path, target string) {
	s.t.Helper()
	p := filepath.Join(s.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(s.root, target), p); err != nil {
		s.t.Fatal(err)
	}
}

// pciDevice creates the PCI device busID under the PCI root root (e.g. pci0000:3a) on NUMA node numa, as
// devices/<root>/<bridge>/<busID> with bus/pci/devices/<busID> linking to it, and returns its directory.
func (s *sysfs) pciDevice(root, busID string, numa int) string {
	dir := filepath.Join("devices", root, root[3:]+":00.0", busID)
	s.write(filepath.Join(dir, "numa_node"), fmt.Sprintf("%d\n", numa))
	s.link(filepath.Join("bus", "pci", "devices", busID), dir)
	return dir
}

// recordedNVML answers like NVML did on a machine: gpus by index; initErr for a missing library; failing
// makes GPU(i) fail for the indexes in it.
type recordedNVML struct {
	gpus    []GPU
	driver  string
	initErr error
	failing map[int]error
	inits   int
}

func (l *recordedNVML) Init() error                    { l.inits++; return l.initErr }
func (l *recordedNVML) Shutdown() error                { return nil }
func (l *recordedNVML) DriverVersion() (string, error) { return l.driver, nil }
func (l *recordedNVML) Count() (int, error)            { return len(l.gpus), nil }
func (l *recordedNVML) GPU(i int) (GPU, error) {
	if err := l.failing[i]; err != nil {
		return GPU{}, err
	}
	return l.gpus[i], nil
}

// a100 is GPU i of a DGX-like machine: 80Gi, on PCI root pci0000:0<i/4> (4 GPUs per root).
func a100(i int) GPU {
	return GPU{UUID: fmt.Sprintf("GPU-%08d", i), Minor: i, MemoryBytes: 80 << 30, BusID: fmt.Sprintf("00000000:%02X:00.0", 0x10+i), Name: "NVIDIA A100-SXM4-80GB"}
}

func gpuDevice(i int, numa int32, root string) schedulingv1alpha1.DeviceInfo {
	return schedulingv1alpha1.DeviceInfo{
		Type: schedulingv1alpha1.GPU, UUID: fmt.Sprintf("GPU-%08d", i), Minor: ptr.To(int32(i)), Health: true,
		Resources: corev1.ResourceList{
			extension.ResourceGPUCore:        resource.MustParse("100"),
			extension.ResourceGPUMemory:      resource.MustParse("80Gi"),
			extension.ResourceGPUMemoryRatio: resource.MustParse("100"),
		},
		Topology: &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: numa, PCIEID: root, BusID: fmt.Sprintf("0000:%02x:00.0", 0x10+i)},
	}
}

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestGPUSource(t *testing.T) {
	eight := make([]GPU, 8)
	var eightWant []schedulingv1alpha1.DeviceInfo
	for i := range eight {
		eight[i] = a100(i)
		eightWant = append(eightWant, gpuDevice(i, int32(i/4), fmt.Sprintf("pci0000:%02x", i/4)))
	}
	labels := map[string]string{extension.LabelGPUVendor: "nvidia", extension.LabelGPUModel: "A100-SXM4-80GB", extension.LabelGPUDriverVersion: "550.54.15"}
	mixed := []GPU{a100(0), a100(1)}
	mixed[1].Name = "NVIDIA H100 80GB HBM3"
	tests := map[string]struct {
		lib     *recordedNVML
		want    Found
		wantErr error
	}{
		"no GPU":  {lib: &recordedNVML{driver: "550.54.15"}, want: Found{}},
		"one GPU": {lib: &recordedNVML{gpus: eight[:1], driver: "550.54.15"}, want: Found{Devices: eightWant[:1], Labels: labels}},
		// Two PCI roots, one per NUMA node.
		"eight GPUs": {lib: &recordedNVML{gpus: eight, driver: "550.54.15"}, want: Found{Devices: eightWant, Labels: labels}},
		"two models: no model label": {lib: &recordedNVML{gpus: mixed, driver: "550.54.15"},
			want: Found{Devices: eightWant[:2], Labels: map[string]string{extension.LabelGPUVendor: "nvidia", extension.LabelGPUDriverVersion: "550.54.15"}}},
		"no library": {lib: &recordedNVML{initErr: fmt.Errorf("%w: %w", ErrUnavailable, errNoNVML)}, wantErr: ErrUnavailable},
		// A GPU NVML cannot describe that was never seen is left out.
		"a GPU that never answered": {lib: &recordedNVML{gpus: eight[:2], driver: "550.54.15", failing: map[int]error{1: errors.New("ERROR_GPU_IS_LOST")}},
			want: Found{Devices: eightWant[:1], Labels: labels}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fs := newSysfs(t)
			for i := range 8 {
				fs.pciDevice(fmt.Sprintf("pci0000:%02x", i/4), fmt.Sprintf("0000:%02x:00.0", 0x10+i), i/4)
			}
			_, ctx := ktesting.NewTestContext(t)
			got, err := NewGPUSource(tc.lib, fs.root).Discover(ctx)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("Discover error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, quantityEqual, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Discover (-want,+got):\n%s", diff)
			}
		})
	}
}

// A GPU that stops answering is reported unhealthy under its last description, and healthy again when it
// answers; NVML is initialised once.
func TestGPUSourceHealth(t *testing.T) {
	fs := newSysfs(t)
	fs.pciDevice("pci0000:00", "0000:10:00.0", 0)
	lib := &recordedNVML{gpus: []GPU{a100(0)}, driver: "550.54.15"}
	s := NewGPUSource(lib, fs.root)
	_, ctx := ktesting.NewTestContext(t)
	discover := func() schedulingv1alpha1.DeviceInfo {
		t.Helper()
		got, err := s.Discover(ctx)
		if err != nil || len(got.Devices) != 1 {
			t.Fatalf("Discover = %+v, %v; want one GPU", got, err)
		}
		return got.Devices[0]
	}
	if d := discover(); !d.Health || len(d.Conditions) != 0 {
		t.Fatalf("first discovery: %+v, want healthy without conditions", d)
	}
	lib.failing = map[int]error{0: errors.New("GPU 0: memory: ERROR_GPU_IS_LOST")}
	d := discover()
	want := []metav1.Condition{{Type: "Healthy", Status: metav1.ConditionFalse, Reason: "NVMLQueryFailed", Message: "GPU 0: memory: ERROR_GPU_IS_LOST"}}
	if d.Health || d.UUID != "GPU-00000000" || !cmp.Equal(want, d.Conditions) {
		t.Errorf("a lost GPU: health %v, uuid %s, conditions %+v; want unhealthy under its UUID with %+v", d.Health, d.UUID, d.Conditions, want)
	}
	lib.failing = nil
	if d := discover(); !d.Health || len(d.Conditions) != 0 {
		t.Errorf("a GPU that answers again: %+v, want healthy", d)
	}
	if lib.inits != 1 {
		t.Errorf("NVML initialised %d times, want once", lib.inits)
	}
}

func TestRDMASource(t *testing.T) {
	fs := newSysfs(t)
	// mlx5_0: a PF with two VFs (mlx5_2 and mlx5_3 are their InfiniBand devices), both ports active.
	pf0 := fs.pciDevice("pci0000:00", "0000:18:00.0", 0)
	fs.link("class/infiniband/mlx5_0/device", pf0)
	fs.write("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
	fs.write("class/infiniband/mlx5_0/ports/2/state", "4: ACTIVE\n")
	for i, vf := range []string{"0000:18:00.2", "0000:18:00.3"} {
		dir := fs.pciDevice("pci0000:00", vf, 0)
		fs.link(filepath.Join(dir, "physfn"), pf0)
		fs.link(filepath.Join(pf0, fmt.Sprintf("virtfn%d", i)), dir)
		fs.link(fmt.Sprintf("class/infiniband/mlx5_%d/device", i+2), dir)
		fs.write(fmt.Sprintf("class/infiniband/mlx5_%d/ports/1/state", i+2), "4: ACTIVE\n")
	}
	// mlx5_1: a PF on NUMA node 1 whose port is down.
	pf1 := fs.pciDevice("pci0000:80", "0000:98:00.0", 1)
	fs.link("class/infiniband/mlx5_1/device", pf1)
	fs.write("class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n")

	_, ctx := ktesting.NewTestContext(t)
	got, err := NewRDMASource(fs.root).Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rdma := corev1.ResourceList{extension.ResourceRDMA: resource.MustParse("100")}
	want := Found{Devices: []schedulingv1alpha1.DeviceInfo{
		{Type: schedulingv1alpha1.RDMA, UUID: "0000:18:00.0", Minor: ptr.To[int32](0), Health: true, Resources: rdma,
			Topology: &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: 0, PCIEID: "pci0000:00", BusID: "0000:18:00.0"},
			VFGroups: []schedulingv1alpha1.VirtualFunctionGroup{{VFs: []schedulingv1alpha1.VirtualFunction{
				{Minor: 0, BusID: "0000:18:00.2"}, {Minor: 1, BusID: "0000:18:00.3"},
			}}}},
		{Type: schedulingv1alpha1.RDMA, UUID: "0000:98:00.0", Minor: ptr.To[int32](1), Health: false, Resources: rdma,
			Topology: &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: 1, PCIEID: "pci0000:80", BusID: "0000:98:00.0"}},
	}}
	if diff := cmp.Diff(want, got, quantityEqual); diff != "" {
		t.Errorf("Discover (-want,+got):\n%s", diff)
	}

	// A machine without InfiniBand devices has none.
	got, err = NewRDMASource(t.TempDir()).Discover(ctx)
	if err != nil || len(got.Devices) != 0 {
		t.Errorf("Discover without class/infiniband = %+v, %v; want none", got, err)
	}
}

func TestFileSource(t *testing.T) {
	tests := map[string]struct {
		content string
		want    Found
		wantErr string
	}{
		"devices and labels": {
			content: `labels: {node.koordinator.sh/gpu-model: A100}
devices:
- {type: gpu, id: GPU-0, minor: 0, health: true, resources: {koordinator.sh/gpu-core: "100"}}
- {type: rdma, id: "0000:18:00.0", minor: 0, health: false}
`,
			want: Found{Labels: map[string]string{extension.LabelGPUModel: "A100"}, Devices: []schedulingv1alpha1.DeviceInfo{
				{Type: schedulingv1alpha1.GPU, UUID: "GPU-0", Minor: ptr.To[int32](0), Health: true, Resources: corev1.ResourceList{extension.ResourceGPUCore: resource.MustParse("100")}},
				{Type: schedulingv1alpha1.RDMA, UUID: "0000:18:00.0", Minor: ptr.To[int32](0)},
			}},
		},
		"unknown field":  {content: "devices:\n- {type: gpu, minor: 0, helth: true}\n", wantErr: `unknown field "helth"`},
		"no type":        {content: "devices:\n- {minor: 0}\n", wantErr: "devices[0]: type is empty"},
		"no minor":       {content: "devices:\n- {type: gpu}\n", wantErr: "devices[0]: minor is missing"},
		"a minor twice":  {content: "devices:\n- {type: gpu, minor: 1}\n- {type: gpu, minor: 1}\n", wantErr: "devices[1]: a second gpu device with minor 1"},
		"not YAML":       {content: "devices: [", wantErr: "did not find expected node content"},
		"other type too": {content: "devices:\n- {type: gpu, minor: 1}\n- {type: fpga, minor: 1}\n", want: Found{Devices: []schedulingv1alpha1.DeviceInfo{{Type: "gpu", Minor: ptr.To[int32](1)}, {Type: "fpga", Minor: ptr.To[int32](1)}}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "devices.yaml")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := NewFileSource(path).Discover(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Discover error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, quantityEqual); diff != "" {
				t.Errorf("Discover (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeBusID(t *testing.T) {
	for in, want := range map[string]string{"00000000:3B:00.0": "0000:3b:00.0", "0000:3b:00.0": "0000:3b:00.0", " 00000001:AF:00.1 ": "0001:af:00.1"} {
		if got := normalizeBusID(in); got != want {
			t.Errorf("normalizeBusID(%q) = %q, want %q", in, got, want)
		}
	}
}

// The real NVML on this machine: it initialises (a machine with the NVIDIA driver) and counts its GPUs, or
// says it is unavailable (no library, a build without cgo), never another error.
func TestNVMLOfThisMachine(t *testing.T) {
	lib := NewNVML()
	err := lib.Init()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Init: %v, want success or ErrUnavailable", err)
		}
		return
	}
	defer func() {
		if err := lib.Shutdown(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := lib.Count(); err != nil {
		t.Errorf("Count after a successful Init: %v", err)
	}
}
