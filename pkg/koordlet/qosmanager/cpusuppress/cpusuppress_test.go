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

package cpusuppress

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

var layouts = []struct {
	v cgroup.Version
	d cgroup.Driver
}{{cgroup.V1, cgroup.Cgroupfs}, {cgroup.V1, cgroup.Systemd}, {cgroup.V2, cgroup.Cgroupfs}, {cgroup.V2, cgroup.Systemd}}

// env is an 8-CPU node (CPUs 0-7) with an LS pod "web" and a BE pod "batch", on a fake cgroupfs.
type env struct {
	fs       *cgrouptest.FS
	cg       *cgroup.Manager
	node     *corev1.Node
	cache    *metriccache.Cache
	pods     []*corev1.Pod
	beDir    string
	podDir   string
	ctrDir   string
	metrics  *Metrics
	strategy *Strategy
}

func newEnv(t *testing.T, v cgroup.Version, d cgroup.Driver, extra ...*corev1.Pod) *env {
	t.Helper()
	fs := cgrouptest.NewFS(t, v, d)
	e := &env{fs: fs, cg: cgroup.NewManager(fs.Layout()), node: qostest.Node("8", "16Gi"), cache: qostest.Cache(), metrics: NewMetrics()}
	web := qostest.Pod("web", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
		qostest.Container("app", "", nil, nil))
	batch := qostest.Pod("batch", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
		qostest.Container("job", "containerd://b1", nil, nil))
	e.pods = append([]*corev1.Pod{web, batch}, extra...)
	fs.AddContainer(corev1.PodQOSBurstable, web.UID, "containerd://app")
	e.ctrDir = fs.AddContainer(corev1.PodQOSBestEffort, batch.UID, "containerd://b1")
	e.podDir = fs.Layout().PodDir(corev1.PodQOSBestEffort, batch.UID)
	e.beDir = fs.Layout().QoSDir(corev1.PodQOSBestEffort)
	e.usage(2.5, 0.5, map[string]float64{"web": 1.2, "batch": 0.8})
	e.strategy = New(e.cg, WithMetrics(e.metrics))
	return e
}

// usage records samples at qostest.Now: node, system and per pod CPU in cores.
func (e *env) usage(node, system float64, pods map[string]float64) {
	e.cache.Append(qosmanager.NodeKey(corev1.ResourceCPU), qostest.Now, node)
	e.cache.Append(qosmanager.SystemKey(corev1.ResourceCPU), qostest.Now, system)
	for name, u := range pods {
		e.cache.Append(qosmanager.PodKey(qostest.UID(name), corev1.ResourceCPU), qostest.Now, u)
	}
}

func (e *env) run(t *testing.T, threshold *slov1alpha1.ResourceThresholdStrategy) error {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	slo := qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: threshold})
	return e.strategy.Run(ctx, qostest.State(e.node, slo, e.cache, e.pods...))
}

// cpusets returns the CPUs of the besteffort cgroup, the BE pod and its container (on v2 the effective ones
// when a cgroup sets none itself).
func (e *env) cpusets(t *testing.T) []string {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	var out []string
	for _, dir := range []string{e.beDir, e.podDir, e.ctrDir} {
		cpus, err := e.cg.CPUSet(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cpus.String())
	}
	return out
}

func (e *env) quota(dir string) string {
	if e.fs.Layout().Version == cgroup.V1 {
		return e.fs.ReadFile(dir, "cpu.cfs_quota_us")
	}
	return e.fs.ReadFile(dir, "cpu.max")
}

func enabled(policy slov1alpha1.CPUSuppressPolicy) *slov1alpha1.ResourceThresholdStrategy {
	return &slov1alpha1.ResourceThresholdStrategy{Enable: ptr.To(true), CPUSuppressPolicy: policy}
}

func three(s string) []string { return []string{s, s, s} }

func TestCPUSetPolicy(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			e := newEnv(t, l.v, l.d)
			// 8 × 65% = 5.2; − 1.2 (web) − max(0.5, 0) = 3.5 → 4 CPUs, shrinking from 8 at once.
			if err := e.run(t, enabled(slov1alpha1.CPUSetPolicy)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(three("0-3"), e.cpusets(t)); diff != "" {
				t.Errorf("cpusets after the first round (-want,+got):\n%s", diff)
			}
			if got := testutil.ToFloat64(e.metrics.allowed); got != 3.5 {
				t.Errorf("allowed = %v, want 3.5", got)
			}
			if got := testutil.ToFloat64(e.metrics.suppress.WithLabelValues("cpuset")); got != 4 {
				t.Errorf("suppress{cpuset} = %v, want 4", got)
			}

			// web goes idle: 5.2 − 0 − 0.5 = 4.7 → 5 CPUs; growth limit ceil(10% of 8) = 1 allows it.
			e.usage(1, 0.5, map[string]float64{"web": 0, "batch": 0.5})
			if err := e.run(t, enabled(slov1alpha1.CPUSetPolicy)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(three("0-4"), e.cpusets(t)); diff != "" {
				t.Errorf("cpusets after web went idle (-want,+got):\n%s", diff)
			}

			// The threshold rises to 100%: 8 − 0 − 0.5 = 7.5 → 8, but the growth limit gives 6.
			high := enabled(slov1alpha1.CPUSetPolicy)
			high.CPUSuppressThresholdPercent = ptr.To[int64](100)
			if err := e.run(t, high); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(three("0-5"), e.cpusets(t)); diff != "" {
				t.Errorf("cpusets after raising the threshold (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestCPUSetPolicyExcludesLSEAndShareLSR(t *testing.T) {
	lse := qostest.Pod("lse", qostest.QoS(extension.QoSLSE), qostest.KubeQoS(corev1.PodQOSGuaranteed), qostest.CPUSet("6-7"))
	lsr := qostest.Pod("lsr", qostest.QoS(extension.QoSLSR), qostest.KubeQoS(corev1.PodQOSGuaranteed), qostest.CPUSet("4-5"))
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, lse, lsr)
	// 3.5 → 4 CPUs from LSR {4,5} and LS {0-3}: 4 × 2/6 = 1 from LSR, 3 from LS.
	if err := e.run(t, enabled(slov1alpha1.CPUSetPolicy)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(three("0-2,4"), e.cpusets(t)); diff != "" {
		t.Errorf("cpusets (-want,+got):\n%s", diff)
	}

	// Disabled: restored to every CPU BE pods may use, LSE's excluded.
	if err := e.run(t, &slov1alpha1.ResourceThresholdStrategy{Enable: ptr.To(false)}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(three("0-5"), e.cpusets(t)); diff != "" {
		t.Errorf("cpusets after disabling (-want,+got):\n%s", diff)
	}
}

func TestCFSQuotaPolicy(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			e := newEnv(t, l.v, l.d)
			// The BE pod's own quota (5 cores, from its batch-cpu limit) is above the allowance.
			if l.v == cgroup.V1 {
				e.fs.WriteFile(e.podDir, "cpu.cfs_quota_us", "500000")
				e.fs.WriteFile(e.ctrDir, "cpu.cfs_quota_us", "500000")
			} else {
				e.fs.WriteFile(e.podDir, "cpu.max", "500000 100000")
				e.fs.WriteFile(e.ctrDir, "cpu.max", "500000 100000")
			}
			// 3.5 cores × 100000 µs.
			if err := e.run(t, enabled(slov1alpha1.CPUCfsQuotaPolicy)); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{e.beDir: "350000", e.podDir: "350000", e.ctrDir: "350000"}
			if l.v == cgroup.V2 {
				// v2 has no parent-above-child rule: the children keep their quota.
				want = map[string]string{e.beDir: "350000 100000", e.podDir: "500000 100000", e.ctrDir: "500000 100000"}
			}
			for dir, w := range want {
				if got := e.quota(dir); got != w {
					t.Errorf("quota of %s = %q, want %q", dir, got, w)
				}
			}
			if got := testutil.ToFloat64(e.metrics.suppress.WithLabelValues("cfsQuota")); got != 3.5 {
				t.Errorf("suppress{cfsQuota} = %v, want 3.5", got)
			}
			// The cpuset policy's part was undone: every CPU.
			if diff := cmp.Diff(three("0-7"), e.cpusets(t)); diff != "" {
				t.Errorf("cpusets (-want,+got):\n%s", diff)
			}

			// A change of less than 1% of the node (8000 µs) is not written.
			e.usage(2.5, 0.5, map[string]float64{"web": 1.15, "batch": 0.8})
			if err := e.run(t, enabled(slov1alpha1.CPUCfsQuotaPolicy)); err != nil {
				t.Fatal(err)
			}
			if got := e.quota(e.beDir); !strings.HasPrefix(got, "350000") {
				t.Errorf("quota after a small change = %q, want 350000 kept", got)
			}
			// web goes idle: 4.7 cores wanted, +10% of the node (80000 µs) per round.
			e.usage(1, 0.5, map[string]float64{"web": 0, "batch": 0.5})
			if err := e.run(t, enabled(slov1alpha1.CPUCfsQuotaPolicy)); err != nil {
				t.Fatal(err)
			}
			if got := e.quota(e.beDir); !strings.HasPrefix(got, "430000") {
				t.Errorf("quota after web went idle = %q, want 430000", got)
			}
		})
	}
}

func TestRestoreOnceWhenDisabledOrSwitched(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			e := newEnv(t, l.v, l.d)
			if err := e.run(t, enabled(slov1alpha1.CPUSetPolicy)); err != nil {
				t.Fatal(err)
			}
			// Switch to cfsQuota: the cpuset goes back to every CPU, the quota is set.
			if err := e.run(t, enabled(slov1alpha1.CPUCfsQuotaPolicy)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(three("0-7"), e.cpusets(t)); diff != "" {
				t.Errorf("cpusets after switching to cfsQuota (-want,+got):\n%s", diff)
			}
			// Disable: the quota goes back to unlimited.
			if err := e.run(t, &slov1alpha1.ResourceThresholdStrategy{Enable: ptr.To(false)}); err != nil {
				t.Fatal(err)
			}
			wantUnlimited := "-1"
			if l.v == cgroup.V2 {
				wantUnlimited = "max 100000"
			}
			if got := e.quota(e.beDir); got != wantUnlimited {
				t.Errorf("quota after disabling = %q, want %q", got, wantUnlimited)
			}
			if got := testutil.CollectAndCount(e.metrics.suppress); got != 0 {
				t.Errorf("suppress series while disabled = %d, want 0", got)
			}
			// Once restored, nothing is written again while disabled.
			e.fs.WriteFile(e.beDir, "cpuset.cpus", "0-1")
			if l.v == cgroup.V1 {
				e.fs.WriteFile(e.beDir, "cpu.cfs_quota_us", "100000")
			} else {
				e.fs.WriteFile(e.beDir, "cpu.max", "100000 100000")
			}
			if err := e.run(t, nil); err != nil {
				t.Fatal(err)
			}
			knob := "cpu.max"
			if l.v == cgroup.V1 {
				knob = "cpu.cfs_quota_us"
			}
			if e.fs.Changed(e.beDir, "cpuset.cpus") || e.fs.Changed(e.beDir, knob) {
				t.Errorf("a disabled strategy wrote the besteffort cgroup again after restoring it")
			}
		})
	}
}

func TestFirstRoundRestoresWhatAPreviousRunLeft(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs)
	e.fs.WriteFile(e.beDir, "cpu.cfs_quota_us", "200000")
	if err := e.run(t, enabled(slov1alpha1.CPUSetPolicy)); err != nil {
		t.Fatal(err)
	}
	if got := e.quota(e.beDir); got != "-1" {
		t.Errorf("besteffort quota left by a previous cfsQuota run = %q, want -1", got)
	}
}

func TestKeepsTheLastValidThreshold(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs)
	if err := e.run(t, enabled(slov1alpha1.CPUSetPolicy)); err != nil {
		t.Fatal(err)
	}
	invalid := enabled(slov1alpha1.CPUSetPolicy)
	invalid.CPUSuppressThresholdPercent = ptr.To[int64](40)
	invalid.MemoryEvictLowerPercent = ptr.To[int64](90)
	e.usage(1, 0.5, map[string]float64{"web": 0, "batch": 0.5})
	err := e.run(t, invalid)
	if err == nil || !strings.Contains(err.Error(), "memoryEvictLowerPercent") {
		t.Fatalf("Run with an invalid NodeSLO = %v, want an error naming memoryEvictLowerPercent", err)
	}
	// Still 65% (not the invalid 40%): 5.2 − 0 − 0.5 = 4.7 → 5 CPUs.
	if diff := cmp.Diff(three("0-4"), e.cpusets(t)); diff != "" {
		t.Errorf("cpusets with the last valid threshold (-want,+got):\n%s", diff)
	}
}

func TestNothingWrittenWithoutANodeSample(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs)
	e.cache = qostest.Cache()
	err := e.run(t, enabled(slov1alpha1.CPUSetPolicy))
	if err == nil || !strings.Contains(err.Error(), "no node CPU usage sample") {
		t.Fatalf("Run without samples = %v, want an error about the node sample", err)
	}
	if e.fs.Changed(e.beDir, "cpuset.cpus") {
		t.Errorf("the besteffort cpuset was written without usage samples")
	}
}

func TestSystemUsageFallsBackToNodeMinusPods(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs)
	e.cache = qostest.Cache()
	e.cache.Append(qosmanager.NodeKey(corev1.ResourceCPU), qostest.Now, 4)
	e.cache.Append(qosmanager.PodKey(qostest.UID("web"), corev1.ResourceCPU), qostest.Now, 1.2)
	e.cache.Append(qosmanager.PodKey(qostest.UID("batch"), corev1.ResourceCPU), qostest.Now, 0.8)
	if err := e.run(t, enabled(slov1alpha1.CPUSetPolicy)); err != nil {
		t.Fatal(err)
	}
	// system = 4 − 1.2 − 0.8 = 2; 5.2 − 1.2 − 2 = 2.
	if got := testutil.ToFloat64(e.metrics.allowed); got < 1.999 || got > 2.001 {
		t.Errorf("allowed = %v, want 2", got)
	}
}

func TestMetricsRegister(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs)
	e.strategy = New(e.cg, WithMetrics(m))
	if err := e.run(t, enabled(slov1alpha1.CPUSetPolicy)); err != nil {
		t.Fatal(err)
	}
	const want = `
# HELP koord_koordlet_be_cpu_allowed_cores CPU the BE pods may use by the suppression formula, in cores: capacity x cpuSuppressThresholdPercent - non-BE pods' and host applications' usage - max(system usage, node reserved), scaled by cpuSuppressPSIThresholdPercent / the non-BE pods' CPU pressure when that is higher, at least capacity x cpuSuppressMinPercent.
# TYPE koord_koordlet_be_cpu_allowed_cores gauge
koord_koordlet_be_cpu_allowed_cores 3.5
# HELP koord_koordlet_be_cpu_suppress_cores CPU the besteffort cgroup is limited to, in cores, by the policy in force (cpuset: number of CPUs; cfsQuota: quota / period). Absent while suppression is off.
# TYPE koord_koordlet_be_cpu_suppress_cores gauge
koord_koordlet_be_cpu_suppress_cores{policy="cpuset"} 4
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestMalformedReservationKeepsSuppressing(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs)
	e.node.Annotations = map[string]string{extension.AnnotationNodeReservation: `{"reservedCPUs":"x"}`}
	err := e.run(t, enabled(slov1alpha1.CPUSetPolicy))
	if err == nil || !strings.Contains(err.Error(), "node.koordinator.sh/reservation") {
		t.Errorf("Run with a malformed reservation = %v, want an error naming the annotation", err)
	}
	if diff := cmp.Diff(three("0-3"), e.cpusets(t)); diff != "" {
		t.Errorf("cpusets (-want,+got):\n%s", diff)
	}
}

func TestNonBEHostApplicationsCount(t *testing.T) {
	for name, tc := range map[string]struct {
		withSystem bool
		want       float64
	}{
		// 8 × 65 % = 5.2; − web 1.2 − nginx 1 (LS host app; the BE one does not count) − system 0.5 = 2.5.
		"with the system series": {withSystem: true, want: 2.5},
		// system = 4 − pods 2 − host apps 1.5 = 0.5: the same.
		"system from node minus pods and host apps": {want: 2.5},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, cgroup.V1, cgroup.Cgroupfs)
			e.cache = qostest.Cache()
			e.cache.Append(qosmanager.NodeKey(corev1.ResourceCPU), qostest.Now, 4)
			if tc.withSystem {
				e.cache.Append(qosmanager.SystemKey(corev1.ResourceCPU), qostest.Now, 0.5)
			}
			e.cache.Append(qosmanager.PodKey(qostest.UID("web"), corev1.ResourceCPU), qostest.Now, 1.2)
			e.cache.Append(qosmanager.PodKey(qostest.UID("batch"), corev1.ResourceCPU), qostest.Now, 0.8)
			e.cache.Append(qosmanager.HostAppKey("nginx", corev1.ResourceCPU), qostest.Now, 1)
			e.cache.Append(qosmanager.HostAppKey("yarn", corev1.ResourceCPU), qostest.Now, 0.5)
			_, ctx := ktesting.NewTestContext(t)
			slo := qostest.NodeSLO(slov1alpha1.NodeSLOSpec{
				ResourceUsedThresholdWithBE: enabled(slov1alpha1.CPUSetPolicy),
				HostApplications: []slov1alpha1.HostApplicationSpec{
					{Name: "nginx", QoS: string(extension.QoSLS)}, {Name: "yarn", QoS: string(extension.QoSBE)},
				},
			})
			if err := e.strategy.Run(ctx, qostest.State(e.node, slo, e.cache, e.pods...)); err != nil {
				t.Fatal(err)
			}
			if got := testutil.ToFloat64(e.metrics.allowed); math.Abs(got-tc.want) > 1e-3 {
				t.Errorf("allowed = %v, want %v", got, tc.want)
			}
		})
	}
}
