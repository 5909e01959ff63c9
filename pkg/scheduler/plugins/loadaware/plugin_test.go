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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestNewRejectsBadArgs(t *testing.T) {
	tests := map[string]struct {
		args runtime.Object
		want string
	}{
		"wrong type": {
			args: &configv1.LoadAwareSchedulingArgs{},
			want: "want args of type LoadAwareSchedulingArgs, got *v1.LoadAwareSchedulingArgs",
		},
		"threshold out of range": {
			args: plugintest.Args[config.LoadAwareSchedulingArgs](t, func(a *configv1.LoadAwareSchedulingArgs) {
				a.UsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceCPU: 120}
			}),
			want: "pluginConfig[LoadAwareScheduling].args.usageThresholds[cpu]: Invalid value: 120: must be a percentage in [0, 100]",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := plugintest.New(t)
			_, err := NewFactory(env.CRDs)(env.Ctx, tc.args, env.Handle(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestResourcesOf(t *testing.T) {
	a := plugintest.Args[config.LoadAwareSchedulingArgs](t, func(a *configv1.LoadAwareSchedulingArgs) {
		a.UsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceMemory: 90, extension.BatchMemory: 80}
		a.Aggregated = &configv1.LoadAwareSchedulingAggregatedArgs{UsageThresholds: map[corev1.ResourceName]int64{extension.ResourceNvidiaGPU: 50}, UsageAggregationType: extension.P95}
		a.SupportedResources = []corev1.ResourceName{corev1.ResourceEphemeralStorage}
	})
	want := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, extension.BatchMemory, extension.ResourceNvidiaGPU}
	if diff := cmp.Diff(want, []corev1.ResourceName(resourcesOf(a))); diff != "" {
		t.Errorf("resourcesOf (-want,+got):\n%s", diff)
	}
}

func TestQueueingHints(t *testing.T) {
	nm := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-time.Second)).NodeUsage(utiltesting.Resources("cpu", "6")).Obj()
	cooler := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now).NodeUsage(utiltesting.Resources("cpu", "1")).Obj()
	relabelled := nm.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	unstructuredOf := func(obj runtime.Object) *unstructured.Unstructured {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	n := node("n1").Obj()
	annotated := node("n1").Annotation(extension.AnnotationNodeUsageThresholds, `{"usageThresholds":{"cpu":90}}`).Obj()
	labelled := node("n1").Label("zone", "a").Obj()
	bigger := node("n1").Allocatable(utiltesting.Resources("cpu", "20")).Obj()
	assigned := utiltesting.MakePod("gone").Scheduled("n1", utiltesting.Now).Obj()

	tests := map[string]struct {
		event    fwk.ClusterEvent
		old, new any
		want     fwk.QueueingHint
	}{
		"NodeMetric added":                         {event: fwk.ClusterEvent{Resource: plugins.NodeMetricEvents, ActionType: fwk.Add}, new: unstructuredOf(nm), want: fwk.Queue},
		"NodeMetric deleted":                       {event: fwk.ClusterEvent{Resource: plugins.NodeMetricEvents, ActionType: fwk.Delete}, old: unstructuredOf(nm), want: fwk.Queue},
		"NodeMetric status changed":                {event: fwk.ClusterEvent{Resource: plugins.NodeMetricEvents, ActionType: fwk.Update}, old: unstructuredOf(nm), new: unstructuredOf(cooler), want: fwk.Queue},
		"NodeMetric labels changed only":           {event: fwk.ClusterEvent{Resource: plugins.NodeMetricEvents, ActionType: fwk.Update}, old: unstructuredOf(nm), new: unstructuredOf(relabelled), want: fwk.QueueSkip},
		"typed NodeMetric status changed":          {event: fwk.ClusterEvent{Resource: plugins.NodeMetricEvents, ActionType: fwk.Update}, old: nm, new: cooler, want: fwk.Queue},
		"typed NodeMetric labels changed only":     {event: fwk.ClusterEvent{Resource: plugins.NodeMetricEvents, ActionType: fwk.Update}, old: nm, new: relabelled, want: fwk.QueueSkip},
		"assigned pod deleted":                     {event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, old: assigned, want: fwk.Queue},
		"assigned pod deleted, tombstone":          {event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, old: toolscache.DeletedFinalStateUnknown{Obj: assigned}, want: fwk.Queue},
		"node added":                               {event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}, new: n, want: fwk.Queue},
		"node usage-thresholds annotation changed": {event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAnnotation}, old: n, new: annotated, want: fwk.Queue},
		"node allocatable changed":                 {event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAllocatable}, old: n, new: bigger, want: fwk.Queue},
		"node labels changed only":                 {event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAnnotation}, old: n, new: labelled, want: fwk.QueueSkip},
	}
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), nil, nil)
	events, err := f.plugin.EventsToRegister(f.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	logger, _ := ktesting.NewTestContext(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var hint fwk.QueueingHintFn
			for _, e := range events {
				if e.Event.Resource == tc.event.Resource && e.Event.ActionType&tc.event.ActionType != 0 {
					hint = e.QueueingHintFn
				}
			}
			if hint == nil {
				t.Fatalf("no event registered for %s", tc.event.Label())
			}
			got, err := hint(logger, utiltesting.MakePod("pending").Obj(), tc.old, tc.new)
			if err != nil {
				t.Fatalf("hint: %v", err)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSignPod(t *testing.T) {
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), nil, nil)
	sign := func(p *corev1.Pod) any {
		fragments, status := f.plugin.SignPod(f.Ctx, p)
		if !status.IsSuccess() || len(fragments) != 1 {
			t.Fatalf("SignPod = %v, %v", fragments, status)
		}
		return fragments[0].Value
	}
	a, b := utiltesting.MakePod("a").Req(utiltesting.Resources("cpu", "1")).Obj(), utiltesting.MakePod("b").Req(utiltesting.Resources("cpu", "1")).Obj()
	b.Labels = map[string]string{"app": "other"}
	if diff := cmp.Diff(sign(a), sign(b)); diff != "" {
		t.Errorf("pods with equal resources signed differently (-a,+b):\n%s", diff)
	}
	if cmp.Equal(sign(a), sign(utiltesting.MakePod("c").Req(utiltesting.Resources("cpu", "2")).Obj())) {
		t.Error("pods with different requests signed alike")
	}
	if cmp.Equal(sign(a), sign(utiltesting.MakePod("d").Req(utiltesting.Resources(string(extension.BatchCPU), "1000")).Priority(extension.PriorityBatchValueDefault).QoS(extension.QoSBE).Obj())) {
		t.Error("a koord-prod and a koord-batch pod signed alike")
	}
}

// TestNewWaitsForNodeMetrics: the plugin sees the NodeMetrics that exist when it is built.
func TestNewWaitsForNodeMetrics(t *testing.T) {
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), []*slov1alpha1.NodeMetric{utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-time.Second)).NodeUsage(utiltesting.Resources("cpu", "9")).Obj()}, nil)
	if s := f.filter(utiltesting.MakePod("p").Obj(), node("n1").Obj()); s.IsSuccess() {
		t.Error("Filter passed a node at 90% cpu right after New: the NodeMetric informer was not synced")
	}
}

// TestHintsUpdateTheCaches: kube-scheduler's informers may deliver an event before the plugin's own
// handlers run; the hints update the plugin's caches, so the retry they cause sees the change.
func TestHintsUpdateTheCaches(t *testing.T) {
	hot := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-time.Second)).NodeUsage(utiltesting.Resources("cpu", "9")).Obj()
	hot.ResourceVersion = "10"
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), []*slov1alpha1.NodeMetric{hot}, nil)
	n := node("n1").Obj()
	incoming := utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1")).Obj()
	if s := f.filter(incoming, n); s.IsSuccess() {
		t.Fatal("Filter passed a node at 90% cpu")
	}
	hint := func(resource fwk.EventResource) fwk.QueueingHintFn {
		events, err := f.plugin.EventsToRegister(f.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Event.Resource == resource {
				return e.QueueingHintFn
			}
		}
		t.Fatalf("no event registered for %s", resource)
		return nil
	}
	logger, _ := ktesting.NewTestContext(t)

	cool := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now).NodeUsage(utiltesting.Resources("cpu", "1")).Obj()
	cool.ResourceVersion = "11"
	oldU, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hot)
	if err != nil {
		t.Fatal(err)
	}
	newU, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cool)
	if err != nil {
		t.Fatal(err)
	}
	got, err := hint(plugins.NodeMetricEvents)(logger, incoming, &unstructured.Unstructured{Object: oldU}, &unstructured.Unstructured{Object: newU})
	if err != nil || got != fwk.Queue {
		t.Fatalf("NodeMetric hint = %v, %v; want Queue", got, err)
	}
	if s := f.filter(incoming, n); !s.IsSuccess() {
		t.Errorf("Filter after the hint saw the cooler NodeMetric = %v, want success", s)
	}

	f.reserve(t, utiltesting.MakePod("gone").Req(utiltesting.Resources("cpu", "1")).Obj(), "n1")
	if got, err := hint(fwk.AssignedPod)(logger, incoming, utiltesting.MakePod("gone").Scheduled("n1", utiltesting.Now).Obj(), nil); err != nil || got != fwk.Queue {
		t.Fatalf("assigned pod hint = %v, %v; want Queue", got, err)
	}
	if n := f.plugin.nodes.Len("n1"); n != 0 {
		t.Errorf("assigned pods on n1 after the delete hint = %d, want 0", n)
	}
}

// TestProfileWithPreFilter: a profile that enables the plugin at PreFilter too, as Koordinator's configurations
// do, builds, and its PreFilter leaves the pod's state for the cycle's Filter.
func TestProfileWithPreFilter(t *testing.T) {
	node := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8", "memory", "16Gi")).Obj()
	env := plugintest.New(t, plugintest.WithSnapshot(nil, []*corev1.Node{node}))
	args := plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil)
	var plugin *Plugin
	fh := env.Framework(t, "koord-scheduler",
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterPluginAsExtensions(Name, plugintest.Capture(env, NewFactory(env.CRDs, plugins.WithClock(env.Clock)), args, &plugin),
			"PreFilter", "Filter", "Score", "Reserve"),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
	)
	pod := utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj()
	cycle := framework.NewCycleState()
	if _, st, _ := fh.RunPreFilterPlugins(env.Ctx, cycle, pod); !st.IsSuccess() {
		t.Fatalf("RunPreFilterPlugins = %v", st)
	}
	if _, err := cycle.Read(stateKey); err != nil {
		t.Errorf("PreFilter left no state for the cycle: %v", err)
	}
}
