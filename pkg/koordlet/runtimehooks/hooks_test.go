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
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cgroupreconcile"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

// inputs is a fixed node, pod list and NodeSLO.
type inputs struct {
	node *corev1.Node
	pods []*corev1.Pod
	slo  *slov1alpha1.NodeSLO
}

func (i *inputs) Node() *corev1.Node            { return i.node }
func (i *inputs) Pods() []*corev1.Pod           { return i.pods }
func (i *inputs) NodeSLO() *slov1alpha1.NodeSLO { return i.slo }

// The pods of the node the tests run on: 8 CPUs, CPU 0 reserved for system daemons.
func bePod() *corev1.Pod {
	return qostest.Pod("be", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
		qostest.Container("a", "",
			qostest.Resources("kubernetes.io/batch-cpu", "500"),
			qostest.Resources("kubernetes.io/batch-cpu", "1000", "kubernetes.io/batch-memory", "1Gi")),
		qostest.Container("b", "", qostest.Resources("kubernetes.io/batch-cpu", "1500"), nil))
}

func lsrPod() *corev1.Pod {
	return qostest.Pod("lsr", qostest.QoS(extension.QoSLSR), qostest.KubeQoS(corev1.PodQOSGuaranteed),
		qostest.CPUSet("2-3"), qostest.Container("r", "", nil, nil))
}

func lsPod() *corev1.Pod {
	return qostest.Pod("ls", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
		qostest.Container("s", "", nil, nil))
}

func node() *corev1.Node {
	n := qostest.Node("8", "16Gi")
	n.Annotations = map[string]string{extension.AnnotationNodeReservation: `{"reservedCPUs":"0"}`}
	return n
}

// sandbox is the runtime's view of pod.
func sandbox(pod *corev1.Pod) *api.PodSandbox {
	return &api.PodSandbox{Id: "sandbox-" + pod.Name, Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID)}
}

// container is the runtime's view of a container named name, with kubelet's CFS period (0: none given).
func container(name string, periodUs uint64) *api.Container {
	c := &api.Container{Id: "ctr-" + name, Name: name}
	if periodUs > 0 {
		c.Linux = &api.LinuxContainer{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Period: api.UInt64(periodUs)}}}
	}
	return c
}

// adjusted is what an adjustment or update sets, in plain values.
type adjusted struct {
	Shares *uint64
	Quota  *int64
	Memory *int64
	CPUs   string
}

func fromResources(r *api.LinuxResources) adjusted {
	var a adjusted
	if cpu := r.GetCpu(); cpu != nil {
		if cpu.GetShares() != nil {
			a.Shares = ptr.To(cpu.GetShares().GetValue())
		}
		if cpu.GetQuota() != nil {
			a.Quota = ptr.To(cpu.GetQuota().GetValue())
		}
		a.CPUs = cpu.GetCpus()
	}
	if mem := r.GetMemory(); mem != nil && mem.GetLimit() != nil {
		a.Memory = ptr.To(mem.GetLimit().GetValue())
	}
	return a
}

func TestCreateContainer(t *testing.T) {
	const gi = int64(1) << 30
	unpinned := qostest.Pod("unpinned", qostest.KubeQoS(corev1.PodQOSGuaranteed), qostest.Container("u", "", nil, nil))
	pinnedByKubelet := qostest.Pod("pinned", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSGuaranteed),
		qostest.Container("p", "", nil, nil))
	cases := map[string]struct {
		version cgroup.Version
		// beQuota is the besteffort cgroup's CFS quota for a period of 100 ms (0: unlimited).
		beQuota   int64
		features  cgroupreconcile.Features
		pod       *corev1.Pod
		container *api.Container
		want      adjusted
	}{
		"BE container: batch shares, quota and memory": {
			pod: bePod(), container: container("a", 0),
			// 500m × 1024 / 1000 = 512 shares; 1000m of a 100 ms period = 100 ms.
			want: adjusted{Shares: ptr.To[uint64](512), Quota: ptr.To[int64](100000), Memory: ptr.To(gi)},
		},
		"BE container without limits: unlimited, as the reconcile loop makes it": {
			pod: bePod(), container: container("b", 0),
			want: adjusted{Shares: ptr.To[uint64](1536), Quota: ptr.To[int64](-1), Memory: ptr.To[int64](-1)},
		},
		"BE container: the quota follows kubelet's period": {
			pod: bePod(), container: container("a", 50000),
			want: adjusted{Shares: ptr.To[uint64](512), Quota: ptr.To[int64](50000), Memory: ptr.To(gi)},
		},
		"BE container, cgroup v1: the quota is capped at the besteffort cgroup's": {
			version: cgroup.V1, beQuota: 40000, pod: bePod(), container: container("b", 0),
			want: adjusted{Shares: ptr.To[uint64](1536), Quota: ptr.To[int64](40000), Memory: ptr.To[int64](-1)},
		},
		"BE container, cgroup v2: no cap (a child may exceed its parent's cpu.max)": {
			version: cgroup.V2, beQuota: 40000, pod: bePod(), container: container("a", 0),
			want: adjusted{Shares: ptr.To[uint64](512), Quota: ptr.To[int64](100000), Memory: ptr.To(gi)},
		},
		"LSR container: its scheduled CPUs, no CFS quota": {
			pod: lsrPod(), container: container("r", 0),
			want: adjusted{CPUs: "2-3", Quota: ptr.To[int64](-1)},
		},
		"LS container: the shared pool, without the reserved CPU, the LSR pod's and kubelet's": {
			pod: lsPod(), container: container("s", 0),
			want: adjusted{CPUs: "1,4-5,7"},
		},
		"a pod kubelet's static CPU manager pinned keeps kubelet's cpuset": {
			pod: pinnedByKubelet, container: container("p", 0),
		},
		"an LS pod of kube QoS BestEffort: no cpuset (the besteffort tree's belong to BE suppression)": {
			pod: qostest.Pod("ls-besteffort", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBestEffort),
				qostest.Container("s", "", nil, nil)),
			container: container("s", 0),
		},
		"a pod of no Koordinator class: nothing": {
			pod: unpinned, container: container("u", 0),
		},
		"BatchResource off: nothing for BE": {
			features: cgroupreconcile.Features{CPUSetAllocator: true}, pod: bePod(), container: container("a", 0),
		},
		"CPUSetAllocator off: nothing for LSR": {
			features: cgroupreconcile.Features{BatchResource: true}, pod: lsrPod(), container: container("r", 0),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			version := tc.version
			if version == 0 {
				version = cgroup.V1
			}
			fs := cgrouptest.NewFS(t, version, cgroup.Cgroupfs)
			cg := cgroup.NewManager(fs.Layout())
			_, ctx := ktesting.NewTestContext(t)
			if tc.beQuota > 0 {
				if _, err := cg.SetCFSQuota(ctx, fs.Layout().QoSDir(corev1.PodQOSBestEffort), tc.beQuota); err != nil {
					t.Fatal(err)
				}
			}
			features := tc.features
			if features == (cgroupreconcile.Features{}) {
				features = cgroupreconcile.Features{BatchResource: true, CPUSetAllocator: true}
			}
			pods := []*corev1.Pod{bePod(), lsrPod(), lsPod(), unpinned, pinnedByKubelet, tc.pod}
			h := New(cgroupreconcile.New(cg, features), &inputs{node: node(), pods: pods},
				WithKubeletCPUs(func() (map[types.UID]cpuset.CPUSet, error) {
					return map[types.UID]cpuset.CPUSet{pinnedByKubelet.UID: cpuset.New(6)}, nil
				}))

			adjust, updates, err := h.CreateContainer(ctx, sandbox(tc.pod), tc.container)
			if err != nil {
				t.Fatalf("CreateContainer: %v", err)
			}
			if len(updates) > 0 {
				t.Errorf("CreateContainer updated other containers: %v", updates)
			}
			if diff := cmp.Diff(tc.want, fromResources(adjust.GetLinux().GetResources())); diff != "" {
				t.Errorf("adjustment (-want,+got):\n%s", diff)
			}

			// kubelet's update of the container is answered with the same values.
			got, err := h.UpdateContainer(ctx, sandbox(tc.pod), tc.container, &api.LinuxResources{})
			if err != nil {
				t.Fatalf("UpdateContainer: %v", err)
			}
			var fromUpdate adjusted
			switch {
			case len(got) == 1 && got[0].GetContainerId() == tc.container.GetId():
				fromUpdate = fromResources(got[0].GetLinux().GetResources())
			case len(got) > 0:
				t.Fatalf("UpdateContainer returned %v, want one update of %s or none", got, tc.container.GetId())
			}
			if diff := cmp.Diff(tc.want, fromUpdate); diff != "" {
				t.Errorf("update (-want,+got):\n%s", diff)
			}
		})
	}
}

// A pod koordlet has not seen: nothing is changed, and the failure policy decides whether the runtime goes on.
func TestUnknownPod(t *testing.T) {
	for _, policy := range []FailurePolicy{FailurePolicyIgnore, FailurePolicyFail} {
		t.Run(string(policy), func(t *testing.T) {
			fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
			_, ctx := ktesting.NewTestContext(t)
			m := NewMetrics()
			h := New(cgroupreconcile.New(cgroup.NewManager(fs.Layout()), cgroupreconcile.Features{BatchResource: true, CPUSetAllocator: true}),
				&inputs{node: node()}, WithFailurePolicy(policy), WithPodWait(100*time.Millisecond), WithMetrics(m))
			adjust, _, err := h.CreateContainer(ctx, sandbox(bePod()), container("a", 0))
			if policy == FailurePolicyFail && err == nil {
				t.Error("CreateContainer: no error with failure policy Fail")
			}
			if policy == FailurePolicyIgnore && err != nil {
				t.Errorf("CreateContainer: %v with failure policy Ignore", err)
			}
			if got := fromResources(adjust.GetLinux().GetResources()); got != (adjusted{}) {
				t.Errorf("adjusted a container of an unknown pod: %+v", got)
			}
			if got := testutil.ToFloat64(m.calls.WithLabelValues(hookCreateContainer, resultFailed)); got != 1 {
				t.Errorf("failed CreateContainer calls = %v, want 1", got)
			}
		})
	}
}

// The hook waits for a pod koordlet learns of shortly after the runtime asks.
func TestPodLearnedLate(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	_, ctx := ktesting.NewTestContext(t)
	in := &lateInputs{inputs: inputs{node: node()}, after: 3, pod: bePod()}
	h := New(cgroupreconcile.New(cgroup.NewManager(fs.Layout()), cgroupreconcile.Features{BatchResource: true}), in)
	adjust, _, err := h.CreateContainer(ctx, sandbox(bePod()), container("a", 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := fromResources(adjust.GetLinux().GetResources()); got.Shares == nil || *got.Shares != 512 {
		t.Errorf("adjustment %+v, want the batch shares 512", got)
	}
}

// A static pod's sandbox carries the static pod's UID; koordlet knows its mirror pod, which names it.
func TestStaticPod(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	_, ctx := ktesting.NewTestContext(t)
	mirror := lsrPod()
	staticUID := "0123456789abcdef0123456789abcdef"
	qostest.Annotation(corev1.MirrorPodAnnotationKey, staticUID)(mirror)
	h := New(cgroupreconcile.New(cgroup.NewManager(fs.Layout()), cgroupreconcile.Features{CPUSetAllocator: true}),
		&inputs{node: node(), pods: []*corev1.Pod{mirror}}, WithFailurePolicy(FailurePolicyFail), WithPodWait(0))
	sb := sandbox(mirror)
	sb.Uid = staticUID
	adjust, _, err := h.CreateContainer(ctx, sb, container("r", 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := fromResources(adjust.GetLinux().GetResources()).CPUs; got != "2-3" {
		t.Errorf("the static pod's container got cpuset %q, want its mirror pod's 2-3", got)
	}
}

// lateInputs shows pod from the after-th call of Pods on.
type lateInputs struct {
	inputs
	after, calls int
	pod          *corev1.Pod
}

func (l *lateInputs) Pods() []*corev1.Pod {
	l.calls++
	if l.calls >= l.after {
		return []*corev1.Pod{l.pod}
	}
	return nil
}

// RunPodSandbox writes a BE pod's batch settings to its cgroup before any container exists.
func TestRunPodSandbox(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			fs := cgrouptest.NewFS(t, v, cgroup.Systemd)
			cg := cgroup.NewManager(fs.Layout())
			_, ctx := ktesting.NewTestContext(t)
			// The sandbox starts before the containers: no container statuses.
			pod := qostest.Pod("be", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort))
			pod.Spec.Containers = []corev1.Container{
				{Name: "a", Resources: corev1.ResourceRequirements{
					Requests: qostest.Resources("kubernetes.io/batch-cpu", "500"),
					Limits:   qostest.Resources("kubernetes.io/batch-cpu", "1000", "kubernetes.io/batch-memory", "1Gi")}},
				{Name: "b", Resources: corev1.ResourceRequirements{
					Requests: qostest.Resources("kubernetes.io/batch-cpu", "1500"),
					Limits:   qostest.Resources("kubernetes.io/batch-cpu", "1500", "kubernetes.io/batch-memory", "512Mi")}},
			}
			dir := fs.AddPod(corev1.PodQOSBestEffort, pod.UID)
			h := New(cgroupreconcile.New(cg, cgroupreconcile.Features{BatchResource: true}), &inputs{node: node(), pods: []*corev1.Pod{pod}})
			if err := h.RunPodSandbox(ctx, sandbox(pod)); err != nil {
				t.Fatal(err)
			}
			shares, err := cg.CPUShares(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			quota, period, err := cg.CFSQuota(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			memory, err := cg.MemoryLimit(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			// The pod's values are the sums of its containers': 2000m requested (2048 shares; on v2 cpu.weight
			// 79, which reads back as 2046), 2500m limited (250 ms a 100 ms period), 1.5Gi.
			wantShares := 2048
			if v == cgroup.V2 {
				wantShares = 2046
			}
			got := fmt.Sprintf("shares %d, quota %d/%d, memory %d", shares, quota, period, memory)
			if want := fmt.Sprintf("shares %d, quota 250000/100000, memory %d", wantShares, 3<<29); got != want {
				t.Errorf("pod cgroup: %s, want %s", got, want)
			}
		})
	}
}

func TestParseFailurePolicy(t *testing.T) {
	for _, s := range []string{"Ignore", "Fail"} {
		if p, err := ParseFailurePolicy(s); err != nil || string(p) != s {
			t.Errorf("ParseFailurePolicy(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParseFailurePolicy("ignore"); err == nil {
		t.Error(`ParseFailurePolicy("ignore"): no error`)
	}
}

// RunPodSandbox unsets the CFS quota kubelet gave an LSR pod bound to CPUs of its own, before its containers
// exist; an LS pod keeps its quota.
func TestRunPodSandboxUnsetsBoundQuota(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	cg := cgroup.NewManager(fs.Layout())
	_, ctx := ktesting.NewTestContext(t)
	lsr := lsrPod()
	ls := qostest.Pod("ls", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable), qostest.Container("l", "", nil, nil))
	lsrDir, lsDir := fs.AddPod(corev1.PodQOSGuaranteed, lsr.UID), fs.AddPod(corev1.PodQOSBurstable, ls.UID)
	for _, dir := range []string{lsrDir, lsDir} {
		fs.WriteFile(dir, "cpu.cfs_quota_us", "200000")
	}
	h := New(cgroupreconcile.New(cg, cgroupreconcile.Features{CPUSetAllocator: true}), &inputs{node: node(), pods: []*corev1.Pod{lsr, ls}})
	for _, p := range []*corev1.Pod{lsr, ls} {
		if err := h.RunPodSandbox(ctx, sandbox(p)); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.TrimSpace(fs.ReadFile(lsrDir, "cpu.cfs_quota_us")); got != "-1" {
		t.Errorf("LSR pod's quota = %s, want -1", got)
	}
	if got := strings.TrimSpace(fs.ReadFile(lsDir, "cpu.cfs_quota_us")); got != "200000" {
		t.Errorf("LS pod's quota = %s, want kubelet's 200000 kept", got)
	}
}

// TestMetricsStartAtZero: every hook and result is exported before any call, at 0.
func TestMetricsStartAtZero(t *testing.T) {
	m := NewMetrics()
	if got := testutil.CollectAndCount(m.calls); got != 9 {
		t.Errorf("%d hook call series before any call, want 9 (3 hooks x 3 results)", got)
	}
	if got := testutil.ToFloat64(m.calls.WithLabelValues(hookUpdateContainer, resultFailed)); got != 0 {
		t.Errorf("failed UpdateContainer calls = %v before any call, want 0", got)
	}
}
