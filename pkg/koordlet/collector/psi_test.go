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

package collector_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// pressure returns a pressure file with the given avg10 values: "some" only when full is negative, as cpu.pressure
// before Linux 5.13.
func pressure(some, full float64) string {
	s := fmt.Sprintf("some avg10=%.2f avg60=1.00 avg300=2.00 total=12345\n", some)
	if full >= 0 {
		s += fmt.Sprintf("full avg10=%.2f avg60=0.50 avg300=0.25 total=678\n", full)
	}
	return s
}

// writePressure writes the pressure file of resource r of dir, where the kernel keeps it in the fake's layout:
// on cgroup v1, the hybrid mount <root>/unified, where runc creates every pod's directory too.
func writePressure(t testing.TB, fs *cgrouptest.FS, dir string, r cgroup.PressureResource, content string) {
	t.Helper()
	path := fs.Layout().PressurePath(dir, r)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pressure writes the node's pressure file of r under the fake /proc.
func (p *fakeProc) pressure(r cgroup.PressureResource, content string) {
	p.t.Helper()
	if err := os.MkdirAll(filepath.Join(p.root, "pressure"), 0o755); err != nil {
		p.t.Fatal(err)
	}
	p.write(filepath.Join("pressure", string(r)), content)
}

var psiSeries = []corev1.ResourceName{
	metriccache.ResourcePSICPUSomeAvg10, metriccache.ResourcePSICPUFullAvg10,
	metriccache.ResourcePSIMemorySomeAvg10, metriccache.ResourcePSIMemoryFullAvg10,
	metriccache.ResourcePSIIOSomeAvg10, metriccache.ResourcePSIIOFullAvg10,
}

// psiKeys returns the PSI series keys of the node, and of every kind and ID in ids ("kind/id").
func psiKeys(ids ...metriccache.SeriesKey) []metriccache.SeriesKey {
	var keys []metriccache.SeriesKey
	for _, r := range psiSeries {
		keys = append(keys, metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: r})
		for _, id := range ids {
			keys = append(keys, metriccache.SeriesKey{Kind: id.Kind, ID: id.ID, Resource: r})
		}
	}
	return keys
}

// f32 is v as the cache stores it.
func f32(v float64) float64 { return float64(float32(v)) }

// TestCollectPSI: with WithPSI each round samples the node's and every running pod's pressure (not
// containers') into the cache and the gauges; a finished pod's gauges go at once, its series when it leaves.
func TestCollectPSI(t *testing.T) {
	for _, c := range combos {
		t.Run(comboName(c.v, c.d), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			fs := cgrouptest.NewFS(t, c.v, c.d)
			proc := newFakeProc(t)
			proc.stat(2, [8]uint64{1, 0, 0, 1})
			proc.meminfo(gi, gi/2, gi/2)
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			cache := metriccache.New(metriccache.Options{})
			metrics := collector.NewMetrics()
			reg := prometheus.NewPedanticRegistry()
			if err := metrics.Register(reg); err != nil {
				t.Fatal(err)
			}

			podA := makePod("a", corev1.PodQOSBurstable, "containerd://a1")
			podB := makePod("b", corev1.PodQOSGuaranteed)
			pods := &lister{pods: []*corev1.Pod{podA, podB}}
			dirA := fs.AddPod(corev1.PodQOSBurstable, podA.UID)
			ctrA := fs.AddContainer(corev1.PodQOSBurstable, podA.UID, "containerd://a1")
			dirB := fs.AddPod(corev1.PodQOSGuaranteed, podB.UID)

			// The node's kernel is older than 5.13: cpu has no full line.
			proc.pressure(cgroup.PressureCPU, pressure(49.62, -1))
			proc.pressure(cgroup.PressureMemory, pressure(0, 0))
			proc.pressure(cgroup.PressureIO, pressure(2.99, 1.95))
			writePressure(t, fs, dirA, cgroup.PressureCPU, pressure(12.5, 3.25))
			writePressure(t, fs, dirA, cgroup.PressureMemory, pressure(0.21, 0.1))
			writePressure(t, fs, dirA, cgroup.PressureIO, pressure(0, 0))
			writePressure(t, fs, dirB, cgroup.PressureCPU, pressure(100, 99))
			writePressure(t, fs, dirB, cgroup.PressureMemory, pressure(0, 0))
			writePressure(t, fs, dirB, cgroup.PressureIO, pressure(7, 6))
			// Containers are not sampled.
			writePressure(t, fs, ctrA, cgroup.PressureCPU, pressure(1, 1))

			col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, pods,
				collector.WithClock(clk), collector.WithPSI(), collector.WithMetrics(metrics))
			if metrics.CPUFullSupported() {
				t.Error("full cpu pressure supported before any pressure was read")
			}
			if err := col.Collect(ctx); err != nil {
				t.Fatal(err)
			}
			// The node's cpu.pressure has no full line, the pods' have.
			if !metrics.CPUFullSupported() {
				t.Error("full cpu pressure not supported after reading the pods' full cpu lines")
			}
			keyA := metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(podA.UID)}
			keyB := metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(podB.UID)}
			ctr := metriccache.SeriesKey{Kind: metriccache.KindContainer, ID: "containerd://a1"}
			keys := psiKeys(keyA, keyB, ctr)
			want := map[string]float64{
				"node//psi-cpu-some-avg10":        f32(49.62),
				"node//psi-memory-some-avg10":     0,
				"node//psi-memory-full-avg10":     0,
				"node//psi-io-some-avg10":         f32(2.99),
				"node//psi-io-full-avg10":         f32(1.95),
				"pod/uid-a/psi-cpu-some-avg10":    12.5,
				"pod/uid-a/psi-cpu-full-avg10":    3.25,
				"pod/uid-a/psi-memory-some-avg10": f32(0.21),
				"pod/uid-a/psi-memory-full-avg10": f32(0.1),
				"pod/uid-a/psi-io-some-avg10":     0,
				"pod/uid-a/psi-io-full-avg10":     0,
				"pod/uid-b/psi-cpu-some-avg10":    100,
				"pod/uid-b/psi-cpu-full-avg10":    99,
				"pod/uid-b/psi-memory-some-avg10": 0,
				"pod/uid-b/psi-memory-full-avg10": 0,
				"pod/uid-b/psi-io-some-avg10":     7,
				"pod/uid-b/psi-io-full-avg10":     6,
			}
			if diff := cmp.Diff(want, series(t, cache, clk.Now(), keys)); diff != "" {
				t.Errorf("round 1 (-want,+got):\n%s", diff)
			}
			const help = `
# HELP koord_koordlet_node_psi Pressure stall information of the node (/proc/pressure), in percent of wall time: the kernel's average over psi_precision (avg10: the last 10 seconds) of the time in which some (psi_degree=some) or all (full) non-idle tasks stalled on psi_resource_type (cpu, mem, io). Full cpu needs Linux 5.13. Absent unless PSI collection is on.
# TYPE koord_koordlet_node_psi gauge
koord_koordlet_node_psi{psi_degree="full",psi_precision="avg10",psi_resource_type="io"} 1.95
koord_koordlet_node_psi{psi_degree="full",psi_precision="avg10",psi_resource_type="mem"} 0
koord_koordlet_node_psi{psi_degree="some",psi_precision="avg10",psi_resource_type="cpu"} 49.62
koord_koordlet_node_psi{psi_degree="some",psi_precision="avg10",psi_resource_type="io"} 2.99
koord_koordlet_node_psi{psi_degree="some",psi_precision="avg10",psi_resource_type="mem"} 0
# HELP koord_koordlet_pod_psi Pressure stall information of each running pod's cgroup, in percent of wall time: the kernel's average over psi_precision (avg10: the last 10 seconds) of the time in which some (psi_degree=some) or all (full) of the pod's non-idle tasks stalled on psi_resource_type (cpu, mem, io). Full cpu needs Linux 5.13. A pod's series go when it finishes or leaves the node. Absent unless PSI collection is on.
# TYPE koord_koordlet_pod_psi gauge
`
			podLines := func(pod *corev1.Pod, values map[string]float64) string {
				var b strings.Builder
				for _, l := range []string{"cpu/full", "cpu/some", "io/full", "io/some", "mem/full", "mem/some"} {
					r, d, _ := strings.Cut(l, "/")
					fmt.Fprintf(&b, "koord_koordlet_pod_psi{pod_name=%q,pod_namespace=%q,pod_uid=%q,psi_degree=%q,psi_precision=\"avg10\",psi_resource_type=%q} %v\n",
						pod.Name, pod.Namespace, pod.UID, d, r, values[l])
				}
				return b.String()
			}
			linesA := podLines(podA, map[string]float64{"cpu/some": 12.5, "cpu/full": 3.25, "mem/some": 0.21, "mem/full": 0.1})
			linesB := podLines(podB, map[string]float64{"cpu/some": 100, "cpu/full": 99, "io/some": 7, "io/full": 6})
			if err := testutil.GatherAndCompare(reg, strings.NewReader(help+linesA+linesB)); err != nil {
				t.Errorf("round 1 metrics: %v", err)
			}

			// Round 2: pod b has finished; its gauges go, its series stay while it is listed.
			clk.Step(time.Second)
			podB.Status.Phase = corev1.PodSucceeded
			writePressure(t, fs, dirA, cgroup.PressureCPU, pressure(20, 5))
			if err := col.Collect(ctx); err != nil {
				t.Fatal(err)
			}
			if _, v, ok := cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(podA.UID), Resource: metriccache.ResourcePSICPUSomeAvg10}); !ok || v != 20 {
				t.Errorf("pod a cpu some = %v, %v; want 20", v, ok)
			}
			if _, _, ok := cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(podB.UID), Resource: metriccache.ResourcePSICPUSomeAvg10}); !ok {
				t.Errorf("the series of finished pod b are gone while it is listed")
			}
			linesA = podLines(podA, map[string]float64{"cpu/some": 20, "cpu/full": 5, "mem/some": 0.21, "mem/full": 0.1})
			if err := testutil.GatherAndCompare(reg, strings.NewReader(help+linesA), "koord_koordlet_pod_psi"); err != nil {
				t.Errorf("round 2 metrics: %v", err)
			}

			// Round 3: pod a leaves the node: its series and gauges go.
			clk.Step(time.Second)
			pods.pods = []*corev1.Pod{podB}
			if err := col.Collect(ctx); err != nil {
				t.Fatal(err)
			}
			for _, k := range psiKeys(keyA) {
				if _, _, ok := cache.Latest(k); ok && k.Kind == metriccache.KindPod {
					t.Errorf("series %s of the deleted pod is still there", k)
				}
			}
			if got := testutil.CollectAndCount(reg, "koord_koordlet_pod_psi"); got != 0 {
				t.Errorf("%d pod PSI series left, want 0", got)
			}
		})
	}
}

// TestCollectPSIOff: without WithPSI nothing reads pressure files.
func TestCollectPSIOff(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Systemd)
	proc := newFakeProc(t)
	proc.stat(2, [8]uint64{1, 0, 0, 1})
	proc.meminfo(gi, gi/2, gi/2)
	pod := makePod("a", corev1.PodQOSBurstable)
	dir := fs.AddPod(corev1.PodQOSBurstable, pod.UID)
	for _, r := range []cgroup.PressureResource{cgroup.PressureCPU, cgroup.PressureMemory, cgroup.PressureIO} {
		proc.pressure(r, pressure(1, 1))
		writePressure(t, fs, dir, r, pressure(1, 1))
	}
	cache := metriccache.New(metriccache.Options{})
	col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, &lister{pods: []*corev1.Pod{pod}},
		collector.WithClock(clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))), collector.WithMetrics(collector.NewMetrics()))
	if err := col.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range psiKeys(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(pod.UID)}) {
		if _, _, ok := cache.Latest(k); ok {
			t.Errorf("series %s sampled without WithPSI", k)
		}
	}
}

// bufferedLogger returns a logger that keeps what is logged, and a function returning the messages logged so
// far.
func bufferedLogger(t *testing.T) (klog.Logger, func() []string) {
	l := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	return l, func() []string {
		var msgs []string
		for _, e := range l.GetSink().(ktesting.Underlier).GetBuffer().Data() {
			msgs = append(msgs, e.Message)
		}
		return msgs
	}
}

// TestCollectPSIUnsupported: pressure the kernel lacks is no error. The node's is logged once and never read
// again; a pod's is read again after collector.PSIRetryRounds rounds. A malformed file is an error naming the
// pod.
func TestCollectPSIUnsupported(t *testing.T) {
	logger, logged := bufferedLogger(t)
	ctx := klog.NewContext(t.Context(), logger)
	// cgroup v1 without a hybrid mount: no cgroup has pressure files.
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	proc := newFakeProc(t)
	proc.stat(2, [8]uint64{1, 0, 0, 1})
	proc.meminfo(gi, gi/2, gi/2)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cache := metriccache.New(metriccache.Options{})
	pod := makePod("a", corev1.PodQOSBurstable)
	dir := fs.AddPod(corev1.PodQOSBurstable, pod.UID)
	col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, &lister{pods: []*corev1.Pod{pod}},
		collector.WithClock(clk), collector.WithPSI())
	podKey := metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(pod.UID), Resource: metriccache.ResourcePSICPUSomeAvg10}
	nodeKey := metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: metriccache.ResourcePSICPUSomeAvg10}
	round := func() {
		t.Helper()
		clk.Step(time.Second)
		if err := col.Collect(ctx); err != nil {
			t.Fatalf("Collect: %v", err)
		}
	}
	sampledNow := func(k metriccache.SeriesKey) bool {
		ts, _, ok := cache.Latest(k)
		return ok && ts.Equal(clk.Now())
	}
	round()
	round()
	wantLogs := []string{
		"Found node pressure stall information unsupported, not sampling it", // cpu
		"Found node pressure stall information unsupported, not sampling it", // memory
		"Found node pressure stall information unsupported, not sampling it", // io
		"Found cgroup knob unsupported, skipping it from now on without logging",
		"Found cgroup knob unsupported, skipping it from now on without logging",
		"Found cgroup knob unsupported, skipping it from now on without logging",
	}
	if diff := cmp.Diff(wantLogs, logged()); diff != "" {
		t.Errorf("logged (-want,+got):\n%s", diff)
	}

	// PSI appears: the pod's is read again after PSIRetryRounds rounds from the first, the node's never.
	for _, r := range []cgroup.PressureResource{cgroup.PressureCPU, cgroup.PressureMemory, cgroup.PressureIO} {
		proc.pressure(r, pressure(5, 1))
		writePressure(t, fs, dir, r, pressure(5, 1))
	}
	for i := 3; i <= collector.PSIRetryRounds; i++ {
		round()
		if sampledNow(podKey) {
			t.Fatalf("pod pressure read in round %d, before %d rounds passed", i, collector.PSIRetryRounds)
		}
	}
	round()
	if !sampledNow(podKey) {
		t.Errorf("pod pressure not read in round %d", collector.PSIRetryRounds+1)
	}
	if sampledNow(nodeKey) {
		t.Errorf("node pressure read again after the kernel had none")
	}
	if n := len(logged()); n != len(wantLogs) {
		t.Errorf("logged %d messages, want still %d", n, len(wantLogs))
	}

	writePressure(t, fs, dir, cgroup.PressureCPU, "some avg10=x\n")
	clk.Step(time.Second)
	err := col.Collect(ctx)
	if want := "pod default/a: reading cpu.pressure in cgroup " + dir; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Collect with a malformed cpu.pressure = %v; want an error containing %q", err, want)
	}
}

// TestCollectHostAppPSI: host applications' pressure is sampled like a pod's.
func TestCollectHostAppPSI(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Cgroupfs)
	proc := newFakeProc(t)
	proc.stat(2, [8]uint64{1, 0, 0, 1})
	proc.meminfo(gi, gi/2, gi/2)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cache := metriccache.New(metriccache.Options{})
	listed := apps{{Name: "nginx", QoS: "LS"}, {Name: "not-running", QoS: "BE"}}
	nginx := "/host-latency-sensitive/nginx"
	fs.MkDir("/host-latency-sensitive")
	fs.MkDir(nginx)
	writePressure(t, fs, nginx, cgroup.PressureMemory, pressure(4.5, 2.25))
	col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, &lister{},
		collector.WithClock(clk), collector.WithHostApps(&listed), collector.WithPSI())
	if err := col.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	keys := psiKeys(metriccache.SeriesKey{Kind: metriccache.KindHostApp, ID: "nginx"}, metriccache.SeriesKey{Kind: metriccache.KindHostApp, ID: "not-running"})
	want := map[string]float64{
		"hostapp/nginx/psi-memory-some-avg10": 4.5,
		"hostapp/nginx/psi-memory-full-avg10": 2.25,
	}
	if diff := cmp.Diff(want, series(t, cache, clk.Now(), keys)); diff != "" {
		t.Errorf("series (-want,+got):\n%s", diff)
	}
}

// BenchmarkCollectPSI measures one collection round with PSI for 50 pods of 3 containers each on a fake
// cgroupfs, against BenchmarkCollect's round without it.
func BenchmarkCollectPSI(b *testing.B) {
	const pods, containersPerPod = 50, 3
	for _, c := range []struct {
		v cgroup.Version
		d cgroup.Driver
	}{{cgroup.V1, cgroup.Cgroupfs}, {cgroup.V2, cgroup.Systemd}} {
		b.Run(fmt.Sprintf("layout=%s/pods=%d/containers=%d", comboName(c.v, c.d), pods, pods*containersPerPod), func(b *testing.B) {
			_, ctx := ktesting.NewTestContext(b)
			fs := cgrouptest.NewFS(b, c.v, c.d)
			proc := newFakeProc(b)
			proc.stat(8, [8]uint64{1000, 0, 500, 8000, 100, 20, 30, 50})
			proc.meminfo(64*gi, 16*gi, 32*gi)
			for _, r := range []cgroup.PressureResource{cgroup.PressureCPU, cgroup.PressureMemory, cgroup.PressureIO} {
				proc.pressure(r, pressure(1, 0.5))
			}
			l := &lister{}
			for i := range pods {
				var ids []string
				for j := range containersPerPod {
					ids = append(ids, fmt.Sprintf("containerd://%064d", i*containersPerPod+j))
				}
				pod := makePod(fmt.Sprintf("pod-%d", i), corev1.PodQOSBurstable, ids...)
				dir := fs.AddPod(pod.Status.QOSClass, pod.UID)
				for _, r := range []cgroup.PressureResource{cgroup.PressureCPU, cgroup.PressureMemory, cgroup.PressureIO} {
					writePressure(b, fs, dir, r, pressure(float64(i), 0.5))
				}
				for _, id := range ids {
					fs.AddContainer(pod.Status.QOSClass, pod.UID, id)
				}
				l.pods = append(l.pods, pod)
			}
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			metrics := collector.NewMetrics()
			if err := metrics.Register(prometheus.NewRegistry()); err != nil {
				b.Fatal(err)
			}
			col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, metriccache.New(metriccache.Options{}), l,
				collector.WithClock(clk), collector.WithPSI(), collector.WithMetrics(metrics))
			if err := col.Collect(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				clk.Step(time.Second)
				if err := col.Collect(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
