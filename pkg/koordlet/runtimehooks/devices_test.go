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

package runtimehooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cgroupreconcile"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

// injected is what an adjustment adds, in plain values.
type injected struct {
	Env     []string
	Devices []string
	Mounts  []string
}

func fromAdjustment(a *api.ContainerAdjustment) injected {
	var out injected
	for _, kv := range a.GetEnv() {
		out.Env = append(out.Env, kv.GetKey()+"="+kv.GetValue())
	}
	for _, d := range a.GetLinux().GetDevices() {
		out.Devices = append(out.Devices, fmt.Sprintf("%s %s %d:%d %o", d.GetPath(), d.GetType(), d.GetMajor(), d.GetMinor(), d.GetFileMode().GetValue()))
	}
	for _, m := range a.GetMounts() {
		out.Mounts = append(out.Mounts, fmt.Sprintf("%s %s %s %s", m.GetSource(), m.GetDestination(), m.GetType(), strings.Join(m.GetOptions(), ",")))
	}
	return out
}

// checkInjection has the hooks, with devices and the failure policy Fail, create container c of pod and checks
// what the adjustment adds, and that the error names wantErrText ("": no error).
func checkInjection(t *testing.T, pod *corev1.Pod, devices Devices, want injected, wantErrText string) {
	t.Helper()
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Systemd)
	_, ctx := ktesting.NewTestContext(t)
	h := New(cgroupreconcile.New(cgroup.NewManager(fs.Layout()), cgroupreconcile.Features{}), &inputs{node: node(), pods: []*corev1.Pod{pod}},
		WithFailurePolicy(FailurePolicyFail), WithDevices(devices))
	adjust, _, err := h.CreateContainer(ctx, sandbox(pod), container("c", 0))
	switch {
	case wantErrText == "" && err != nil:
		t.Fatalf("CreateContainer: %v", err)
	case wantErrText != "" && (err == nil || !strings.Contains(err.Error(), wantErrText)):
		t.Fatalf("CreateContainer: error %v, want one naming %q", err, wantErrText)
	}
	if diff := cmp.Diff(want, fromAdjustment(adjust)); diff != "" {
		t.Errorf("injected (-want,+got):\n%s", diff)
	}
}

func TestGPUInjection(t *testing.T) {
	// The node has GPUs 0 and 1 (major 195, as NVIDIA's) and the control devices but nvidia-uvm-tools.
	nodeDevices := map[string][2]int64{
		"/host-dev/nvidia0": {195, 0}, "/host-dev/nvidia1": {195, 1}, "/host-dev/nvidiactl": {195, 255}, "/host-dev/nvidia-uvm": {507, 0},
	}
	numbers := func(path string) (int64, int64, bool) {
		n, ok := nodeDevices[path]
		return n[0], n[1], ok
	}
	const hamiLabel = extension.LabelGPUIsolationProvider
	cases := map[string]struct {
		gate        bool
		annotation  string
		labels      map[string]string
		want        injected
		wantErrText string
	}{
		"two whole GPUs: their minors, their device nodes and the control devices the node has": {
			gate: true, annotation: `{"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"100"}},{"minor":1}]}`,
			want: injected{
				Env:     []string{"NVIDIA_VISIBLE_DEVICES=0,1"},
				Devices: []string{"/dev/nvidia0 c 195:0 666", "/dev/nvidia1 c 195:1 666", "/dev/nvidiactl c 195:255 666", "/dev/nvidia-uvm c 507:0 666"},
			},
		},
		"a GPU the node's /dev does not show: the variable only": {
			gate: true, annotation: `{"gpu":[{"minor":3}]}`,
			want: injected{Env: []string{"NVIDIA_VISIBLE_DEVICES=3"}, Devices: []string{"/dev/nvidiactl c 195:255 666", "/dev/nvidia-uvm c 507:0 666"}},
		},
		"HAMi-core, half a GPU: its limits, the library preloaded and mounted, the lock directory": {
			gate:       true,
			annotation: `{"gpu":[{"minor":1,"resources":{"koordinator.sh/gpu-core":"50","koordinator.sh/gpu-memory-ratio":"50","koordinator.sh/gpu-memory":"8Gi"}}]}`,
			labels:     map[string]string{hamiLabel: extension.GPUIsolationProviderHAMICore},
			want: injected{
				Env: []string{"NVIDIA_VISIBLE_DEVICES=1", "CUDA_DEVICE_MEMORY_LIMIT=8589934592", "CUDA_DEVICE_SM_LIMIT=50",
					"LD_PRELOAD=/usr/local/vgpu/libvgpu.so"},
				Devices: []string{"/dev/nvidia1 c 195:1 666", "/dev/nvidiactl c 195:255 666", "/dev/nvidia-uvm c 507:0 666"},
				Mounts: []string{"/usr/local/vgpu/libvgpu.so /usr/local/vgpu/libvgpu.so bind rbind",
					"/tmp/vgpulock /tmp/vgpulock bind rbind"},
			},
		},
		"HAMi-core, a whole GPU: no isolation needed": {
			gate:       true,
			annotation: `{"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory-ratio":"100","koordinator.sh/gpu-memory":"16Gi"}}]}`,
			labels:     map[string]string{hamiLabel: extension.GPUIsolationProviderHAMICore},
			want: injected{Env: []string{"NVIDIA_VISIBLE_DEVICES=0"},
				Devices: []string{"/dev/nvidia0 c 195:0 666", "/dev/nvidiactl c 195:255 666", "/dev/nvidia-uvm c 507:0 666"}},
		},
		"HAMi-core without a memory ratio: an error naming it, the GPUs still given": {
			gate: true, annotation: `{"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"50"}}]}`,
			labels: map[string]string{hamiLabel: extension.GPUIsolationProviderHAMICore},
			want: injected{Env: []string{"NVIDIA_VISIBLE_DEVICES=0"},
				Devices: []string{"/dev/nvidia0 c 195:0 666", "/dev/nvidiactl c 195:255 666", "/dev/nvidia-uvm c 507:0 666"}},
			wantErrText: "koordinator.sh/gpu-memory-ratio",
		},
		"RDMA only: nothing for GPUs": {
			gate: true, annotation: `{"rdma":[{"minor":0}]}`,
		},
		"a malformed allocation: an error naming the annotation": {
			gate: true, annotation: `{"gpu":`, wantErrText: extension.AnnotationDeviceAllocated,
		},
		"GPUEnvInject off: nothing": {
			annotation: `{"gpu":[{"minor":0}]}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := qostest.Pod("gpu", qostest.KubeQoS(corev1.PodQOSBurstable), qostest.Container("c", "", nil, nil),
				qostest.Annotation(extension.AnnotationDeviceAllocated, tc.annotation))
			for k, v := range tc.labels {
				qostest.Label(k, v)(pod)
			}
			checkInjection(t, pod, Devices{GPU: tc.gate, DevRoot: "/host-dev", HAMiCoreLibrary: DefaultHAMiCoreLibrary, numbers: numbers},
				tc.want, tc.wantErrText)
		})
	}
}

func TestRDMAInjection(t *testing.T) {
	// A node's sysfs: rdma_cm, a NIC at 0000:3b:00.0 (uverbs0) with a virtual function at 0000:3b:00.2
	// (uverbs2).
	sys := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sys, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sys, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("class/misc/rdma_cm/dev", "10:58\n")
	write("bus/pci/devices/0000:3b:00.0/infiniband_verbs/uverbs0/ibdev", "mlx5_0\n")
	write("bus/pci/devices/0000:3b:00.2/infiniband_verbs/uverbs2/ibdev", "mlx5_2\n")
	write("class/infiniband_verbs/uverbs0/dev", "231:192\n")
	write("class/infiniband_verbs/uverbs2/dev", "231:194\n")

	cases := map[string]struct {
		annotation  string
		want        injected
		wantErrText string
	}{
		"a NIC and one of its virtual functions: rdma_cm, the VF's uverbs, the NIC's": {
			annotation: `{"rdma":[{"minor":0,"id":"0000:3b:00.0","resources":{"koordinator.sh/rdma":"1"},"extension":{"vfs":[{"minor":1,"busID":"0000:3b:00.2"}]}}]}`,
			want: injected{Devices: []string{"/dev/infiniband/rdma_cm c 10:58 666", "/dev/infiniband/uverbs2 c 231:194 666",
				"/dev/infiniband/uverbs0 c 231:192 666"}},
		},
		"a NIC sysfs does not show: named in the error, the rest still given": {
			annotation:  `{"rdma":[{"minor":0,"id":"0000:3b:00.0"},{"minor":1,"id":"0000:af:00.0"}]}`,
			want:        injected{Devices: []string{"/dev/infiniband/rdma_cm c 10:58 666", "/dev/infiniband/uverbs0 c 231:192 666"}},
			wantErrText: "0000:af:00.0",
		},
		"GPUs only: nothing for RDMA": {
			annotation: `{"gpu":[{"minor":0}]}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := qostest.Pod("rdma", qostest.KubeQoS(corev1.PodQOSBurstable), qostest.Container("c", "", nil, nil),
				qostest.Annotation(extension.AnnotationDeviceAllocated, tc.annotation))
			checkInjection(t, pod, Devices{RDMA: true, SysRoot: sys}, tc.want, tc.wantErrText)
		})
	}
}
