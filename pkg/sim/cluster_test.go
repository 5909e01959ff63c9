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
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	koordfake "github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
)

// kwokNode returns a node with the given capacity, labelled type=kwok unless plain.
func kwokNode(name, cpu, memory string, plain bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if !plain {
		n.Labels = map[string]string{"type": "kwok"}
	}
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	n.Status.Allocatable = n.Status.Capacity
	return n
}

// boundPod returns testPod bound to node and running.
func boundPod(node, uid string, qos extension.QoSClass, usage string, c corev1.Container) *corev1.Pod {
	p := testPod(uid, qos, usage, c)
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	return p
}

// thresholdSLO returns the NodeSLO of node with resourceUsedThresholdWithBE enabled, cfsQuota suppression at
// 65 % and memory eviction at 70 %.
func thresholdSLO(node string) *slov1alpha1.NodeSLO {
	return &slov1alpha1.NodeSLO{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{
			Enable:                      ptr.To(true),
			CPUSuppressThresholdPercent: ptr.To[int64](65),
			CPUSuppressPolicy:           slov1alpha1.CPUCfsQuotaPolicy,
			MemoryEvictThresholdPercent: ptr.To[int64](70),
		}},
	}
}

func nodeMetric(node string) *slov1alpha1.NodeMetric {
	return &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: node}}
}

// testCluster is a running Cluster on fake clientsets and a fake base clock at speed 1, starting at day.
type testCluster struct {
	*Cluster
	kube     *fake.Clientset
	koord    *koordfake.Clientset
	base     *clocktesting.FakeClock
	recorder *record.FakeRecorder
	registry *prometheus.Registry
}

func startCluster(t *testing.T, kubeObjs, koordObjs []runtime.Object, opts Options) *testCluster {
	t.Helper()
	return startClusterAt(t, 1, kubeObjs, koordObjs, opts)
}

// startClusterAt is startCluster at the given speed.
func startClusterAt(t *testing.T, speed float64, kubeObjs, koordObjs []runtime.Object, opts Options) *testCluster {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	tc := &testCluster{
		kube:     fake.NewClientset(kubeObjs...),
		koord:    koordfake.NewSimpleClientset(koordObjs...),
		base:     clocktesting.NewFakeClock(realStart),
		recorder: record.NewFakeRecorder(100),
		registry: prometheus.NewRegistry(),
	}
	clk, err := NewClock(tc.base, day, speed)
	if err != nil {
		t.Fatal(err)
	}
	opts.Recorder = tc.recorder
	opts.Metrics = NewMetrics()
	if err := opts.Metrics.Register(tc.registry); err != nil {
		t.Fatal(err)
	}
	tc.Cluster, err = NewCluster(tc.kube, tc.koord, clk, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return tc
}

// waitFor polls the snapshot until cond holds, failing the test after a generous timeout: the rounds run on
// other goroutines.
func (c *testCluster) waitFor(t *testing.T, what string, cond func(s Snapshot) bool) Snapshot {
	t.Helper()
	var s Snapshot
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		s = c.Snapshot()
		return cond(s), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last snapshot %+v", what, err, s)
	}
	return s
}

// allNodes returns a condition that n nodes are simulated and each satisfies f.
func allNodes(n int, f func(NodeSnapshot) bool) func(Snapshot) bool {
	return func(s Snapshot) bool {
		if len(s.Nodes) != n {
			return false
		}
		for _, ns := range s.Nodes {
			if !f(ns) {
				return false
			}
		}
		return true
	}
}

func usage(cpu, memory string) slov1alpha1.ResourceMap {
	return slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
	}}
}

// constantStatus is the status a node whose usage has been constant for the last 30 minutes reports.
func constantStatus(at time.Time, node, system slov1alpha1.ResourceMap, pods []slov1alpha1.PodMetricInfo) slov1alpha1.NodeMetricStatus {
	aggregated := func(u slov1alpha1.ResourceMap) []slov1alpha1.AggregatedUsage {
		var out []slov1alpha1.AggregatedUsage
		for _, d := range []time.Duration{5 * time.Minute, 10 * time.Minute, 30 * time.Minute} {
			out = append(out, slov1alpha1.AggregatedUsage{Duration: metav1.Duration{Duration: d}, Usage: map[slov1alpha1.AggregationType]slov1alpha1.ResourceMap{
				slov1alpha1.AggregationTypeAVG: u, slov1alpha1.AggregationTypeP50: u, slov1alpha1.AggregationTypeP90: u,
				slov1alpha1.AggregationTypeP95: u, slov1alpha1.AggregationTypeP99: u,
			}})
		}
		return out
	}
	return slov1alpha1.NodeMetricStatus{
		UpdateTime: &metav1.Time{Time: at},
		NodeMetric: &slov1alpha1.NodeMetricInfo{
			NodeUsage: node, SystemUsage: system,
			AggregatedNodeUsages: aggregated(node), AggregatedSystemUsages: aggregated(system),
		},
		PodsMetric:            pods,
		ProdReclaimableMetric: &slov1alpha1.ReclaimableMetric{},
	}
}

func podMetric(pod *corev1.Pod, u slov1alpha1.ResourceMap) slov1alpha1.PodMetricInfo {
	return slov1alpha1.PodMetricInfo{
		Name: pod.Name, Namespace: pod.Namespace, PodUsage: u,
		Priority: string(extension.GetPodPriorityClassWithDefault(pod)),
		QoS:      string(extension.GetPodQoSClassWithDefault(pod)),
	}
}

type res = map[corev1.ResourceName]string

func TestClusterReportsNodeMetrics(t *testing.T) {
	// n1: 4 CPUs, 16Gi, no NodeSLO: an LS pod and a BE pod at their default shares of their requests.
	ls1 := boundPod("n1", "ls-1", extension.QoSLS, "", container(res{"cpu": "2", "memory": "10Gi"}, nil))
	be1 := boundPod("n1", "be-1", extension.QoSBE, "", container(res{extension.BatchCPU: "2000", extension.BatchMemory: "5Gi"}, nil))
	// n2: 8 CPUs, 32Gi: a pod with a usage annotation and one whose annotation is malformed (default used).
	web := boundPod("n2", "web-2", extension.QoSLS, `{"cpu":{"type":"constant","value":"1500m"},"memory":{"type":"constant","value":"3Gi"}}`,
		container(res{"cpu": "4", "memory": "8Gi"}, nil))
	bad := boundPod("n2", "bad-2", extension.QoSLS, `{"cpu":{"type":"constant"}}`, container(res{"cpu": "1", "memory": "5Gi"}, nil))
	// n3: 10 CPUs, 20Gi, suppression by CFS quota at 65 %: the BE pod asks 4 cores but gets
	// 10 × 65% − 4 − 0.5 = 2.
	ls3 := boundPod("n3", "ls-3", extension.QoSLS, `{"cpu":{"type":"constant","value":"4"},"memory":{"type":"constant","value":"6Gi"}}`,
		container(res{"cpu": "4", "memory": "8Gi"}, nil))
	be3 := boundPod("n3", "be-3", extension.QoSBE, `{"cpu":{"type":"constant","value":"4"},"memory":{"type":"constant","value":"4Gi"}}`,
		container(nil, res{extension.BatchCPU: "8000", extension.BatchMemory: "16Gi"}))
	pending := boundPod("n3", "pending-3", extension.QoSLS, "", container(res{"cpu": "1", "memory": "1Gi"}, nil))
	pending.Status.Phase = corev1.PodPending
	unbound := testPod("unbound", extension.QoSLS, "", container(res{"cpu": "1", "memory": "1Gi"}, nil))
	// n4 is not a KWOK node: it is not simulated.
	other := boundPod("n4", "other", extension.QoSLS, "", container(res{"cpu": "1", "memory": "1Gi"}, nil))

	c := startCluster(t, []runtime.Object{
		kwokNode("n1", "4", "16Gi", false), kwokNode("n2", "8", "32Gi", false), kwokNode("n3", "10", "20Gi", false),
		kwokNode("n4", "4", "8Gi", true), ls1, be1, web, bad, ls3, be3, pending, unbound, other,
	}, []runtime.Object{
		nodeMetric("n1"), nodeMetric("n2"), nodeMetric("n3"), nodeMetric("n4"), thresholdSLO("n3"),
	}, Options{
		Features: features.Koordlet{BECPUSuppress: true, BEMemoryEvict: true},
		History:  time.Hour,
		Workers:  2,
	})

	c.waitFor(t, "the first rounds", allNodes(3, func(n NodeSnapshot) bool { return !n.Last.Time.IsZero() }))
	c.base.Step(6 * time.Second) // past the 5 s warm-up
	reportedAt := day.Add(6 * time.Second)
	s := c.waitFor(t, "the first reports", allNodes(3, func(n NodeSnapshot) bool { return n.Reports == 1 }))

	// The usage is simulated time's, the stamp is the real clock's: koord-manager and the scheduler judge the
	// age of a report by the wall clock.
	stampedAt := realStart.Add(6 * time.Second)
	want := map[string]slov1alpha1.NodeMetricStatus{
		// 1 + 1 + 5% of 4 cores; 7Gi + 3.5Gi + 1Gi.
		"n1": constantStatus(stampedAt, usage("2200m", "11776Mi"), usage("200m", "1Gi"), []slov1alpha1.PodMetricInfo{
			podMetric(be1, usage("1", "3584Mi")), podMetric(ls1, usage("1", "7Gi")),
		}),
		// 1.5 + 0.5 + 0.4 cores; 3Gi + 3.5Gi + 1Gi.
		"n2": constantStatus(stampedAt, usage("2400m", "7680Mi"), usage("400m", "1Gi"), []slov1alpha1.PodMetricInfo{
			podMetric(bad, usage("500m", "3584Mi")), podMetric(web, usage("1500m", "3Gi")),
		}),
		// 4 + 2 + 0.5 cores; 6Gi + 4Gi + 1Gi.
		"n3": constantStatus(stampedAt, usage("6500m", "11Gi"), usage("500m", "1Gi"), []slov1alpha1.PodMetricInfo{
			podMetric(be3, usage("2", "4Gi")), podMetric(ls3, usage("4", "6Gi")),
		}),
	}
	for node, w := range want {
		nm, err := c.koord.SloV1alpha1().NodeMetrics().Get(t.Context(), node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The prediction is TestClusterPredicts'.
		if diff := cmp.Diff(w, nm.Status, cmpopts.IgnoreFields(slov1alpha1.NodeMetricStatus{}, "ProdReclaimableMetric", "ProdPeakMetric")); diff != "" {
			t.Errorf("status of NodeMetric %s (-want,+got):\n%s", node, diff)
		}
	}
	if nm, err := c.koord.SloV1alpha1().NodeMetrics().Get(t.Context(), "n4", metav1.GetOptions{}); err != nil || nm.Status.UpdateTime != nil {
		t.Errorf("NodeMetric of the node that is not simulated was written: %+v, %v", nm.Status, err)
	}

	// Suppression: every moment of n3 from when it was first seen (day; its hour of history is not counted) to
	// day+6s.
	wantCounters := map[string]Counters{
		"n1": {Reports: 1},
		"n2": {Reports: 1},
		"n3": {SuppressedMoments: 1 + 6, Reports: 1},
	}
	gotCounters := map[string]Counters{}
	for _, n := range s.Nodes {
		gotCounters[n.Name] = n.Counters
	}
	if diff := cmp.Diff(wantCounters, gotCounters); diff != "" {
		t.Errorf("counters (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(Counters{SuppressedMoments: 7, Reports: 3}, s.Total); diff != "" {
		t.Errorf("total counters (-want,+got):\n%s", diff)
	}
	n3 := s.Nodes[2]
	wantLast := Moment{Time: reportedAt, NodeCPU: 6.5, NodeMemory: 11 * gi, LSCPU: 4, BECPU: 2, BEDemandCPU: 4,
		BEAllowedCPU: 2, BELimitCPU: 2, Suppressed: true, Pods: 2, BEPods: 1}
	if diff := cmp.Diff(wantLast, n3.Last, approx); diff != "" {
		t.Errorf("last moment of n3 (-want,+got):\n%s", diff)
	}

	// The malformed annotation was reported once, though the pod was modelled in two rounds.
	close(c.recorder.Events)
	var events []string
	for e := range c.recorder.Events {
		events = append(events, e)
	}
	wantEvents := []string{"Warning InvalidAnnotation annotation sim.koord.dev/usage is ignored: cpu.value: Required value"}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
	c.recorder.Events = make(chan string, 100)

	wantMetrics := `
# HELP koord_sim_be_suppressed_moments_total Sampled moments (one per collection interval per node) at which BE pods' CPU was suppressed.
# TYPE koord_sim_be_suppressed_moments_total counter
koord_sim_be_suppressed_moments_total 7
# HELP koord_sim_invalid_annotations_total Distinct malformed sim.koord.dev/usage annotation values seen on pods; the pods use their default usage.
# TYPE koord_sim_invalid_annotations_total counter
koord_sim_invalid_annotations_total 1
# HELP koord_sim_ls_threshold_breaches_total Sampled moments (one per collection interval per node) at which the non-BE pods' CPU usage exceeded cpuSuppressThresholdPercent of the node's capacity.
# TYPE koord_sim_ls_threshold_breaches_total counter
koord_sim_ls_threshold_breaches_total 0
# HELP koord_sim_nodes Nodes whose agent is simulated.
# TYPE koord_sim_nodes gauge
koord_sim_nodes 3
# HELP koord_sim_reports_total NodeMetric reports of the simulated agents, by result: success, error, or noNodeMetric (not created by koord-manager yet).
# TYPE koord_sim_reports_total counter
koord_sim_reports_total{result="success"} 3
`
	if err := testutil.GatherAndCompare(c.registry, strings.NewReader(wantMetrics), "koord_sim_be_suppressed_moments_total",
		"koord_sim_invalid_annotations_total", "koord_sim_ls_threshold_breaches_total", "koord_sim_nodes", "koord_sim_reports_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c.registry, "koord_sim_report_duration_seconds", "koord_sim_round_lag_seconds"); n != 2 {
		t.Errorf("got %d of the report duration and round lag histograms, want 2", n)
	}

	// koordlet's gauges of each node at its last round, with the node label; suppression only on n3.
	const mi = 1 << 20
	wantGauges := map[string]float64{
		`koord_koordlet_node_usage{node="n1",resource="cpu"}`:               2.2,
		`koord_koordlet_node_usage{node="n1",resource="memory"}`:            11776 * mi,
		`koord_koordlet_node_usage{node="n2",resource="cpu"}`:               2.4,
		`koord_koordlet_node_usage{node="n2",resource="memory"}`:            7680 * mi,
		`koord_koordlet_node_usage{node="n3",resource="cpu"}`:               6.5,
		`koord_koordlet_node_usage{node="n3",resource="memory"}`:            11 * gi,
		`koordlet_node_used_cpu_cores{node="n1"}`:                           2.2,
		`koordlet_node_used_cpu_cores{node="n2"}`:                           2.4,
		`koordlet_node_used_cpu_cores{node="n3"}`:                           6.5,
		`koordlet_node_used_memory_bytes{node="n1"}`:                        11776 * mi,
		`koordlet_node_used_memory_bytes{node="n2"}`:                        7680 * mi,
		`koordlet_node_used_memory_bytes{node="n3"}`:                        11 * gi,
		`koord_koordlet_be_cpu_allowed_cores{node="n3"}`:                    2,
		`koord_koordlet_be_cpu_suppress_cores{node="n3",policy="cfsQuota"}`: 2,
		`koordlet_be_suppress_cpu_cores{node="n3",type="cfsQuota"}`:         2,
	}
	for _, p := range []struct {
		node, name  string
		cpu, memory float64
	}{
		{"n1", "be-1", 1, 3584 * mi}, {"n1", "ls-1", 1, 7 * gi},
		{"n2", "bad-2", 0.5, 3584 * mi}, {"n2", "web-2", 1.5, 3 * gi},
		{"n3", "be-3", 2, 4 * gi}, {"n3", "ls-3", 4, 6 * gi},
	} {
		labels := fmt.Sprintf(`node=%q,pod_name=%q,pod_namespace="default",pod_uid=%q`, p.node, p.name, p.name)
		wantGauges[`koord_koordlet_pod_usage{`+labels+`,resource="cpu"}`] = p.cpu
		wantGauges[`koord_koordlet_pod_usage{`+labels+`,resource="memory"}`] = p.memory
	}
	if diff := cmp.Diff(wantGauges, gatherGauges(t, c.registry, "koord_koordlet_", "koordlet_"), approx); diff != "" {
		t.Errorf("koordlet gauges of the simulated nodes (-want,+got):\n%s", diff)
	}
}

// gatherGauges returns the value of every gauge series in g whose name has one of prefixes, keyed by the series
// in the exposition format (labels sorted by name).
func gatherGauges(t *testing.T, g prometheus.Gatherer, prefixes ...string) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetType() != dto.MetricType_GAUGE || !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(f.GetName(), p) }) {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestClusterMemoryEvictionAndLSBreaches(t *testing.T) {
	// 10 CPUs, 20Gi. Memory: 6Gi + 8Gi + 1Gi = 75% ≥ 70%: release 15Gi − 68% × 20Gi = 1.4Gi, so the BE pod with
	// the most memory goes first and is enough. CPU: the LS pod uses 7 > 65% of 10 cores at every moment.
	ls := boundPod("n1", "ls", extension.QoSLS, `{"cpu":{"type":"constant","value":"7"},"memory":{"type":"constant","value":"6Gi"}}`,
		container(res{"cpu": "8", "memory": "8Gi"}, nil))
	big := boundPod("n1", "be-big", extension.QoSBE, `{"cpu":{"type":"constant","value":"100m"},"memory":{"type":"constant","value":"6Gi"}}`,
		container(nil, res{extension.BatchCPU: "1000", extension.BatchMemory: "8Gi"}))
	small := boundPod("n1", "be-small", extension.QoSBE, `{"cpu":{"type":"constant","value":"100m"},"memory":{"type":"constant","value":"2Gi"}}`,
		container(nil, res{extension.BatchCPU: "1000", extension.BatchMemory: "8Gi"}))
	c := startCluster(t, []runtime.Object{kwokNode("n1", "10", "20Gi", false), ls, big, small},
		[]runtime.Object{nodeMetric("n1"), thresholdSLO("n1")},
		Options{Features: features.Koordlet{BECPUSuppress: true, BEMemoryEvict: true}})

	s := c.waitFor(t, "the first round", allNodes(1, func(n NodeSnapshot) bool { return !n.Last.Time.IsZero() }))
	if diff := cmp.Diff(Counters{Evictions: 1, LSThresholdBreaches: 1, SuppressedMoments: 1}, s.Nodes[0].Counters); diff != "" {
		t.Errorf("counters after the first round (-want,+got):\n%s", diff)
	}
	var evicted []string
	for _, a := range c.kube.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "eviction" {
			evicted = append(evicted, a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName())
		}
	}
	if diff := cmp.Diff([]string{"be-big"}, evicted); diff != "" {
		t.Errorf("evicted pods (-want,+got):\n%s", diff)
	}
	// The evicted pod's usage stopped at once: 6Gi + 2Gi + 1Gi, and only one BE pod runs.
	if diff := cmp.Diff([]any{9.0 * gi, 1}, []any{s.Nodes[0].Last.NodeMemory, s.Nodes[0].Last.BEPods}); diff != "" {
		t.Errorf("node memory and BE pods after the eviction (-want,+got):\n%s", diff)
	}

	// Ten seconds later, memory is at 45% (the fake apiserver keeps the pod, but it is no longer modelled): no
	// new eviction; every moment still breaches the LS threshold.
	c.base.Step(10 * time.Second)
	s = c.waitFor(t, "the second round", allNodes(1, func(n NodeSnapshot) bool { return n.LSThresholdBreaches == 11 }))
	if diff := cmp.Diff(Counters{Evictions: 1, LSThresholdBreaches: 11, SuppressedMoments: 11, Reports: 1}, s.Nodes[0].Counters); diff != "" {
		t.Errorf("counters after the second round (-want,+got):\n%s", diff)
	}
	close(c.recorder.Events)
	var reasons []string
	for e := range c.recorder.Events {
		reasons = append(reasons, strings.Join(strings.Fields(e)[:2], " "))
	}
	c.recorder.Events = make(chan string, 100)
	if diff := cmp.Diff([]string{"Warning " + evictor.EventReasonEvicted}, reasons); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
}

func TestClusterFollowsNodesAndNodeMetrics(t *testing.T) {
	ls := boundPod("n1", "ls", extension.QoSLS, `{"cpu":{"type":"constant","value":"7"}}`, container(res{"cpu": "8", "memory": "1Gi"}, nil))
	c := startCluster(t, []runtime.Object{kwokNode("n1", "10", "20Gi", false), ls}, nil, Options{})
	ctx := t.Context()

	c.waitFor(t, "the first round", allNodes(1, func(n NodeSnapshot) bool { return !n.Last.Time.IsZero() }))
	// No NodeMetric yet: the report waits for it (koord-manager creates it).
	c.base.Step(6 * time.Second)
	c.waitFor(t, "the report to wait", func(s Snapshot) bool {
		return testutil.ToFloat64(c.opts.Metrics.reports.WithLabelValues(ResultNoNodeMetric)) == 1
	})
	if _, err := c.koord.SloV1alpha1().NodeMetrics().Create(ctx, nodeMetric("n1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Its creation makes the report due at once, without moving the clock.
	s := c.waitFor(t, "the report", allNodes(1, func(n NodeSnapshot) bool { return n.Reports == 1 }))
	if want := day.Add(6 * time.Second); !s.Nodes[0].LastReport.Equal(want) {
		t.Errorf("reported at %s, want %s", s.Nodes[0].LastReport, want)
	}
	breaches := s.Nodes[0].LSThresholdBreaches
	if breaches != 7 {
		t.Errorf("LS threshold breaches = %d, want 7 (day to day+6s)", breaches)
	}

	// A node that loses its label is no longer simulated; its counters stay in the totals.
	node, err := c.kube.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Labels = nil
	if _, err := c.kube.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s = c.waitFor(t, "the node to go", func(s Snapshot) bool { return len(s.Nodes) == 0 })
	if diff := cmp.Diff(Counters{LSThresholdBreaches: breaches, Reports: 1}, s.Total); diff != "" {
		t.Errorf("totals after the node went (-want,+got):\n%s", diff)
	}

	// A new KWOK node is picked up.
	if _, err := c.kube.CoreV1().Nodes().Create(ctx, kwokNode("n2", "4", "8Gi", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "the new node", allNodes(1, func(n NodeSnapshot) bool { return n.Name == "n2" && !n.Last.Time.IsZero() }))
}

// TestClusterReportsEveryWallInterval steps the base clock by a quarter of the NodeMetric's report interval at
// a time and checks that, whatever the speed, the node reports every four steps: every interval of wall time,
// stamped with the wall clock, i.e. every interval × speed of simulated time.
func TestClusterReportsEveryWallInterval(t *testing.T) {
	tests := map[string]struct {
		speed    float64
		interval int64 // reportIntervalSeconds
	}{
		"half speed, 8s":      {speed: 0.5, interval: 8},
		"real time, 4s":       {speed: 1, interval: 4},
		"speed 60, 2s":        {speed: 60, interval: 2},
		"demo speed 720, 1s":  {speed: 720, interval: 1},
		"speed 3600, 10s":     {speed: 3600, interval: 10},
		"speed 720, 300s":     {speed: 720, interval: 300},
		"speed 720, no value": {speed: 720},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			nm := nodeMetric("n1")
			if tc.interval > 0 {
				nm.Spec.CollectPolicy = &slov1alpha1.NodeMetricCollectPolicy{ReportIntervalSeconds: ptr.To(tc.interval)}
			}
			interval := reportInterval(nm.Spec) // Koordinator's 60 s without a value
			step := interval / 4
			// The first report is due after one step; a round after every step (a whole number of simulated
			// seconds, so that the round's last moment is the step's end).
			simStep := time.Duration(float64(step) * tc.speed)
			c := startClusterAt(t, tc.speed, []runtime.Object{kwokNode("n1", "4", "8Gi", false)}, []runtime.Object{nm},
				Options{WarmUp: simStep, RoundInterval: min(simStep, DefaultRoundInterval)})

			type state struct {
				Step       int
				Reports    int64
				Stamp      time.Duration // wall time of the NodeMetric's updateTime, from the start
				LastReport time.Duration // simulated time of the last report, from the start
			}
			var want, got []state
			for i := 0; i <= 9; i++ {
				if i > 0 {
					c.base.Step(step)
				}
				at := day.Add(time.Duration(i) * simStep)
				// The round of the step has run, and the scheduling loop waits for the next one.
				s := c.waitFor(t, fmt.Sprintf("the round of step %d", i), allNodes(1, func(n NodeSnapshot) bool {
					return n.Last.Time.Equal(at) && c.base.HasWaiters()
				}))
				got1 := state{Step: i, Reports: s.Nodes[0].Reports}
				if lr := s.Nodes[0].LastReport; !lr.IsZero() {
					got1.LastReport = lr.Sub(day)
				}
				obj, err := c.koord.SloV1alpha1().NodeMetrics().Get(t.Context(), "n1", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if u := obj.Status.UpdateTime; u != nil {
					got1.Stamp = u.Sub(realStart)
				}
				got = append(got, got1)

				// Reports at steps 1, 5 and 9: the warm-up, then every interval of wall time.
				w := state{Step: i}
				if i >= 1 {
					last := 1 + (i-1)/4*4
					w.Reports = int64(1 + (i-1)/4)
					w.Stamp = time.Duration(last) * step
					w.LastReport = time.Duration(last) * simStep
				}
				want = append(want, w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reports after each step of %v of wall time (-want,+got):\n%s", step, diff)
			}
		})
	}
}

// TestClusterClockSkew checks that a node's clock skew moves its reports' updateTime, and not the simulated
// time of what they report: a clock behind, then ahead, then right again, changed while the agent runs.
func TestClusterClockSkew(t *testing.T) {
	nm := nodeMetric("n1")
	nm.Spec.CollectPolicy = &slov1alpha1.NodeMetricCollectPolicy{ReportIntervalSeconds: ptr.To[int64](4)}
	c := startClusterAt(t, 1, []runtime.Object{kwokNode("n1", "4", "8Gi", false)}, []runtime.Object{nm},
		Options{WarmUp: 4 * time.Second, RoundInterval: time.Second})
	c.waitFor(t, "the first round", allNodes(1, func(n NodeSnapshot) bool { return n.Last.Time.Equal(day) && c.base.HasWaiters() }))

	type report struct {
		Reports int64
		Stamp   time.Duration // updateTime, from the real start
		Moment  time.Duration // the last moment's simulated time, from the start
	}
	var got []report
	for i, skew := range []time.Duration{-10 * time.Minute, 2 * time.Minute, 0} {
		c.SetClockSkew("n1", skew)
		c.base.Step(4 * time.Second)
		s := c.waitFor(t, fmt.Sprintf("report %d", i+1), allNodes(1, func(n NodeSnapshot) bool {
			return n.Last.Time.Equal(day.Add(time.Duration(i+1)*4*time.Second)) && c.base.HasWaiters()
		}))
		obj, err := c.koord.SloV1alpha1().NodeMetrics().Get(t.Context(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := report{Reports: s.Nodes[0].Reports, Moment: s.Nodes[0].Last.Time.Sub(day)}
		if u := obj.Status.UpdateTime; u != nil {
			r.Stamp = u.Sub(realStart)
		}
		got = append(got, r)
	}
	want := []report{
		{Reports: 1, Stamp: 4*time.Second - 10*time.Minute, Moment: 4 * time.Second},
		{Reports: 2, Stamp: 8*time.Second + 2*time.Minute, Moment: 8 * time.Second},
		{Reports: 3, Stamp: 12 * time.Second, Moment: 12 * time.Second},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports under clock skew (-want,+got):\n%s", diff)
	}
}

// TestClusterKillAgent kills a node's agent, checks that it stays down (no reports, not restarted by a node
// update) while its counters stay in the totals, and starts it again afresh: no report before its warm-up.
func TestClusterKillAgent(t *testing.T) {
	nm := nodeMetric("n1")
	nm.Spec.CollectPolicy = &slov1alpha1.NodeMetricCollectPolicy{ReportIntervalSeconds: ptr.To[int64](4)}
	c := startClusterAt(t, 1, []runtime.Object{kwokNode("n1", "4", "8Gi", false)}, []runtime.Object{nm},
		Options{WarmUp: 4 * time.Second, RoundInterval: time.Second, History: time.Hour})
	ctx := t.Context()
	updateTime := func() time.Duration {
		t.Helper()
		obj, err := c.koord.SloV1alpha1().NodeMetrics().Get(ctx, "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if obj.Status.UpdateTime == nil {
			return 0
		}
		return obj.Status.UpdateTime.Sub(realStart)
	}
	c.waitFor(t, "the first round", allNodes(1, func(n NodeSnapshot) bool { return n.Last.Time.Equal(day) && c.base.HasWaiters() }))
	c.base.Step(4 * time.Second)
	c.waitFor(t, "the first report", allNodes(1, func(n NodeSnapshot) bool { return n.Reports == 1 && c.base.HasWaiters() }))

	c.KillAgent(ctx, "n1")
	if s := c.Snapshot(); len(s.Nodes) != 0 || s.Total.Reports != 1 {
		t.Errorf("after the kill: %d nodes simulated, %d reports in the totals; want 0 and 1", len(s.Nodes), s.Total.Reports)
	}
	// A change of the node does not bring the agent back: n2, created after the change, shows the informer
	// handled it.
	node, err := c.kube.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Annotations = map[string]string{"changed": "true"}
	if _, err := c.kube.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kube.CoreV1().Nodes().Create(ctx, kwokNode("n2", "4", "8Gi", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "n2 and not n1", allNodes(1, func(n NodeSnapshot) bool { return n.Name == "n2" }))
	c.base.Step(8 * time.Second)
	c.waitFor(t, "n2's rounds", allNodes(1, func(n NodeSnapshot) bool { return n.Last.Time.Equal(day.Add(12*time.Second)) && c.base.HasWaiters() }))
	if got, want := updateTime(), 4*time.Second; got != want {
		t.Errorf("n1's NodeMetric updated at %v with its agent down, want %v (its last report)", got, want)
	}

	// Started again, it is a new agent: it reports after its warm-up, not at once.
	c.StartAgent(ctx, "n1")
	byName := func(name string, f func(NodeSnapshot) bool) func(Snapshot) bool {
		return func(s Snapshot) bool {
			for _, n := range s.Nodes {
				if n.Name == name {
					return f(n)
				}
			}
			return false
		}
	}
	c.waitFor(t, "n1's first round after the start", byName("n1", func(n NodeSnapshot) bool {
		return n.Last.Time.Equal(day.Add(12*time.Second)) && n.Reports == 0 && c.base.HasWaiters()
	}))
	c.base.Step(4 * time.Second)
	c.waitFor(t, "n1's report after the warm-up", byName("n1", func(n NodeSnapshot) bool { return n.Reports == 1 }))
	if got, want := updateTime(), 16*time.Second; got != want {
		t.Errorf("n1's NodeMetric updated at %v after the start, want %v (start + warm-up)", got, want)
	}
	// Starting an agent that runs, or an unknown one, does nothing.
	c.StartAgent(ctx, "n1")
	c.StartAgent(ctx, "n3")
	if s := c.Snapshot(); len(s.Nodes) != 2 {
		t.Errorf("%d nodes simulated, want 2", len(s.Nodes))
	}
}

func TestReportInterval(t *testing.T) {
	policy := func(v int64) slov1alpha1.NodeMetricSpec {
		return slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{ReportIntervalSeconds: ptr.To(v)}}
	}
	tests := map[string]struct {
		tc   slov1alpha1.NodeMetricSpec
		want time.Duration
	}{
		"no policy":        {tc: slov1alpha1.NodeMetricSpec{}, want: time.Minute},
		"no interval":      {tc: slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{}}, want: time.Minute},
		"zero: default":    {tc: policy(0), want: time.Minute},
		"negative":         {tc: policy(-5), want: time.Minute},
		"one second":       {tc: policy(1), want: time.Second},
		"too long: capped": {tc: policy(math.MaxInt64), want: time.Duration(maxReportSeconds) * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := reportInterval(tc.tc); got != tc.want {
				t.Errorf("reportInterval = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := map[string]struct {
		opts    Options
		wantErr string
	}{
		"zero-takes-defaults": {opts: Options{}},
		"negative-values": {
			opts: Options{CollectInterval: -time.Second, Workers: -1, System: &SystemUsage{CPUPercent: 120, Memory: -1}},
			wantErr: "simulation option collectInterval is -1s, want 0 (default) or more\n" +
				"simulation option workers is -1, want 0 (default) or more\n" +
				"simulation option system.cpuPercent is 120, want 0 to 100\n" +
				"simulation option system.memory is -1, want 0 or more bytes",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.opts.Validate()
			var got string
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			if _, err := NewCluster(fake.NewClientset(), koordfake.NewSimpleClientset(), nil, tc.opts); (err != nil) != (tc.wantErr != "") {
				t.Errorf("NewCluster error %v, want one: %v", err, tc.wantErr != "")
			}
		})
	}
}

// TestClusterPredicts: a simulated node runs koordlet's peak prediction on simulated time and reports it. n1 (8
// CPUs, 32Gi, system 5 % = 0.4 cores and 1Gi) runs a koord-prod pod requesting 4 cores and 8Gi that uses 1 core
// and 2Gi. With a one-hour cold start, the first report (an hour after the pod started) reclaims nothing; the
// second, an hour later, reports Koordinator's prediction, worked out by hand:
//
//	pod:      peak = p95 1 core → end of bucket 22, 1035m × 1.1 = 1138m; p98 2Gi → end of bucket 62, 2162529934 × 1.1 = 2378782927
//	          reclaimable = 4000 − 1138 = 2862m; 8Gi − 2378782927 = 6211151665
//	priority: system 0.4 cores (1.4 − 1 in single precision, 0.39999998) → end of bucket 12, 442m; 1Gi → 1097586419;
//	          prod tier 1035m, 2162529934; no pod without a class: 25m, 5242880
//	          peak = (442 + 1035 + 25) × 1.1 = 1652m; (1097586419 + 2162529934 + 5242880) × 1.1 = 3591895156
//	          reclaimable = 4000 − 1652 = 2348m; 8Gi − 3591895156 = 4998039436
//	reported: the smaller reclaimable, 2348m and 4998039436; the larger peak, 1652m and 3591895156.
func TestClusterPredicts(t *testing.T) {
	web := boundPod("n1", "web-1", extension.QoSLS, `{"cpu":{"type":"constant","value":"1"},"memory":{"type":"constant","value":"2Gi"}}`,
		container(res{"cpu": "4", "memory": "8Gi"}, nil))
	web.Labels[extension.LabelPodPriorityClass] = string(extension.PriorityProd)
	nm := nodeMetric("n1")
	nm.Spec.CollectPolicy = &slov1alpha1.NodeMetricCollectPolicy{ReportIntervalSeconds: ptr.To[int64](1)}
	cfg := prediction.DefaultConfig()
	cfg.ColdStartDuration = time.Hour
	// Speed 3600: a second of wall time is an hour of simulated time, and a report every second.
	c := startClusterAt(t, 3600, []runtime.Object{kwokNode("n1", "8", "32Gi", false), web}, []runtime.Object{nm},
		Options{Prediction: &cfg, WarmUp: time.Hour})
	c.waitFor(t, "the first round", allNodes(1, func(n NodeSnapshot) bool { return n.Last.Time.Equal(day) }))

	status := func(reports int64, at time.Time) slov1alpha1.NodeMetricStatus {
		t.Helper()
		c.waitFor(t, fmt.Sprintf("report %d", reports), allNodes(1, func(n NodeSnapshot) bool {
			return n.Reports == reports && n.Last.Time.Equal(at) && c.base.HasWaiters()
		}))
		obj, err := c.koord.SloV1alpha1().NodeMetrics().Get(t.Context(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.Status
	}
	quantities := func(cpuMilli, memory int64) slov1alpha1.ResourceMap {
		return slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
		}}
	}

	c.base.Step(time.Second)
	first := status(1, day.Add(time.Hour))
	// In its cold start the pod reclaims nothing and its request is its peak (the priority predictor's is below).
	if diff := cmp.Diff(&slov1alpha1.ReclaimableMetric{Resource: quantities(0, 0)}, first.ProdReclaimableMetric, resourceComparer); diff != "" {
		t.Errorf("prodReclaimableMetric in the cold start (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(&slov1alpha1.PeakMetric{Resource: quantities(4000, 8*gi)}, first.ProdPeakMetric, resourceComparer); diff != "" {
		t.Errorf("prodPeakMetric in the cold start (-want,+got):\n%s", diff)
	}

	c.base.Step(time.Second)
	second := status(2, day.Add(2*time.Hour))
	if diff := cmp.Diff(&slov1alpha1.ReclaimableMetric{Resource: quantities(2348, 4998039436)}, second.ProdReclaimableMetric, resourceComparer); diff != "" {
		t.Errorf("prodReclaimableMetric (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(&slov1alpha1.PeakMetric{Resource: quantities(1652, 3591895156)}, second.ProdPeakMetric, resourceComparer); diff != "" {
		t.Errorf("prodPeakMetric (-want,+got):\n%s", diff)
	}
}

// resourceComparer compares quantities by value.
var resourceComparer = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
