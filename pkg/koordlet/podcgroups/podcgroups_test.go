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

package podcgroups

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
)

// bePod is a BE pod (Kubernetes BestEffort: batch resources only) with one started and one waiting container.
func bePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "be", UID: "uid-be", Labels: map[string]string{extension.LabelPodQoS: string(extension.QoSBE)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{extension.BatchCPU: resource.MustParse("1000")},
		}}, {Name: "waiting"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "main", ContainerID: "containerd://c1"}, {Name: "waiting"},
		}},
	}
}

// TestRead: the settings of the pod's and the started container's cgroups as the files have them, on v1 and
// v2; knobs the kernel lacks are left out.
func TestRead(t *testing.T) {
	ctx := t.Context()
	tests := map[string]struct {
		version cgroup.Version
		write   func(fs *cgrouptest.FS, pod, ctr string)
		wantPod func(pod string) Settings
		wantCtr func(ctr string) Settings
	}{
		"v1": {
			version: cgroup.V1,
			write: func(fs *cgrouptest.FS, pod, ctr string) {
				fs.WriteFile(pod, "cpu.shares", "2\n")
				fs.WriteFile(ctr, "cpu.cfs_quota_us", "100000\n")
				fs.WriteFile(ctr, "cpu.idle", "1\n")
				fs.WriteFile(ctr, "memory.limit_in_bytes", "2147483648\n")
				// A kernel before 5.14: no burst.
				fs.RemoveFile(ctr, "cpu.cfs_burst_us")
			},
			wantPod: func(dir string) Settings {
				return Settings{Dir: dir, CPUShares: ptr.To[int64](2), CFSQuotaUs: ptr.To[int64](-1), CFSPeriodUs: ptr.To[int64](100000),
					CFSBurstUs: ptr.To[int64](0), CPUSet: ptr.To("0-7"), CPUIdle: ptr.To[int64](0), MemoryLimitBytes: ptr.To[int64](-1)}
			},
			wantCtr: func(dir string) Settings {
				return Settings{Dir: dir, CPUShares: ptr.To[int64](1024), CFSQuotaUs: ptr.To[int64](100000), CFSPeriodUs: ptr.To[int64](100000),
					CPUSet: ptr.To("0-7"), CPUIdle: ptr.To[int64](1), MemoryLimitBytes: ptr.To[int64](2 << 30)}
			},
		},
		"v2": {
			version: cgroup.V2,
			write: func(fs *cgrouptest.FS, pod, ctr string) {
				fs.WriteFile(ctr, "cpu.max", "50000 100000\n")
				fs.WriteFile(ctr, "memory.min", "1048576\n")
				fs.WriteFile(ctr, "memory.high", "4194304\n")
			},
			wantPod: func(dir string) Settings {
				// cpu.weight 100 is 2597 shares by kubelet's conversion.
				return Settings{Dir: dir, CPUShares: ptr.To[int64](2597), CFSQuotaUs: ptr.To[int64](-1), CFSPeriodUs: ptr.To[int64](100000),
					CFSBurstUs: ptr.To[int64](0), CPUSet: ptr.To("0-7"), CPUIdle: ptr.To[int64](0), MemoryLimitBytes: ptr.To[int64](-1),
					MemoryHighBytes: ptr.To[int64](-1), MemoryMinBytes: ptr.To[int64](0), MemoryLowBytes: ptr.To[int64](0)}
			},
			wantCtr: func(dir string) Settings {
				return Settings{Dir: dir, CPUShares: ptr.To[int64](2597), CFSQuotaUs: ptr.To[int64](50000), CFSPeriodUs: ptr.To[int64](100000),
					CFSBurstUs: ptr.To[int64](0), CPUSet: ptr.To("0-7"), CPUIdle: ptr.To[int64](0), MemoryLimitBytes: ptr.To[int64](-1),
					MemoryHighBytes: ptr.To[int64](4 << 20), MemoryMinBytes: ptr.To[int64](1 << 20), MemoryLowBytes: ptr.To[int64](0)}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fs := cgrouptest.NewFS(t, tc.version, cgroup.Cgroupfs)
			pod := bePod()
			podDir := fs.AddPod(corev1.PodQOSBestEffort, pod.UID)
			ctrDir := fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, "containerd://c1")
			tc.write(fs, podDir, ctrDir)
			want := &Pod{
				Namespace: "ns", Name: "be", UID: "uid-be", QoSClass: "BE", KubeQoSClass: "BestEffort", CgroupVersion: tc.version.String(),
				Pod:        tc.wantPod(podDir),
				Containers: []Container{{Name: "main", ContainerID: "containerd://c1", Settings: tc.wantCtr(ctrDir)}},
			}
			if diff := cmp.Diff(want, Read(ctx, cgroup.NewManager(fs.Layout()), pod)); diff != "" {
				t.Errorf("Read (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestReadGone: a pod whose cgroup is gone says so once, without the other knobs.
func TestReadGone(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	got := Read(t.Context(), cgroup.NewManager(fs.Layout()), bePod())
	if len(got.Pod.Errors) != 1 || got.Pod.CPUShares != nil || got.Pod.MemoryLimitBytes != nil {
		t.Errorf("settings of a missing pod cgroup: %+v, want only one error", got.Pod)
	}
	if len(got.Containers) != 1 || len(got.Containers[0].Errors) != 1 {
		t.Errorf("containers of a missing pod cgroup: %+v, want one with one error", got.Containers)
	}
}

// TestHandler: the endpoint answers the node's pod by namespace and name, and 404 for another.
func TestHandler(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	pod := bePod()
	fs.AddPod(corev1.PodQOSBestEffort, pod.UID)
	fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, "containerd://c1")
	mux := http.NewServeMux()
	mux.Handle(Path, Handler(cgroup.NewManager(fs.Layout()), func() []*corev1.Pod { return []*corev1.Pod{pod} }))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + URLPath("ns", "be"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var got Pod
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s, %v", resp.Status, err)
	}
	if got.UID != "uid-be" || len(got.Containers) != 1 || got.Containers[0].CPUShares == nil {
		t.Errorf("GET returned %+v", got)
	}

	other, err := http.Get(srv.URL + URLPath("ns", "other"))
	if err != nil {
		t.Fatal(err)
	}
	_ = other.Body.Close()
	if other.StatusCode != http.StatusNotFound {
		t.Errorf("GET of a pod not on the node: %s, want 404", other.Status)
	}
}
