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

package loadaware

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// The node has 10 cpus and 10Gi; the pod requests 1 cpu and 1Gi, estimated at 850m and 0.7Gi.
func TestFilter(t *testing.T) {
	fresh := 10 * time.Second
	ok := plugintest.Status{Code: fwk.Success}
	rejected := func(reasons ...string) plugintest.Status {
		return plugintest.Status{Code: fwk.Unschedulable, Reasons: reasons}
	}
	incoming := utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj()
	withAggregate := func(nm *slov1alpha1.NodeMetric, window time.Duration, typ slov1alpha1.AggregationType, usage corev1.ResourceList) *slov1alpha1.NodeMetric {
		nm.Status.NodeMetric.AggregatedNodeUsages = append(nm.Status.NodeMetric.AggregatedNodeUsages, slov1alpha1.AggregatedUsage{
			Duration: metav1.Duration{Duration: window},
			Usage:    map[slov1alpha1.AggregationType]slov1alpha1.ResourceMap{typ: {ResourceList: usage}},
		})
		return nm
	}
	prodThresholds := func(a *configv1.LoadAwareSchedulingArgs) {
		a.ProdUsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceCPU: 60}
	}
	aggregated := func(window time.Duration) func(*configv1.LoadAwareSchedulingArgs) {
		return func(a *configv1.LoadAwareSchedulingArgs) {
			a.Aggregated = &configv1.LoadAwareSchedulingAggregatedArgs{
				UsageThresholds:      map[corev1.ResourceName]int64{corev1.ResourceCPU: 70},
				UsageAggregationType: extension.P95,
			}
			if window > 0 {
				a.Aggregated.UsageAggregatedDuration = &metav1.Duration{Duration: window}
			}
		}
	}
	// web is a koord-prod pod on n1 since long before its NodeMetric: its reported usage counts as prod usage.
	web := []*corev1.Pod{utiltesting.MakePod("web").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Scheduled("n1", utiltesting.Now.Add(-10*time.Minute)).Obj()}
	tests := map[string]struct {
		args   func(*configv1.LoadAwareSchedulingArgs)
		node   *corev1.Node
		metric *slov1alpha1.NodeMetric
		pods   []*corev1.Pod
		pod    *corev1.Pod
		want   plugintest.Status
	}{
		"node without NodeMetric passes": {
			want: ok,
		},
		"under the thresholds": {
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "4", "memory", "4Gi")).Obj(),
			want:   ok,
		},
		"cpu over its threshold": {
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "4Gi")).Obj(),
			want:   rejected("node cpu usage 69 percent > threshold 65 percent"),
		},
		"cpu and memory over their thresholds": {
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "9Gi")).Obj(),
			want:   rejected("node cpu usage 69 percent > threshold 65 percent", "node memory usage 97 percent > threshold 95 percent"),
		},
		"at the threshold passes": {
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "5650m", "memory", "4Gi")).Obj(),
			want:   ok,
		},
		"threshold 0 turns the check off": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.UsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceCPU: 0, corev1.ResourceMemory: 95}
			},
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "10", "memory", "4Gi")).Obj(),
			want:   ok,
		},
		"resource the node does not offer is not checked": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.UsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceCPU: 65, extension.ResourceNvidiaGPU: 50}
			},
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "1", string(extension.ResourceNvidiaGPU), "4")).Obj(),
			want:   ok,
		},
		"DaemonSet pod passes an overloaded node": {
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "10", "memory", "10Gi")).Obj(),
			pod: func() *corev1.Pod {
				p := incoming.DeepCopy()
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "ds", Controller: ptr.To(true)}}
				return p
			}(),
			want: ok,
		},
		"expired NodeMetric is rejected with its age": {
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-200 * time.Second)).NodeUsage(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj(),
			want:   rejected("node metric expired: updated 3m20s ago, expiration 3m0s"),
		},
		"NodeMetric exactly at the expiration is expired": {
			args:   func(a *configv1.LoadAwareSchedulingArgs) { a.NodeMetricExpirationSeconds = ptr.To[int64](60) },
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-time.Minute)).NodeUsage(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj(),
			want:   rejected("node metric expired: updated 1m0s ago, expiration 1m0s"),
		},
		"expired NodeMetric passes with enableScheduleWhenNodeMetricsExpired": {
			args:   func(a *configv1.LoadAwareSchedulingArgs) { a.EnableScheduleWhenNodeMetricsExpired = ptr.To(true) },
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-time.Hour)).NodeUsage(utiltesting.Resources("cpu", "10", "memory", "10Gi")).Obj(),
			want:   ok,
		},
		"expired NodeMetric passes without filterExpiredNodeMetrics": {
			args:   func(a *configv1.LoadAwareSchedulingArgs) { a.FilterExpiredNodeMetrics = ptr.To(false) },
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-time.Hour)).NodeUsage(utiltesting.Resources("cpu", "10", "memory", "10Gi")).Obj(),
			want:   ok,
		},
		"NodeMetric never updated is rejected": {
			metric: func() *slov1alpha1.NodeMetric {
				nm := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now).NodeUsage(utiltesting.Resources("cpu", "1")).Obj()
				nm.Status.UpdateTime = nil
				return nm
			}(),
			want: rejected("node metric was never updated"),
		},
		"NodeMetric without usage passes": {
			metric: func() *slov1alpha1.NodeMetric {
				nm := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(nil).Obj()
				nm.Status.NodeMetric = nil
				return nm
			}(),
			want: ok,
		},
		"node annotation sets a stricter threshold": {
			node:   node("n1").Annotation(extension.AnnotationNodeUsageThresholds, `{"usageThresholds":{"cpu":40}}`).Obj(),
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "4", "memory", "9800Mi")).Obj(),
			want:   rejected("node cpu usage 49 percent > threshold 40 percent"),
		},
		"node annotation sets a looser threshold": {
			node:   node("n1").Annotation(extension.AnnotationNodeUsageThresholds, `{"usageThresholds":{"cpu":90}}`).Obj(),
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "4Gi")).Obj(),
			want:   ok,
		},
		"malformed node annotation falls back to the args": {
			node:   node("n1").Annotation(extension.AnnotationNodeUsageThresholds, `{"usageThresholds":`).Obj(),
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "4Gi")).Obj(),
			want:   rejected("node cpu usage 69 percent > threshold 65 percent"),
		},
		"out-of-range node annotation falls back to the args": {
			node:   node("n1").Annotation(extension.AnnotationNodeUsageThresholds, `{"usageThresholds":{"cpu":140}}`).Obj(),
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "4Gi")).Obj(),
			want:   rejected("node cpu usage 69 percent > threshold 65 percent"),
		},
		"prod pod is checked on prod usage": {
			pods:   web,
			args:   prodThresholds,
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "9", "memory", "4Gi")).Pod("default", "web", extension.PriorityProd, utiltesting.Resources("cpu", "3")).Pod("default", "job", extension.PriorityBatch, utiltesting.Resources("cpu", "6")).Obj(),
			pod:    utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Obj(),
			want:   ok,
		},
		"prod pod over the prod threshold": {
			pods:   web,
			args:   prodThresholds,
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "4Gi")).Pod("default", "web", extension.PriorityProd, utiltesting.Resources("cpu", "5500m")).Obj(),
			pod:    utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Obj(),
			want:   rejected("node prod cpu usage 64 percent > threshold 60 percent"),
		},
		"prod usage includes system usage when asked": {
			pods: web,
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				prodThresholds(a)
				a.ProdUsageIncludeSys = true
			},
			metric: func() *slov1alpha1.NodeMetric {
				nm := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6")).Pod("default", "web", extension.PriorityProd, utiltesting.Resources("cpu", "3")).Obj()
				nm.Status.NodeMetric.SystemUsage = slov1alpha1.ResourceMap{ResourceList: utiltesting.Resources("cpu", "3")}
				return nm
			}(),
			pod:  utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Obj(),
			want: rejected("node prod cpu usage 69 percent > threshold 60 percent"),
		},
		"prod usage counts only pods the scheduler knows": {
			args:   prodThresholds,
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "4Gi")).Pod("default", "gone", extension.PriorityProd, utiltesting.Resources("cpu", "5500m")).Obj(),
			pod:    utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Obj(),
			want:   ok,
		},
		"all-zero prod thresholds fall back to the usage thresholds": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.ProdUsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceCPU: 0}
			},
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "4Gi")).Obj(),
			pod:    utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Obj(),
			want:   rejected("node cpu usage 69 percent > threshold 65 percent"),
		},
		"non-prod pod ignores the prod thresholds": {
			args:   prodThresholds,
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "4Gi")).Pod("default", "web", extension.PriorityProd, utiltesting.Resources("cpu", "1")).Obj(),
			pod: func() *corev1.Pod {
				p := incoming.DeepCopy()
				p.Labels = map[string]string{extension.LabelPodPriorityClass: string(extension.PriorityBatch)}
				return p
			}(),
			want: rejected("node cpu usage 69 percent > threshold 65 percent"),
		},
		"prod thresholds from the node annotation": {
			pods:   web,
			node:   node("n1").Annotation(extension.AnnotationNodeUsageThresholds, `{"prodUsageThresholds":{"cpu":30}}`).Obj(),
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "4", "memory", "4Gi")).Pod("default", "web", extension.PriorityProd, utiltesting.Resources("cpu", "3")).Obj(),
			pod:    utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Obj(),
			want:   rejected("node prod cpu usage 39 percent > threshold 30 percent"),
		},
		"aggregated thresholds on the longest window": {
			args: aggregated(0),
			metric: withAggregate(withAggregate(utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj(),
				5*time.Minute, slov1alpha1.AggregationTypeP95, utiltesting.Resources("cpu", "5")),
				30*time.Minute, slov1alpha1.AggregationTypeP95, utiltesting.Resources("cpu", "8")),
			want: rejected("node cpu p95 usage 89 percent > threshold 70 percent"),
		},
		"aggregated thresholds on a given window": {
			args: aggregated(5 * time.Minute),
			metric: withAggregate(withAggregate(utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj(),
				5*time.Minute, slov1alpha1.AggregationTypeP95, utiltesting.Resources("cpu", "7")),
				30*time.Minute, slov1alpha1.AggregationTypeP95, utiltesting.Resources("cpu", "1")),
			want: rejected("node cpu p95 usage over 5m0s 79 percent > threshold 70 percent"),
		},
		"aggregated thresholds fall back to the latest usage before statistics exist": {
			args:   aggregated(0),
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "7", "memory", "1Gi")).Obj(),
			want:   rejected("node cpu usage 79 percent > threshold 70 percent"),
		},
		"aggregated thresholds from the node annotation": {
			node: node("n1").Annotation(extension.AnnotationNodeUsageThresholds,
				`{"aggregatedUsage":{"usageThresholds":{"cpu":50},"usageAggregationType":"p90"}}`).Obj(),
			metric: withAggregate(utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj(),
				10*time.Minute, slov1alpha1.AggregationTypeP90, utiltesting.Resources("cpu", "5")),
			want: rejected("node cpu p90 usage 59 percent > threshold 50 percent"),
		},
		"batch pod is estimated from its batch resources": {
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "5", "memory", "4Gi")).Obj(),
			pod:    utiltesting.MakePod("incoming").Req(utiltesting.Resources(string(extension.BatchCPU), "2000", string(extension.BatchMemory), "1Gi")).Priority(extension.PriorityBatchValueDefault).QoS(extension.QoSBE).Obj(),
			want:   rejected("node cpu usage 67 percent > threshold 65 percent"),
		},
		"pod without requests is estimated at 250m": {
			metric: utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6300m", "memory", "4Gi")).Obj(),
			pod:    utiltesting.MakePod("incoming").Obj(),
			want:   rejected("node cpu usage 66 percent > threshold 65 percent"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var metrics []*slov1alpha1.NodeMetric
			if tc.metric != nil {
				metrics = append(metrics, tc.metric)
			}
			f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs](t, tc.args), metrics, tc.pods)
			n := tc.node
			if n == nil {
				n = node("n1").Obj()
			}
			p := tc.pod
			if p == nil {
				p = incoming
			}
			if diff := cmp.Diff(tc.want, plugintest.Summarize(f.filter(p, n))); diff != "" {
				t.Errorf("Filter (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestFilterCountsAssignedPods: pods placed on a node count until its NodeMetric reports them.
func TestFilterCountsAssignedPods(t *testing.T) {
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), []*slov1alpha1.NodeMetric{utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-10 * time.Second)).NodeUsage(utiltesting.Resources("cpu", "4", "memory", "1Gi")).Obj()}, nil)
	n := node("n1").Obj()
	small := func(name string) *corev1.Pod {
		return utiltesting.MakePod(name).Req(utiltesting.Resources("cpu", "1")).Obj()
	}
	if s := f.filter(small("p0"), n); !s.IsSuccess() {
		t.Fatalf("Filter on a node at 40%% = %v, want success", s)
	}
	// 4 cpus used + 2 reserved pods × 850m + 850m = 6550m: 66%.
	f.reserve(t, small("p1"), "n1")
	f.reserve(t, small("p2"), "n1")
	if diff := cmp.Diff(plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{"node cpu usage 66 percent > threshold 65 percent"}}, plugintest.Summarize(f.filter(small("p3"), n))); diff != "" {
		t.Errorf("Filter after two reservations (-want,+got):\n%s", diff)
	}
	f.plugin.Unreserve(f.Ctx, nil, small("p2"), "n1")
	if s := f.filter(small("p3"), n); !s.IsSuccess() {
		t.Errorf("Filter after Unreserve = %v, want success", s)
	}
}

// TestFilterLogsMalformedAnnotationOnce: a malformed annotation is reported once per value, not per cycle.
func TestFilterLogsMalformedAnnotationOnce(t *testing.T) {
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), []*slov1alpha1.NodeMetric{utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-10 * time.Second)).NodeUsage(utiltesting.Resources("cpu", "1")).Obj()}, nil)
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	f.Ctx = klog.NewContext(f.Ctx, logger)
	bad := node("n1").Annotation(extension.AnnotationNodeUsageThresholds, `{`).Obj()
	for range 3 {
		f.filter(utiltesting.MakePod("p").Obj(), bad)
	}
	// The scheduler replaces node objects on every update; the same value is not reported again.
	f.filter(utiltesting.MakePod("p").Obj(), bad.DeepCopy())
	worse := node("n1").Annotation(extension.AnnotationNodeUsageThresholds, `[]`).Obj()
	f.filter(utiltesting.MakePod("p").Obj(), worse)
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if got, want := strings.Count(logs, "Ignored a malformed node annotation"), 2; got != want {
		t.Errorf("logged the malformed annotation %d times, want %d (once per value):\n%s", got, want, logs)
	}
}

// TestFilterFollowsNodeAnnotation: a node's thresholds follow its annotation as the node object changes.
func TestFilterFollowsNodeAnnotation(t *testing.T) {
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), []*slov1alpha1.NodeMetric{utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-10 * time.Second)).NodeUsage(utiltesting.Resources("cpu", "4")).Obj()}, nil)
	p := utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "1")).Obj()
	for i, tc := range []struct {
		annotation string
		wantOK     bool
	}{
		{annotation: "", wantOK: true},
		{annotation: `{"usageThresholds":{"cpu":40}}`, wantOK: false},
		{annotation: `{"usageThresholds":{"cpu":50}}`, wantOK: true},
		{annotation: `{"usageThresholds":{"cpu":40}}`, wantOK: false},
		{annotation: "", wantOK: true},
	} {
		n := node("n1")
		if tc.annotation != "" {
			n = n.Annotation(extension.AnnotationNodeUsageThresholds, tc.annotation)
		}
		if got := f.filter(p, n.Obj()).IsSuccess(); got != tc.wantOK {
			t.Errorf("step %d, annotation %q: Filter success = %v, want %v", i, tc.annotation, got, tc.wantOK)
		}
	}
}

// TestFilterFollowsNodeState: Filter and Score keep a summary of each node between cycles; on the same node
// object they follow every change of what it summarizes: a NodeMetric past an assigned pod's estimation
// deadline, reservations, a new NodeMetric and its expiry.
func TestFilterFollowsNodeState(t *testing.T) {
	args := plugintest.Args[config.LoadAwareSchedulingArgs](t, func(a *configv1.LoadAwareSchedulingArgs) {
		a.EstimatedSecondsAfterPodScheduled = ptr.To[int64](400)
		// The score is the share of free cpu.
		a.ResourceWeights = map[corev1.ResourceName]int64{corev1.ResourceCPU: 1}
	})
	reported := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-10*time.Second)).NodeUsage(utiltesting.Resources("cpu", "4", "memory", "1Gi")).Pod("default", "assigned", extension.PriorityProd, utiltesting.Resources("cpu", "300m")).Obj()
	// Assigned 5 minutes ago with an estimation deadline 400 s after: it adds 850m - 300m until a NodeMetric
	// updated more than 100 s from now arrives.
	f := newFixture(t, args, []*slov1alpha1.NodeMetric{reported}, []*corev1.Pod{utiltesting.MakePod("assigned").Req(utiltesting.Resources("cpu", "1")).Scheduled("n1", utiltesting.Now.Add(-5*time.Minute)).Obj()})
	ni := plugintest.NodeInfo(node("n1").Obj())
	p := utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1")).Obj()
	type result struct {
		Filter plugintest.Status
		Score  int64
	}
	run := func() result {
		cycle := framework.NewCycleState()
		r := result{Filter: plugintest.Summarize(f.plugin.Filter(f.Ctx, cycle, p, ni))}
		score, s := f.plugin.Score(f.Ctx, cycle, p, ni)
		if !s.IsSuccess() {
			t.Fatalf("Score = %v", s)
		}
		r.Score = score
		return r
	}
	steps := []struct {
		name string
		do   func()
		want result
	}{{
		name: "estimated assigned pod",
		do:   func() {},
		// 4000m + 550m + 850m = 5400m: 54%; free 46%.
		want: result{Filter: plugintest.Status{Code: fwk.Success}, Score: 46},
	}, {
		name: "time alone ends no estimation",
		do:   func() { f.Clock.Step(100 * time.Second) },
		want: result{Filter: plugintest.Status{Code: fwk.Success}, Score: 46},
	}, {
		name: "estimation over with a NodeMetric past the deadline",
		do: func() {
			nm := reported.DeepCopy()
			nm.ResourceVersion = "1"
			nm.Status.UpdateTime = &metav1.Time{Time: f.Clock.Now().Add(time.Second)}
			if err := f.plugin.nodeMetrics.Update(nm); err != nil {
				t.Fatal(err)
			}
		},
		// 4000m + 850m = 4850m: 49%; free 51%.
		want: result{Filter: plugintest.Status{Code: fwk.Success}, Score: 51},
	}, {
		name: "two reservations",
		do: func() {
			f.reserve(t, utiltesting.MakePod("r1").Req(utiltesting.Resources("cpu", "1")).Obj(), "n1")
			f.reserve(t, utiltesting.MakePod("r2").Req(utiltesting.Resources("cpu", "1")).Obj(), "n1")
		},
		// 4850m + 2 × 850m = 6550m: 66%; free 34%.
		want: result{Filter: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{"node cpu usage 66 percent > threshold 65 percent"}}, Score: 34},
	}, {
		name: "new report covering every pod",
		do: func() {
			nm := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now).NodeUsage(utiltesting.Resources("cpu", "2", "memory", "1Gi")).Pod("default", "assigned", extension.PriorityProd, utiltesting.Resources("cpu", "300m")).Pod("default", "r1", extension.PriorityProd, utiltesting.Resources("cpu", "1")).Pod("default", "r2", extension.PriorityProd, utiltesting.Resources("cpu", "1")).Obj()
			nm.ResourceVersion = "3"
			nm.Status.UpdateTime = &metav1.Time{Time: f.Clock.Now().Add(2 * time.Minute)}
			if err := f.plugin.nodeMetrics.Update(nm); err != nil {
				t.Fatal(err)
			}
		},
		// 2000m + 850m = 2850m: 29%; free 71%.
		want: result{Filter: plugintest.Status{Code: fwk.Success}, Score: 71},
	}, {
		name: "report expired",
		do:   func() { f.Clock.Step(2*time.Minute + 180*time.Second) },
		want: result{Filter: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{"node metric expired: updated 3m0s ago, expiration 3m0s"}}, Score: 0},
	}}
	rejections := func(reason string) float64 {
		return testutil.ToFloat64(f.metrics.LoadAwareRejections.WithLabelValues(reason))
	}
	cpuBefore, expiredBefore := rejections("cpu"), rejections("expired")
	for _, step := range steps {
		step.do()
		if diff := cmp.Diff(step.want, run()); diff != "" {
			t.Errorf("after %s (-want,+got):\n%s", step.name, diff)
		}
	}
	// One rejection for cpu, one for the expired NodeMetric.
	if got := rejections("cpu") - cpuBefore; got != 1 {
		t.Errorf("cpu rejections counted = %v, want 1", got)
	}
	if got := rejections("expired") - expiredBefore; got != 1 {
		t.Errorf("expired rejections counted = %v, want 1", got)
	}
}

// TestPreFilterComputesThePodStateOnce: PreFilter writes the pod's state into the cycle; Filter and Score of
// the same cycle use that state, whatever changes in the pod object after it.
func TestPreFilterComputesThePodStateOnce(t *testing.T) {
	node := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8", "memory", "16Gi")).Obj()
	metric := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now).NodeUsage(utiltesting.Resources("cpu", "2", "memory", "1Gi")).Obj()
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), []*slov1alpha1.NodeMetric{metric}, nil)
	pod := utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj()
	cycle := framework.NewCycleState()
	if res, st := f.plugin.PreFilter(f.Ctx, cycle, pod, nil); res != nil || !st.IsSuccess() {
		t.Fatalf("PreFilter = %v, %v; want no node restriction and success", res, st)
	}
	written, err := cycle.Read(stateKey)
	if err != nil {
		t.Fatalf("PreFilter wrote no state: %v", err)
	}
	if got := f.plugin.podStateOf(f.Ctx, cycle, pod); got != written {
		t.Errorf("Filter's state %p is not the one PreFilter wrote (%p)", got, written)
	}
	if st := f.plugin.Filter(f.Ctx, cycle, pod, plugintest.NodeInfo(node)); !st.IsSuccess() {
		t.Errorf("Filter after PreFilter = %v, want success", st)
	}
}
