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

package lownodeload

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/koord-dev/koord/apis/extension"
	koordfake "github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	koordinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	"github.com/koord-dev/koord/pkg/descheduler/framework"
	"github.com/koord-dev/koord/pkg/util/quantity"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

var res = utiltesting.Resources

// cpuNode is a node with the given cores and 100Gi of memory.
func cpuNode(name string, cores int) *corev1.Node {
	return utiltesting.MakeNode(name).Allocatable(res("cpu", fmt.Sprint(cores), "memory", "100Gi", "pods", "110")).Obj()
}

func TestClassify(t *testing.T) {
	pool := &config.LowNodeLoadNodePool{
		LowThresholds:      config.ResourceThresholds{"cpu": 45, "memory": 55},
		HighThresholds:     config.ResourceThresholds{"cpu": 75, "memory": 80},
		ProdLowThresholds:  config.ResourceThresholds{"cpu": 30},
		ProdHighThresholds: config.ResourceThresholds{"cpu": 60},
	}
	// Nodes of 10 cores and 100Gi: cpu in millicores, memory in Gi; prod is the Prod pods' cpu.
	node := func(name string, cpu, memGi, prodCPU int64, unschedulable bool) *nodeUsage {
		n := cpuNode(name, 10)
		n.Spec.Unschedulable = unschedulable
		return &nodeUsage{
			node:        n,
			allocatable: quantity.Amounts{"cpu": 10000, "memory": 100 << 30, "pods": 110},
			usage:       quantity.Amounts{"cpu": cpu, "memory": memGi << 30},
			prodUsage:   quantity.Amounts{"cpu": prodCPU, "memory": 0},
		}
	}
	usages := []*nodeUsage{
		node("cool", 4000, 50, 2000, false),          // under 45% / 55%, prod under 30%: both low
		node("cool-prod-mid", 4000, 50, 4000, false), // node low, prod 40%: between → low
		node("cool-prod-44", 4400, 10, 4400, false),  // node low, prod 44%: between → low
		node("hot-cpu", 8000, 10, 1000, false),       // cpu 80% > 75% → high
		node("hot-memory", 1000, 81, 0, false),       // memory 81Gi > 80Gi → high
		node("mid", 6000, 60, 6500, false),           // between; prod 65% > 60% → prodHigh
		node("mid-prod-low", 6000, 60, 1000, false),  // between; prod 10% → prodLow
		node("mid-plain", 6000, 60, 4000, false),     // between everything
		node("cordoned", 1000, 1, 0, true),           // would be both low, but unschedulable: nothing
		node("edge", 4500, 55, 3000, false),          // exactly at the low thresholds counts as under
	}
	th := thresholdsOf(usages, newPoolThresholds(pool), false)
	c := classify(usages, th)
	names := func(ns []nodeInfo) []string {
		out := []string{}
		for _, n := range ns {
			out = append(out, n.node.Name)
		}
		return out
	}
	got := map[string][]string{"low": names(c.low), "high": names(c.high), "prodLow": names(c.prodLow), "prodHigh": names(c.prodHigh), "bothLow": names(c.bothLow)}
	want := map[string][]string{
		"low":      {"cool-prod-mid", "cool-prod-44"},
		"high":     {"hot-cpu", "hot-memory"},
		"prodLow":  {"mid-prod-low"},
		"prodHigh": {"mid"},
		"bothLow":  {"cool", "edge"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	if got, want := th["cool"].high["cpu"], int64(7500); got != want {
		t.Errorf("cpu high threshold of a 10-core node = %dm, want %dm", got, want)
	}
}

func TestDeviationThresholds(t *testing.T) {
	pool := &config.LowNodeLoadNodePool{
		UseDeviationThresholds: true,
		LowThresholds:          config.ResourceThresholds{"cpu": 10},
		HighThresholds:         config.ResourceThresholds{"cpu": 10},
	}
	mk := func(name string, cpu int64) *nodeUsage {
		return &nodeUsage{node: cpuNode(name, 10), allocatable: quantity.Amounts{"cpu": 10000, "memory": 100 << 30}, usage: quantity.Amounts{"cpu": cpu, "memory": 0}, prodUsage: quantity.Amounts{"cpu": 0, "memory": 0}}
	}
	// Mean cpu 50%: cool below 40%, hot above 60%. Memory has no low deviation, so it never decides.
	usages := []*nodeUsage{mk("a", 2000), mk("b", 5000), mk("c", 8000)}
	th := thresholdsOf(usages, newPoolThresholds(pool), true)
	if diff := cmp.Diff(nodeThresholds{
		low: quantity.Amounts{"cpu": 4000, "memory": 100 << 30}, high: quantity.Amounts{"cpu": 6000, "memory": 100 << 30},
		prodLow: quantity.Amounts{"cpu": 10000, "memory": 100 << 30}, prodHigh: quantity.Amounts{"cpu": 10000, "memory": 100 << 30},
	}, th["a"], cmp.AllowUnexported(nodeThresholds{})); diff != "" {
		t.Errorf("thresholds (-want +got):\n%s", diff)
	}
	c := classify(usages, th)
	if len(c.high) != 1 || c.high[0].node.Name != "c" {
		t.Errorf("high = %v, want [c]", c.high)
	}
	if len(c.bothLow) != 1 || c.bothLow[0].node.Name != "a" {
		t.Errorf("bothLow = %v, want [a]", c.bothLow)
	}
}

func TestDetector(t *testing.T) {
	cond := &config.LoadAnomalyCondition{Timeout: &metav1.Duration{Duration: time.Minute}, ConsecutiveAbnormalities: 3, ConsecutiveNormalities: 2}
	start := utiltesting.Now
	tests := []struct {
		name  string
		marks []bool          // true: hot
		at    []time.Duration // time of each mark from start; nil: 10s apart
		want  []bool          // anomalous after each mark
	}{
		{name: "three hot rounds in a row", marks: []bool{true, true, true, true}, want: []bool{false, false, true, true}},
		{name: "a normal round starts over", marks: []bool{true, true, false, true, true, true}, want: []bool{false, false, false, false, false, true}},
		{name: "two normal rounds end it", marks: []bool{true, true, true, false, false}, want: []bool{false, false, true, true, false}},
		{name: "a hot round between normal ones keeps it", marks: []bool{true, true, true, false, true, false}, want: []bool{false, false, true, true, true, true}},
		{
			name: "it times out a minute after it began", marks: []bool{true, true, true, true, true},
			at: []time.Duration{0, 10 * time.Second, 20 * time.Second, 70 * time.Second, 80 * time.Second}, want: []bool{false, false, true, true, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d detector
			var got []bool
			for i, hot := range tt.marks {
				at := time.Duration(i) * 10 * time.Second
				if tt.at != nil {
					at = tt.at[i]
				}
				got = append(got, d.mark(hot, cond, start.Add(at)))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("anomalous after each mark (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSortPods(t *testing.T) {
	mk := func(name string) *utiltesting.PodWrapper {
		return utiltesting.MakePod(name).Node("n").Req(res("cpu", "1"))
	}
	older := utiltesting.Now.Add(-time.Hour)
	pods := []*corev1.Pod{
		mk("prod-ls").Label(extension.LabelPodPriorityClass, string(extension.PriorityProd)).Priority(9000).QoS(extension.QoSLS).Obj(),
		mk("batch-be").Label(extension.LabelPodPriorityClass, string(extension.PriorityBatch)).Priority(5000).QoS(extension.QoSBE).Obj(),
		mk("prod-lsr").Label(extension.LabelPodPriorityClass, string(extension.PriorityProd)).Priority(9000).QoS(extension.QoSLSR).Obj(),
		mk("prod-low-prio").Label(extension.LabelPodPriorityClass, string(extension.PriorityProd)).Priority(8000).QoS(extension.QoSLS).Obj(),
		mk("prod-ls-costly").Label(extension.LabelPodPriorityClass, string(extension.PriorityProd)).Priority(9000).QoS(extension.QoSLS).Annotation(corev1.PodDeletionCost, "100").Obj(),
		mk("prod-ls-big").Label(extension.LabelPodPriorityClass, string(extension.PriorityProd)).Priority(9000).QoS(extension.QoSLS).Obj(),
		mk("prod-ls-old").Label(extension.LabelPodPriorityClass, string(extension.PriorityProd)).Priority(9000).QoS(extension.QoSLS).Created(older).Obj(),
		mk("prod-ls-unreported").Label(extension.LabelPodPriorityClass, string(extension.PriorityProd)).Priority(9000).QoS(extension.QoSLS).Obj(),
	}
	// Excess 1.5 cores. Scores: 2 cores → 1/(2/1.5)+1 = 1.75; 3 cores → 1.5; 1 core → 0.67.
	usage := map[types.NamespacedName]quantity.Amounts{}
	for name, cpu := range map[string]int64{"prod-ls": 1000, "batch-be": 500, "prod-lsr": 1000, "prod-low-prio": 1000, "prod-ls-costly": 2000, "prod-ls-big": 2000, "prod-ls-old": 3000} {
		usage[types.NamespacedName{Namespace: "default", Name: name}] = quantity.Amounts{"cpu": cpu}
	}
	sortPods(pods, usage, quantity.Amounts{"cpu": 1500}, map[corev1.ResourceName]int64{"cpu": 1})
	var got []string
	for _, p := range pods {
		got = append(got, p.Name)
	}
	want := []string{
		"batch-be",           // lower priority class
		"prod-low-prio",      // lower priority
		"prod-ls-big",        // LS before LSR; best at removing the excess (1.75)
		"prod-ls-old",        // 1.5
		"prod-ls",            // 0.67
		"prod-ls-unreported", // no usage reported
		"prod-ls-costly",     // higher deletion cost
		"prod-lsr",           // LSR after LS
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// fakeEvictor records what the plugin hands it.
type fakeEvictor struct {
	refuse  map[string]bool
	evicted []string
	reasons []string
}

func (e *fakeEvictor) Filter(p *corev1.Pod) bool            { return !e.refuse[p.Name] }
func (e *fakeEvictor) PreEvictionFilter(p *corev1.Pod) bool { return true }
func (e *fakeEvictor) Evict(_ context.Context, p *corev1.Pod, o evictions.EvictOptions) error {
	e.evicted = append(e.evicted, p.Name)
	e.reasons = append(e.reasons, o.Reason)
	return nil
}

// fakeHandle is a framework.Handle over fixed pods and NodeMetrics.
type fakeHandle struct {
	frameworktypes.Handle
	evictor  *fakeEvictor
	pods     []*corev1.Pod
	byNode   map[string][]*corev1.Pod
	koord    koordinformers.SharedInformerFactory
	recorder *events.FakeRecorder
	clock    *clocktesting.FakeClock
}

func (h *fakeHandle) Evictor() frameworktypes.Evictor { return h.evictor }
func (h *fakeHandle) GetPodsAssignedToNodeFunc() podutil.GetPodsAssignedToNodeFunc {
	if h.byNode == nil {
		h.byNode = map[string][]*corev1.Pod{}
		for _, p := range h.pods {
			h.byNode[p.Spec.NodeName] = append(h.byNode[p.Spec.NodeName], p)
		}
	}
	byNode := h.byNode
	return func(node string, filter podutil.FilterFunc) ([]*corev1.Pod, error) {
		var out []*corev1.Pod
		for _, p := range byNode[node] {
			if filter == nil || filter(p) {
				out = append(out, p)
			}
		}
		return out, nil
	}
}
func (h *fakeHandle) SharedInformerFactory() informers.SharedInformerFactory {
	return informers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
}
func (h *fakeHandle) KoordSharedInformerFactory() koordinformers.SharedInformerFactory {
	return h.koord
}
func (h *fakeHandle) EventRecorder() events.EventRecorder { return h.recorder }
func (h *fakeHandle) Clock() clock.PassiveClock           { return h.clock }

var _ framework.Handle = &fakeHandle{}

func newFakeHandle(t testing.TB, pods []*corev1.Pod, metrics ...runtime.Object) *fakeHandle {
	t.Helper()
	f := koordinformers.NewSharedInformerFactory(koordfake.NewSimpleClientset(metrics...), 0)
	f.Slo().V1alpha1().NodeMetrics().Informer()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return &fakeHandle{evictor: &fakeEvictor{refuse: map[string]bool{}}, pods: pods, koord: f,
		recorder: events.NewFakeRecorder(100), clock: clocktesting.NewFakeClock(utiltesting.Now)}
}

func defaultedArgs(edit func(*config.LowNodeLoadArgs)) *config.LowNodeLoadArgs {
	a := &config.LowNodeLoadArgs{
		LowThresholds:    config.ResourceThresholds{"cpu": 45, "memory": 55},
		HighThresholds:   config.ResourceThresholds{"cpu": 75, "memory": 80},
		AnomalyCondition: &config.LoadAnomalyCondition{ConsecutiveAbnormalities: 1},
	}
	if edit != nil {
		edit(a)
	}
	config.SetDefaultsLowNodeLoadArgs(a)
	return a
}

// threeNodes: hot is at 9 of 10 cores (3 system, pods of 3, 2 and 1), cool-a at 2 and cool-b at 3.
func threeNodes() ([]*corev1.Node, []*corev1.Pod, []runtime.Object) {
	nodes := []*corev1.Node{cpuNode("hot", 10), cpuNode("cool-a", 10), cpuNode("cool-b", 10)}
	var pods []*corev1.Pod
	for _, name := range []string{"p3", "p2", "p1"} {
		pods = append(pods, utiltesting.MakePod(name).Node("hot").Phase(corev1.PodRunning).Obj())
	}
	now := metav1.NewTime(utiltesting.Now)
	metrics := []runtime.Object{
		utiltesting.MakeNodeMetric("hot").Updated(now.Time).SystemUsage(res("cpu", "3", "memory", "1Gi")).
			Pod("default", "p3", extension.PriorityNone, res("cpu", "3")).
			Pod("default", "p2", extension.PriorityNone, res("cpu", "2")).
			Pod("default", "p1", extension.PriorityNone, res("cpu", "1")).Obj(),
		utiltesting.MakeNodeMetric("cool-a").Updated(now.Time).SystemUsage(res("cpu", "2", "memory", "1Gi")).Obj(),
		utiltesting.MakeNodeMetric("cool-b").Updated(now.Time).SystemUsage(res("cpu", "3", "memory", "1Gi")).Obj(),
	}
	return nodes, pods, metrics
}

func TestBalance(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(*config.LowNodeLoadArgs)
		editNodes   func([]*corev1.Node)
		refuse      []string
		metricAge   time.Duration
		rounds      int
		wantEvicted []string
	}{
		{
			// Excess 1.5 cores: p2 (score 1.75) goes first and brings the node to 7 < 7.5.
			name: "the pod that best removes the excess moves", rounds: 1, wantEvicted: []string{"p2"},
		},
		{
			name: "a refused pod stays, the next moves", refuse: []string{"p2"}, rounds: 1, wantEvicted: []string{"p3"},
		},
		{
			name: "dry run moves nothing", edit: func(a *config.LowNodeLoadArgs) { a.DryRun = ptr.To(true) }, rounds: 1,
		},
		{
			name: "paused does nothing", edit: func(a *config.LowNodeLoadArgs) { a.Paused = ptr.To(true) }, rounds: 1,
		},
		{
			name: "five hot rounds before moving", edit: func(a *config.LowNodeLoadArgs) { a.AnomalyCondition = nil }, rounds: 4,
		},
		{
			name: "the fifth hot round moves", edit: func(a *config.LowNodeLoadArgs) { a.AnomalyCondition = nil }, rounds: 5, wantEvicted: []string{"p2"},
		},
		{
			name: "not more cool nodes than numberOfNodes", edit: func(a *config.LowNodeLoadArgs) { a.NumberOfNodes = ptr.To[int32](2) }, rounds: 1,
		},
		{
			// High 55%: hot must lose 3.5 cores; p3 (3 cores) goes to cool-a (2 → 5), p2 to cool-b (3 → 5): each
			// target stays under 5.5.
			name: "moves until the node is cool, each target under its high threshold", edit: func(a *config.LowNodeLoadArgs) {
				a.HighThresholds = config.ResourceThresholds{"cpu": 55, "memory": 80}
			}, rounds: 1, wantEvicted: []string{"p3", "p2"},
		},
		{
			// cool-a's taint leaves cool-b: p3 would take it to 6 > 5.5, p2 to 5; then p1 would take it to 6.
			name: "nodeFit: taints and the targets' thresholds", edit: func(a *config.LowNodeLoadArgs) {
				a.HighThresholds = config.ResourceThresholds{"cpu": 55, "memory": 80}
			}, editNodes: func(nodes []*corev1.Node) {
				nodes[1].Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
			}, rounds: 1, wantEvicted: []string{"p2"},
		},
		{
			name: "without nodeFit the room alone bounds it", edit: func(a *config.LowNodeLoadArgs) {
				a.HighThresholds = config.ResourceThresholds{"cpu": 55, "memory": 80}
				a.NodeFit = ptr.To(false)
			}, editNodes: func(nodes []*corev1.Node) {
				nodes[1].Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
			}, rounds: 1, wantEvicted: []string{"p3", "p2"},
		},
		{
			name: "stale NodeMetrics leave the node out", metricAge: 200 * time.Second, rounds: 1,
		},
		{
			name: "evictable namespaces", edit: func(a *config.LowNodeLoadArgs) {
				a.EvictableNamespaces = &config.Namespaces{Exclude: []string{"default"}}
			}, rounds: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes, pods, metrics := threeNodes()
			if tt.editNodes != nil {
				tt.editNodes(nodes)
			}
			h := newFakeHandle(t, pods, metrics...)
			for _, name := range tt.refuse {
				h.evictor.refuse[name] = true
			}
			h.clock.Step(tt.metricAge)
			pl, err := New(defaultedArgs(tt.edit), h, nil)
			if err != nil {
				t.Fatal(err)
			}
			for range tt.rounds {
				pl.Balance(context.Background(), nodes)
				h.clock.Step(time.Second)
			}
			if diff := cmp.Diff(tt.wantEvicted, h.evictor.evicted); diff != "" {
				t.Errorf("evicted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBalanceReasonAndEvents(t *testing.T) {
	nodes, pods, metrics := threeNodes()
	h := newFakeHandle(t, pods, metrics...)
	pl, err := New(defaultedArgs(nil), h, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl.Balance(context.Background(), nodes)
	if diff := cmp.Diff([]string{"node is overutilized, node cpu usage(90.00%)>threshold(75.00%)"}, h.evictor.reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	var got []string
	for len(h.recorder.Events) > 0 {
		got = append(got, <-h.recorder.Events)
	}
	want := []string{
		"Normal LowNodeLoadMigrating Migrating off node hot (pool __default_node_pool__): node is overutilized, node cpu usage(90.00%)>threshold(75.00%)",
		"Normal Overutilized node is overutilized, node cpu usage(90.00%)>threshold(75.00%); migrating 1 pods to 2 cool nodes of pool __default_node_pool__ (room left: cpu 8000m, memory 161792Mi)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
