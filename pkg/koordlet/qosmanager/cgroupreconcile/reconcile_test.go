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

package cgroupreconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

var layouts = []struct {
	v cgroup.Version
	d cgroup.Driver
}{{cgroup.V1, cgroup.Cgroupfs}, {cgroup.V1, cgroup.Systemd}, {cgroup.V2, cgroup.Cgroupfs}, {cgroup.V2, cgroup.Systemd}}

// knobs reads the CPU shares (as cpu.shares), the CFS quota and the memory limit of dir in v1 terms.
type knobs struct {
	Shares int64
	Quota  int64
	Memory int64
}

func readKnobs(t *testing.T, cg *cgroup.Manager, dir string) knobs {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	shares, err := cg.CPUShares(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	quota, _, err := cg.CFSQuota(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := cg.MemoryLimit(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	return knobs{Shares: shares, Quota: quota, Memory: mem}
}

func batchPod() *corev1.Pod {
	return qostest.Pod("batch", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
		qostest.Container("a", "containerd://a",
			qostest.Resources("kubernetes.io/batch-cpu", "500"),
			qostest.Resources("kubernetes.io/batch-cpu", "1000", "kubernetes.io/batch-memory", "1Gi")),
		qostest.Container("b", "containerd://b", qostest.Resources("kubernetes.io/batch-cpu", "1500"), nil))
}

func run(t *testing.T, s *Strategy, pods ...*corev1.Pod) error {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	return s.Run(ctx, qostest.State(qostest.Node("8", "16Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{}), qostest.Cache(), pods...))
}

func TestBatchResourceAcrossLayouts(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			fs := cgrouptest.NewFS(t, l.v, l.d)
			cg := cgroup.NewManager(fs.Layout())
			pod := batchPod()
			podDir := fs.AddPod(corev1.PodQOSBestEffort, pod.UID)
			aDir := fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, "containerd://a")
			bDir := fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, "containerd://b")
			s := New(cg, Features{BatchResource: true})
			if err := run(t, s, pod); err != nil {
				t.Fatal(err)
			}
			// v2 stores weights; reading them back through the kubelet conversion is lossy.
			share := func(v int64) int64 {
				if l.v == cgroup.V2 {
					return cgroup.WeightToShares(cgroup.SharesToWeight(v))
				}
				return v
			}
			want := map[string]knobs{
				podDir: {Shares: share(2048), Quota: -1, Memory: -1},
				aDir:   {Shares: share(512), Quota: 100000, Memory: 1 << 30},
				bDir:   {Shares: share(1536), Quota: -1, Memory: -1},
			}
			for dir, w := range want {
				if diff := cmp.Diff(w, readKnobs(t, cg, dir)); diff != "" {
					t.Errorf("%s (-want,+got):\n%s", dir, diff)
				}
			}

			// Drift is repaired in the next round.
			if l.v == cgroup.V1 {
				fs.WriteFile(aDir, "cpu.shares", "1024")
				fs.WriteFile(aDir, "memory.limit_in_bytes", "9223372036854771712")
			} else {
				fs.WriteFile(aDir, "cpu.weight", "100")
				fs.WriteFile(aDir, "memory.max", "max")
			}
			if err := run(t, s, pod); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[aDir], readKnobs(t, cg, aDir)); diff != "" {
				t.Errorf("container a after drift (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestBatchQuotaCappedByBesteffortOnV1(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	cg := cgroup.NewManager(fs.Layout())
	// cpusuppress limited the besteffort cgroup to half a core.
	fs.WriteFile(fs.Layout().QoSDir(corev1.PodQOSBestEffort), "cpu.cfs_quota_us", "50000")
	pod := batchPod()
	podDir := fs.AddPod(corev1.PodQOSBestEffort, pod.UID)
	aDir := fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, "containerd://a")
	bDir := fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, "containerd://b")
	if err := run(t, New(cg, Features{BatchResource: true}), pod); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{podDir, aDir, bDir} {
		if got := fs.ReadFile(dir, "cpu.cfs_quota_us"); got != "50000" {
			t.Errorf("quota of %s = %s, want 50000 (the besteffort cgroup's)", dir, got)
		}
	}
}

func TestBatchSkipsWhatIsMissing(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	cg := cgroup.NewManager(fs.Layout())
	pod := batchPod()
	notStarted := qostest.Pod("pending", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
		qostest.Container("x", "containerd://x", qostest.Resources("kubernetes.io/batch-cpu", "1000"), nil))
	aDir := fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, "containerd://a")
	// Container b has exited and its cgroup is gone; container a's kernel lacks nothing, but the pod lacks
	// memory.limit_in_bytes (a knob the kernel does not offer).
	fs.RemoveFile(fs.Layout().PodDir(corev1.PodQOSBestEffort, pod.UID), "memory.limit_in_bytes")
	if err := run(t, New(cg, Features{BatchResource: true}), pod, notStarted); err != nil {
		t.Fatalf("Run = %v, want missing cgroups and knobs skipped quietly", err)
	}
	if got := fs.ReadFile(aDir, "cpu.shares"); got != "512" {
		t.Errorf("container a cpu.shares = %s, want 512", got)
	}
}

func TestCPUSetAllocator(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			fs := cgrouptest.NewFS(t, l.v, l.d)
			cg := cgroup.NewManager(fs.Layout())
			lse := qostest.Pod("lse", qostest.QoS(extension.QoSLSE), qostest.KubeQoS(corev1.PodQOSGuaranteed),
				qostest.CPUSet("6-7"), qostest.Container("e", "containerd://e", nil, nil))
			lsr := qostest.Pod("lsr", qostest.QoS(extension.QoSLSR), qostest.KubeQoS(corev1.PodQOSGuaranteed),
				qostest.CPUSet("2-3"), qostest.Container("r", "containerd://r", nil, nil))
			ls := qostest.Pod("ls", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
				qostest.Container("s", "containerd://s", nil, nil))
			unpinned := qostest.Pod("unpinned", qostest.KubeQoS(corev1.PodQOSGuaranteed), qostest.Container("u", "containerd://u", nil, nil))
			be := qostest.Pod("be", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
				qostest.Container("b", "containerd://b", nil, nil))
			dirs := map[string]string{}
			for _, p := range []*corev1.Pod{lse, lsr, ls, unpinned, be} {
				qos := p.Status.QOSClass
				dirs[p.Name] = fs.AddContainer(qos, p.UID, p.Status.ContainerStatuses[0].ContainerID)
			}
			// The node reserves CPU 0 for system daemons.
			node := qostest.Node("8", "16Gi")
			node.Annotations = map[string]string{extension.AnnotationNodeReservation: `{"reservedCPUs":"0"}`}

			s := New(cg, Features{CPUSetAllocator: true})
			_, ctx := ktesting.NewTestContext(t)
			st := qostest.State(node, qostest.NodeSLO(slov1alpha1.NodeSLOSpec{}), qostest.Cache(), lse, lsr, ls, unpinned, be)
			if err := s.Run(ctx, st); err != nil {
				t.Fatal(err)
			}
			inherited := "0-7"
			if l.v == cgroup.V2 {
				inherited = "" // nothing written: the fresh v2 cgroup inherits
			}
			want := map[string]string{"lse": "6-7", "lsr": "2-3", "ls": "1,4-5", "unpinned": inherited, "be": inherited}
			got := map[string]string{}
			for name, dir := range dirs {
				got[name] = fs.ReadFile(dir, "cpuset.cpus")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("container cpusets (-want,+got):\n%s", diff)
			}
		})
	}
}

// LS pods the scheduler gave cpu on NUMA nodes (numaNodeResources) run on the shared pool's CPUs of those NUMA
// nodes; the NUMA nodes are 0-3 and 4-7, and an LSR pod holds 2-3.
func TestCPUSetAllocatorConfinesToNUMANodes(t *testing.T) {
	numa := func(resources string) qostest.PodOption {
		return qostest.Annotation(extension.AnnotationResourceStatus, `{"numaNodeResources":[`+resources+`]}`)
	}
	pods := []*corev1.Pod{
		qostest.Pod("lsr", qostest.QoS(extension.QoSLSR), qostest.KubeQoS(corev1.PodQOSGuaranteed),
			qostest.CPUSet("2-3"), qostest.Container("r", "containerd://r", nil, nil)),
		qostest.Pod("numa0", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
			numa(`{"node":0,"resources":{"cpu":"1500m","memory":"1Gi"}}`), qostest.Container("a", "containerd://a", nil, nil)),
		qostest.Pod("numa1", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
			numa(`{"node":1,"resources":{"cpu":"2"}}`), qostest.Container("b", "containerd://b", nil, nil)),
		qostest.Pod("both", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
			numa(`{"node":0,"resources":{"cpu":"1"}},{"node":1,"resources":{"cpu":"1"}}`), qostest.Container("c", "containerd://c", nil, nil)),
		// An LSR pod with ConstrainedBurst: NUMA resources and no cpuset.
		qostest.Pod("burst", qostest.QoS(extension.QoSLSR), qostest.KubeQoS(corev1.PodQOSGuaranteed),
			numa(`{"node":1,"resources":{"cpu":"2"}}`), qostest.Container("f", "containerd://f", nil, nil)),
		// Memory alone on a NUMA node does not confine the CPUs.
		qostest.Pod("memory", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
			numa(`{"node":1,"resources":{"memory":"1Gi"}}`), qostest.Container("d", "containerd://d", nil, nil)),
		// A NUMA node the machine does not have: the whole shared pool rather than no CPU.
		qostest.Pod("unknown", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
			numa(`{"node":7,"resources":{"cpu":"1"}}`), qostest.Container("e", "containerd://e", nil, nil)),
	}
	nodes := map[int]cpuset.CPUSet{0: cpuset.New(0, 1, 2, 3), 1: cpuset.New(4, 5, 6, 7)}
	tests := map[string]struct {
		read    func() (map[int]cpuset.CPUSet, error)
		want    map[string]string
		wantErr string
	}{
		"NUMA nodes known": {
			read: func() (map[int]cpuset.CPUSet, error) { return nodes, nil },
			want: map[string]string{"lsr": "2-3", "numa0": "0-1", "numa1": "4-7", "both": "0-1,4-7", "burst": "4-7", "memory": "0-1,4-7", "unknown": "0-1,4-7"},
		},
		"NUMA nodes unreadable: the shared pool, and the error": {
			read: func() (map[int]cpuset.CPUSet, error) { return nil, errors.New("no sysfs") },
			want: map[string]string{"lsr": "2-3", "numa0": "0-1,4-7", "numa1": "0-1,4-7", "both": "0-1,4-7", "burst": "0-1,4-7",
				"memory": "0-1,4-7", "unknown": "0-1,4-7"},
			wantErr: "confine to NUMA nodes [0]: no sysfs",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
			cg := cgroup.NewManager(fs.Layout())
			dirs := map[string]string{}
			for _, p := range pods {
				dirs[p.Name] = fs.AddContainer(p.Status.QOSClass, p.UID, p.Status.ContainerStatuses[0].ContainerID)
			}
			s := New(cg, Features{CPUSetAllocator: true}, WithNUMACPUs(tc.read))
			_, ctx := ktesting.NewTestContext(t)
			st := qostest.State(qostest.Node("8", "16Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{}), qostest.Cache(), pods...)
			err := s.Run(ctx, st)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Run error = %v, want one containing %q", err, tc.wantErr)
			}
			got := map[string]string{}
			for name, dir := range dirs {
				got[name] = fs.ReadFile(dir, "cpuset.cpus")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("container cpusets (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestFeaturesOffWriteNothing(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	cg := cgroup.NewManager(fs.Layout())
	pod := batchPod()
	aDir := fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, "containerd://a")
	ls := qostest.Pod("ls", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable), qostest.Container("s", "containerd://s", nil, nil))
	sDir := fs.AddContainer(corev1.PodQOSBurstable, ls.UID, "containerd://s")
	if err := run(t, New(cg, Features{}), pod, ls); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, knob string }{{aDir, "cpu.shares"}, {aDir, "cpu.cfs_quota_us"}, {aDir, "memory.limit_in_bytes"}, {sDir, "cpuset.cpus"}} {
		if fs.Changed(c.dir, c.knob) {
			t.Errorf("%s %s was written with every feature off", c.dir, c.knob)
		}
	}
}

func TestMalformedResourceStatusIsReported(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	cg := cgroup.NewManager(fs.Layout())
	bad := qostest.Pod("bad", qostest.QoS(extension.QoSLSR), qostest.KubeQoS(corev1.PodQOSGuaranteed),
		qostest.Annotation(extension.AnnotationResourceStatus, `{"cpuset":"x-y"}`), qostest.Container("c", "containerd://c", nil, nil))
	dir := fs.AddContainer(corev1.PodQOSGuaranteed, bad.UID, "containerd://c")
	err := run(t, New(cg, Features{CPUSetAllocator: true}), bad)
	if err == nil || !strings.Contains(err.Error(), "default/bad") {
		t.Fatalf("Run = %v, want an error naming the pod", err)
	}
	if fs.Changed(dir, "cpuset.cpus") {
		t.Errorf("a pod with a malformed resource-status was pinned")
	}
}

func BenchmarkReconcile(b *testing.B) {
	for _, pods := range []int{50} {
		b.Run("pods="+strconv.Itoa(pods), func(b *testing.B) {
			fs := cgrouptest.NewFS(b, cgroup.V1, cgroup.Cgroupfs)
			cg := cgroup.NewManager(fs.Layout())
			var list []*corev1.Pod
			for i := range pods {
				name := "p" + strconv.Itoa(i)
				var p *corev1.Pod
				if i%2 == 0 {
					p = qostest.Pod(name, qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort))
				} else {
					p = qostest.Pod(name, qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable))
				}
				for c := range 3 {
					id := fmt.Sprintf("containerd://%s-%d", name, c)
					qostest.Container(fmt.Sprintf("c%d", c), id,
						qostest.Resources("kubernetes.io/batch-cpu", "500"),
						qostest.Resources("kubernetes.io/batch-cpu", "1000", "kubernetes.io/batch-memory", "1Gi"))(p)
					fs.AddContainer(p.Status.QOSClass, p.UID, id)
				}
				list = append(list, p)
			}
			s := New(cg, Features{BatchResource: true, CPUSetAllocator: true})
			// The agent's default verbosity, so that debug logging does not count.
			ctx := klog.NewContext(context.Background(), ktesting.NewLogger(b, ktesting.NewConfig(ktesting.Verbosity(2))))
			st := qostest.State(qostest.Node("8", "16Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{}), qostest.Cache(), list...)
			if err := s.Run(ctx, st); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Run(ctx, st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCPUSetAllocatorWithKubelet: a pod kubelet's static CPU manager pinned keeps its cpuset, the LS pool
// leaves its CPUs out, and pods bound to CPUs by the scheduler lose their CFS quota, pod and containers.
func TestCPUSetAllocatorWithKubelet(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			fs := cgrouptest.NewFS(t, l.v, l.d)
			cg := cgroup.NewManager(fs.Layout())
			lsr := qostest.Pod("lsr", qostest.QoS(extension.QoSLSR), qostest.KubeQoS(corev1.PodQOSGuaranteed),
				qostest.CPUSet("2-3"), qostest.Container("r", "containerd://r", nil, nil))
			ls := qostest.Pod("ls", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
				qostest.Container("s", "containerd://s", nil, nil))
			// A Guaranteed LS pod that kubelet pinned to 4-5.
			pinned := qostest.Pod("pinned", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSGuaranteed),
				qostest.Container("p", "containerd://p", nil, nil))
			dirs := map[string]string{}
			for _, p := range []*corev1.Pod{lsr, ls, pinned} {
				dirs[p.Name] = fs.AddContainer(p.Status.QOSClass, p.UID, p.Status.ContainerStatuses[0].ContainerID)
			}
			fs.WriteFile(dirs["pinned"], "cpuset.cpus", "4-5")
			lsrPod := fs.Layout().PodDir(corev1.PodQOSGuaranteed, lsr.UID)
			for _, dir := range []string{lsrPod, dirs["lsr"]} {
				if l.v == cgroup.V1 {
					fs.WriteFile(dir, "cpu.cfs_quota_us", "200000")
				} else {
					fs.WriteFile(dir, "cpu.max", "200000 100000")
				}
			}

			s := New(cg, Features{CPUSetAllocator: true})
			_, ctx := ktesting.NewTestContext(t)
			st := qostest.State(qostest.Node("8", "16Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{}), qostest.Cache(), lsr, ls, pinned)
			st.KubeletCPUs = map[types.UID]cpuset.CPUSet{pinned.UID: cpuset.New(4, 5)}
			if err := s.Run(ctx, st); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name, dir := range dirs {
				got[name] = fs.ReadFile(dir, "cpuset.cpus")
			}
			if diff := cmp.Diff(map[string]string{"lsr": "2-3", "ls": "0-1,6-7", "pinned": "4-5"}, got); diff != "" {
				t.Errorf("container cpusets (-want,+got):\n%s", diff)
			}
			for _, dir := range []string{lsrPod, dirs["lsr"]} {
				if q := readKnobs(t, cg, dir).Quota; q != Unlimited {
					t.Errorf("%s: CFS quota %d, want unlimited for a pod bound to CPUs", dir, q)
				}
			}
		})
	}
}
