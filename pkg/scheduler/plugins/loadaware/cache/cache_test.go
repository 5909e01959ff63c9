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

package cache

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func TestNodesAssign(t *testing.T) {
	type placed struct {
		Node string
		UID  types.UID
		At   time.Time
	}
	pod := func(uid string, at time.Time) AssignedPod {
		return AssignedPod{UID: types.UID(uid), Key: types.NamespacedName{Namespace: "ns", Name: uid}, AssignedAt: at}
	}
	tests := map[string]struct {
		ops  func(c *Nodes)
		want []placed
	}{
		"add": {
			ops:  func(c *Nodes) { c.Assign("n1", pod("a", t0)) },
			want: []placed{{"n1", "a", t0}},
		},
		"re-adding on the same node with a later time (the bind after Reserve) takes it": {
			ops: func(c *Nodes) {
				c.Assign("n1", pod("a", t0))
				c.Assign("n1", pod("a", t0.Add(time.Minute)))
			},
			want: []placed{{"n1", "a", t0.Add(time.Minute)}},
		},
		"an earlier time does not replace a later one": {
			ops: func(c *Nodes) {
				c.Assign("n1", pod("a", t0.Add(time.Minute)))
				c.Assign("n1", pod("a", t0))
			},
			want: []placed{{"n1", "a", t0.Add(time.Minute)}},
		},
		"adding on another node moves the pod": {
			ops: func(c *Nodes) {
				c.Assign("n1", pod("a", t0))
				c.Assign("n2", pod("a", t0.Add(time.Minute)))
			},
			want: []placed{{"n2", "a", t0.Add(time.Minute)}},
		},
		"remove": {
			ops: func(c *Nodes) {
				c.Assign("n1", pod("a", t0))
				c.Assign("n1", pod("b", t0))
				c.Remove("a")
				c.Remove("unknown")
			},
			want: []placed{{"n1", "b", t0}},
		},
		"remove from the wrong node keeps the pod": {
			ops: func(c *Nodes) {
				c.Assign("n1", pod("a", t0))
				c.RemoveFrom("n2", "a")
			},
			want: []placed{{"n1", "a", t0}},
		},
		"remove from its node": {
			ops: func(c *Nodes) {
				c.Assign("n1", pod("a", t0))
				c.RemoveFrom("n1", "a")
				c.RemoveFrom("n1", "a")
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := NewNodes(quantity.Names{corev1.ResourceCPU})
			tc.ops(c)
			var got []placed
			for _, node := range []string{"n1", "n2"} {
				if n := c.Get(node); n != nil {
					for _, p := range n.pods {
						got = append(got, placed{node, p.UID, p.AssignedAt})
					}
					if l := c.Len(node); l != len(n.pods) {
						t.Errorf("Len(%s) = %d, want %d", node, l, len(n.pods))
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pods (-want,+got):\n%s", diff)
			}
		})
	}
}

func usage(kv ...string) slov1alpha1.ResourceMap {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return slov1alpha1.ResourceMap{ResourceList: l}
}

func TestNewNodeMetricView(t *testing.T) {
	resources := quantity.Names{corev1.ResourceCPU, corev1.ResourceMemory}
	nm := &slov1alpha1.NodeMetric{
		ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{
			ReportIntervalSeconds: ptr.To[int64](30),
		}},
		Status: slov1alpha1.NodeMetricStatus{
			UpdateTime: &metav1.Time{Time: t0},
			NodeMetric: &slov1alpha1.NodeMetricInfo{
				NodeUsage:   usage("cpu", "4", "memory", "8Gi"),
				SystemUsage: usage("cpu", "500m", "memory", "1Gi"),
				AggregatedNodeUsages: []slov1alpha1.AggregatedUsage{
					{Duration: metav1.Duration{Duration: 5 * time.Minute}, Usage: map[slov1alpha1.AggregationType]slov1alpha1.ResourceMap{
						slov1alpha1.AggregationTypeP95: usage("cpu", "5", "memory", "9Gi"),
						slov1alpha1.AggregationTypeAVG: usage("cpu", "3", "memory", "7Gi"),
					}},
					{Duration: metav1.Duration{Duration: 30 * time.Minute}, Usage: map[slov1alpha1.AggregationType]slov1alpha1.ResourceMap{
						slov1alpha1.AggregationTypeP95: usage("cpu", "6", "memory", "10Gi"),
						slov1alpha1.AggregationTypeP99: {},
					}},
				},
			},
			PodsMetric: []slov1alpha1.PodMetricInfo{
				{Namespace: "ns", Name: "web", Priority: string(extension.PriorityProd), PodUsage: usage("cpu", "1", "memory", "1Gi")},
				{Namespace: "ns", Name: "api", Priority: string(extension.PriorityProd), PodUsage: usage("cpu", "500m", "memory", "1Gi")},
				{Namespace: "ns", Name: "job", Priority: string(extension.PriorityBatch), PodUsage: usage("cpu", "2", "memory", "2Gi")},
				{Namespace: "ns", Name: "starting", Priority: string(extension.PriorityProd)},
			},
		},
	}
	const gi = 1 << 30
	v := NewNodeMetricView(nm, resources)
	type summary struct {
		UpdateTime     time.Time
		ReportInterval time.Duration
		HasUsage       bool
		NodeUsage      quantity.Vector
		SystemUsage    quantity.Vector
		Pods           map[types.NamespacedName]PodUsage
	}
	want := summary{
		UpdateTime:     t0,
		ReportInterval: 30 * time.Second,
		HasUsage:       true,
		NodeUsage:      quantity.Vector{4000, 8 * gi},
		SystemUsage:    quantity.Vector{500, 1 * gi},
		// An entry without usage ("starting") is no report.
		Pods: map[types.NamespacedName]PodUsage{
			{Namespace: "ns", Name: "web"}: {Usage: quantity.Vector{1000, 1 * gi}, Prod: true},
			{Namespace: "ns", Name: "api"}: {Usage: quantity.Vector{500, 1 * gi}, Prod: true},
			{Namespace: "ns", Name: "job"}: {Usage: quantity.Vector{2000, 2 * gi}},
		},
	}
	got := summary{v.UpdateTime, v.ReportInterval, v.HasUsage, v.NodeUsage, v.SystemUsage, v.Pods}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("view (-want,+got):\n%s", diff)
	}

	aggregates := map[string]struct {
		typ    extension.AggregationType
		window time.Duration
		want   quantity.Vector
		wantOK bool
	}{
		"given window":                      {typ: extension.P95, window: 5 * time.Minute, want: quantity.Vector{5000, 9 * gi}, wantOK: true},
		"longest window":                    {typ: extension.P95, want: quantity.Vector{6000, 10 * gi}, wantOK: true},
		"longest window reporting the type": {typ: extension.AVG, want: quantity.Vector{3000, 7 * gi}, wantOK: true},
		"empty statistic is not reported":   {typ: extension.P99},
		"window not reported":               {typ: extension.P95, window: 10 * time.Minute},
	}
	for name, tc := range aggregates {
		t.Run(name, func(t *testing.T) {
			got, ok := v.Aggregate(tc.typ, tc.window)
			if ok != tc.wantOK {
				t.Fatalf("Aggregate ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Aggregate (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNewNodeMetricViewEmpty(t *testing.T) {
	v := NewNodeMetricView(&slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, quantity.Names{corev1.ResourceCPU})
	if v.HasUsage || !v.UpdateTime.IsZero() || v.ReportInterval != DefaultReportInterval {
		t.Errorf("view of an empty NodeMetric = %+v, want no usage, no update time and the default report interval", v)
	}
}

func TestNodesNodeMetric(t *testing.T) {
	version := func(rv, cpu string) *slov1alpha1.NodeMetric {
		return &slov1alpha1.NodeMetric{
			ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: rv},
			Status:     slov1alpha1.NodeMetricStatus{NodeMetric: &slov1alpha1.NodeMetricInfo{NodeUsage: usage("cpu", cpu)}},
		}
	}
	type event struct {
		delete bool
		nm     *slov1alpha1.NodeMetric
	}
	update := func(nm *slov1alpha1.NodeMetric) event { return event{nm: nm} }
	del := func(nm *slov1alpha1.NodeMetric) event { return event{delete: true, nm: nm} }
	tests := map[string]struct {
		events []event
		want   *int64 // the cpu usage of the view; nil for no view
	}{
		"unknown":                          {},
		"added":                            {events: []event{update(version("10", "1"))}, want: ptr.To[int64](1000)},
		"updated":                          {events: []event{update(version("10", "1")), update(version("11", "2"))}, want: ptr.To[int64](2000)},
		"older version arrives late":       {events: []event{update(version("11", "2")), update(version("10", "1"))}, want: ptr.To[int64](2000)},
		"same version from both informers": {events: []event{update(version("11", "2")), update(version("11", "2"))}, want: ptr.To[int64](2000)},
		"deleted":                          {events: []event{update(version("10", "1")), del(version("12", "1"))}},
		"deleted, last known version":      {events: []event{update(version("10", "1")), del(version("10", "1"))}},
		"deleted, then an older update":    {events: []event{update(version("10", "1")), del(version("12", "1")), update(version("11", "2"))}},
		"re-created after deletion":        {events: []event{del(version("12", "1")), update(version("13", "3"))}, want: ptr.To[int64](3000)},
		"older deletion arrives late":      {events: []event{update(version("13", "3")), del(version("12", "1"))}, want: ptr.To[int64](3000)},
		"versions that are not numbers: the last event wins": {
			events: []event{update(version("", "1")), update(version("", "2"))},
			want:   ptr.To[int64](2000),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			nodes := NewNodes(quantity.Names{corev1.ResourceCPU})
			feed := plugins.NewFeed(nodes.UpdateNodeMetric, nodes.DeleteNodeMetric)
			for _, e := range tc.events {
				var err error
				if e.delete {
					err = feed.Delete(e.nm)
				} else {
					err = feed.Update(e.nm)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			var got *int64
			if n := nodes.Get("n1"); n != nil {
				if v := n.View(); v != nil {
					got = &v.NodeUsage[0]
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cpu usage of the view (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestNodesForObject: the lookup by node object finds what the lookup by name finds, whatever object the
// scheduler holds for a node, and holds on to few objects the nodes no longer have.
func TestNodesForObject(t *testing.T) {
	nodes := NewNodes(quantity.Names{corev1.ResourceCPU, corev1.ResourceMemory})
	object := func(name string) *corev1.Node { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }

	if n := nodes.ForObject(object("unknown")); n != nil {
		t.Errorf("ForObject(a node without state) = %p, want nil", n)
	}
	const count = 200
	objects := make([]*corev1.Node, count)
	for i := range count {
		name := "n" + strconv.Itoa(i)
		nodes.UpdateNodeMetric(&slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}})
		objects[i] = object(name)
	}
	// Each object is found, first by name, then by itself; then every node gets a new object, as on an
	// update, and the old ones are found no more once the lookup is rebuilt.
	for round := range 3 {
		for i, obj := range objects {
			for range 2 {
				if got, want := nodes.ForObject(obj), nodes.Get(obj.Name); got != want || got == nil {
					t.Fatalf("round %d: ForObject(node %d) = %p, want %p", round, i, got, want)
				}
			}
		}
		for i := range objects {
			objects[i] = object(objects[i].Name)
		}
	}
	// Every object is learnt after a bounded number of misses, also those linked after the last rebuild:
	// misses of objects already linked count towards the next rebuild.
	for range 10 {
		for _, obj := range objects {
			nodes.ForObject(obj)
		}
	}
	for i, obj := range objects {
		if (*nodes.byObject.Load())[obj] == nil {
			t.Fatalf("the lookup by object does not hold node %d's object after 10 lookups", i)
		}
	}
	// The last rebuild happened after at most a quarter of the objects (plus 16) were replaced.
	stale := 0
	for obj, n := range *nodes.byObject.Load() {
		if n.object != obj {
			stale++
		}
	}
	if limit := count/4 + 16; stale > limit {
		t.Errorf("the lookup by object holds %d objects the nodes no longer have, want at most %d", stale, limit)
	}
}

// invalidated is a memo that counts its invalidations.
type invalidated struct{ calls int }

func (m *invalidated) Invalidate() { m.calls++ }

// TestNodeStamp: a node's stamp changes, and its memo is invalidated, with its NodeMetric and its pods, and
// only then.
func TestNodeStamp(t *testing.T) {
	nodes := NewNodes(quantity.Names{corev1.ResourceCPU, corev1.ResourceMemory})
	feed := plugins.NewFeed(nodes.UpdateNodeMetric, nodes.DeleteNodeMetric)
	feedNodeMetric := func(rv string, deleted bool) {
		nm := &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: rv}}
		pass := feed.Update
		if deleted {
			pass = feed.Delete
		}
		if err := pass(nm); err != nil {
			t.Fatal(err)
		}
	}
	feedNodeMetric("1", false)
	n := nodes.Get("n1")
	steps := []struct {
		name    string
		do      func()
		changed bool
	}{
		{"nothing", func() {}, false},
		{"an older NodeMetric", func() { feedNodeMetric("0", false) }, false},
		{"a newer NodeMetric", func() { feedNodeMetric("2", false) }, true},
		{"a pod assigned", func() { nodes.Assign("n1", AssignedPod{UID: "p1"}) }, true},
		{"a pod assigned elsewhere", func() { nodes.Assign("n2", AssignedPod{UID: "p2"}) }, false},
		{"a pod removed", func() { nodes.Remove("p1") }, true},
		{"the NodeMetric deleted", func() { feedNodeMetric("3", true) }, true},
	}
	for _, step := range steps {
		before := n.Stamp()
		memo := &invalidated{}
		n.SetMemo(memo)
		step.do()
		if changed := n.Stamp() != before; changed != step.changed {
			t.Errorf("after %s: stamp changed = %v, want %v", step.name, changed, step.changed)
		}
		if memo.calls > 0 != step.changed {
			t.Errorf("after %s: memo invalidated %d times, want it invalidated = %v", step.name, memo.calls, step.changed)
		}
	}
	if v := n.Stamp().View(); v != nil {
		t.Errorf("View() of a deleted NodeMetric's stamp = %+v, want nil", v)
	}
}
