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
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// TestRuntime checks whole trees built from ElasticQuota objects and pods; the arithmetic is in the
// comments. Pending pods count in request, so they make their quota borrow.
func TestRuntime(t *testing.T) {
	tests := map[string]struct {
		total  corev1.ResourceList
		quotas []*schedv1alpha1.ElasticQuota
		pods   []*corev1.Pod
		opts   func(*Options)
		want   map[string]corev1.ResourceList
	}{
		// a: request 30 > min 10, borrows; b: request 5, lends 5. 40 - 10 - 5 = 25 left, a gets 10 + 25 = 35,
		// capped at its request 30.
		"two tenants borrow": {
			total: utiltesting.Resources("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("a").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj(),
				utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj(),
			},
			pods: []*corev1.Pod{
				utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "20")).Label(extension.LabelQuotaName, "a").Node("n1").Obj(),
				utiltesting.MakePod("a2").Req(utiltesting.Resources("cpu", "10")).Label(extension.LabelQuotaName, "a").Obj(),
				utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "5")).Label(extension.LabelQuotaName, "b").Node("n1").Obj(),
			},
			want: map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "30"), "b": utiltesting.Resources("cpu", "5")},
		},
		// b keeps its min 10 though it requests 5: a gets 40 - 10 = 30 of its 40.
		"lending off": {
			total: utiltesting.Resources("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("a").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj(),
				utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).NoLending().Obj(),
			},
			pods: []*corev1.Pod{
				utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "40")).Label(extension.LabelQuotaName, "a").Obj(),
				utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "5")).Label(extension.LabelQuotaName, "b").Obj(),
			},
			want: map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "30"), "b": utiltesting.Resources("cpu", "10")},
		},
		// c lends nothing: its min 10 counts in its request and in its parent p's, so p keeps 10 of the 40 though
		// no pod asks for it, and q gets the other 30 (as Koordinator propagates a non-lending min up the tree).
		"lending off keeps the min up the tree": {
			total: utiltesting.Resources("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("p").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).IsParent().Obj(),
				utiltesting.MakeElasticQuota("c").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Parent("p").NoLending().Obj(),
				utiltesting.MakeElasticQuota("q").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj(),
			},
			pods: []*corev1.Pod{utiltesting.MakePod("q1").Req(utiltesting.Resources("cpu", "40")).Label(extension.LabelQuotaName, "q").Obj()},
			want: map[string]corev1.ResourceList{"p": utiltesting.Resources("cpu", "10"), "c": utiltesting.Resources("cpu", "10"), "q": utiltesting.Resources("cpu", "30")},
		},
		// Shared weights 1:3 of 40 spare cpu; memory weights default to max (10Gi each), so memory splits 1:1.
		"shared weights": {
			total: utiltesting.Resources("cpu", "40", "memory", "10Gi"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "40", "memory", "10Gi")).Annotation(extension.AnnotationSharedWeight, `{"cpu":"1"}`).Obj(),
				utiltesting.MakeElasticQuota("b").Max(utiltesting.Resources("cpu", "40", "memory", "10Gi")).Annotation(extension.AnnotationSharedWeight, `{"cpu":"3"}`).Obj(),
			},
			pods: []*corev1.Pod{
				utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "40", "memory", "10Gi")).Label(extension.LabelQuotaName, "a").Obj(),
				utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "40", "memory", "10Gi")).Label(extension.LabelQuotaName, "b").Obj(),
			},
			want: map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "10", "memory", "5Gi"), "b": utiltesting.Resources("cpu", "30", "memory", "5Gi")},
		},
		// min 20 + 40 > 30: scaled to 10 and 20, which both requests exceed.
		"min scaling": {
			total: utiltesting.Resources("cpu", "30"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("a").Min(utiltesting.Resources("cpu", "20")).Max(utiltesting.Resources("cpu", "100")).Obj(),
				utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "40")).Max(utiltesting.Resources("cpu", "100")).Obj(),
			},
			pods: []*corev1.Pod{
				utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "25")).Label(extension.LabelQuotaName, "a").Obj(),
				utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "50")).Label(extension.LabelQuotaName, "b").Obj(),
			},
			want: map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "10"), "b": utiltesting.Resources("cpu", "20")},
		},
		"min scaling off": {
			total: utiltesting.Resources("cpu", "30"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("a").Min(utiltesting.Resources("cpu", "20")).Max(utiltesting.Resources("cpu", "100")).Obj(),
				utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "40")).Max(utiltesting.Resources("cpu", "100")).Obj(),
			},
			pods: []*corev1.Pod{
				utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "25")).Label(extension.LabelQuotaName, "a").Obj(),
				utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "50")).Label(extension.LabelQuotaName, "b").Obj(),
			},
			opts: func(o *Options) { o.EnableMinQuotaScale = false },
			want: map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "20"), "b": utiltesting.Resources("cpu", "40")},
		},
		// Level 1 (total 100): p requests min(50,100) + min(10,100) = 60 <= its min 60, so gets 60; q requests
		// 80 > min 40, gets 40, and nothing is left. Level 2 (p's 60): p1 requests 50 > min 20, p2 10 <= min
		// 40; 60 - 20 - 10 = 30 left -> p1 20 + 30 = 50.
		"multi-level tree": {
			total: utiltesting.Resources("cpu", "100"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("p").Min(utiltesting.Resources("cpu", "60")).Max(utiltesting.Resources("cpu", "100")).IsParent().Obj(),
				utiltesting.MakeElasticQuota("p1").Min(utiltesting.Resources("cpu", "20")).Max(utiltesting.Resources("cpu", "100")).Parent("p").Obj(),
				utiltesting.MakeElasticQuota("p2").Min(utiltesting.Resources("cpu", "40")).Max(utiltesting.Resources("cpu", "100")).Parent("p").Obj(),
				utiltesting.MakeElasticQuota("q").Min(utiltesting.Resources("cpu", "40")).Max(utiltesting.Resources("cpu", "100")).Obj(),
			},
			pods: []*corev1.Pod{
				utiltesting.MakePod("p1-1").Req(utiltesting.Resources("cpu", "50")).Label(extension.LabelQuotaName, "p1").Obj(),
				utiltesting.MakePod("p2-1").Req(utiltesting.Resources("cpu", "10")).Label(extension.LabelQuotaName, "p2").Obj(),
				utiltesting.MakePod("q-1").Req(utiltesting.Resources("cpu", "80")).Label(extension.LabelQuotaName, "q").Obj(),
			},
			want: map[string]corev1.ResourceList{"p": utiltesting.Resources("cpu", "60"), "p1": utiltesting.Resources("cpu", "50"), "p2": utiltesting.Resources("cpu", "10"), "q": utiltesting.Resources("cpu", "40")},
		},
		// a requests 100 but max is 15, so its request counts as 15. Equal weights: 40 splits 20/20, a is capped
		// at 15 and its 5 go to b: 25 of its 30.
		"capped by max": {
			total: utiltesting.Resources("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "15")).Annotation(extension.AnnotationSharedWeight, `{"cpu":"1"}`).Obj(),
				utiltesting.MakeElasticQuota("b").Max(utiltesting.Resources("cpu", "40")).Annotation(extension.AnnotationSharedWeight, `{"cpu":"1"}`).Obj(),
			},
			pods: []*corev1.Pod{
				utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "100")).Label(extension.LabelQuotaName, "a").Obj(),
				utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "30")).Label(extension.LabelQuotaName, "b").Obj(),
			},
			want: map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "15"), "b": utiltesting.Resources("cpu", "25")},
		},
		// The default quota's 10 used cpu comes off the 40 the tree shares: a gets 30 of its 40.
		"default quota use comes off the total": {
			total:  utiltesting.Resources("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "40")).Obj()},
			pods: []*corev1.Pod{
				utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "40")).Label(extension.LabelQuotaName, "a").Obj(),
				utiltesting.MakePod("d1").Req(utiltesting.Resources("cpu", "10")).Node("n1").Obj(),
			},
			want: map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "30")},
		},
		// o's parent does not exist: it gets no runtime.
		"quota outside the tree": {
			total: utiltesting.Resources("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "40")).Obj(),
				utiltesting.MakeElasticQuota("o").Max(utiltesting.Resources("cpu", "40")).Parent("missing").Obj(),
			},
			pods: []*corev1.Pod{utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "10")).Label(extension.LabelQuotaName, "a").Obj()},
			want: map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "10")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(tc.total, tc.quotas, tc.pods, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, runtimes(m)); diff != "" {
				t.Errorf("runtime (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestRuntimeFollowsChanges checks that runtime quotas follow pods, nodes and quotas as they change.
func TestRuntimeFollowsChanges(t *testing.T) {
	m, err := newTestManager(utiltesting.Resources("cpu", "40"), []*schedv1alpha1.ElasticQuota{
		utiltesting.MakeElasticQuota("a").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj(),
		utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj(),
	}, []*corev1.Pod{utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "40")).Label(extension.LabelQuotaName, "a").Obj()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func()
		want map[string]corev1.ResourceList
	}{
		{"a borrows all of b's min", func() {}, map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "40"), "b": utiltesting.Resources("cpu", "0")}},
		// b asks for 20: b gets its min 10 back first, then 40 - 10 - 10 = 20 is split 40:40 -> 10 each.
		{"b asks for its min back", func() {
			m.UpdatePod(utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "20")).Label(extension.LabelQuotaName, "b").Obj())
		}, map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "20"), "b": utiltesting.Resources("cpu", "20")}},
		{"a second node doubles the total", func() { m.SetNode("n2", utiltesting.Resources("cpu", "40")) }, map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "40"), "b": utiltesting.Resources("cpu", "20")}},
		{"b's pod goes", func() { m.DeletePod("b1") }, map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "40"), "b": utiltesting.Resources("cpu", "0")}},
		{"b may no longer lend", func() {
			if err := m.UpdateQuota(utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "50")).Max(utiltesting.Resources("cpu", "80")).NoLending().Obj()); err != nil {
				t.Fatal(err)
			}
		}, map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "30"), "b": utiltesting.Resources("cpu", "50")}},
		{"b is deleted", func() { m.DeleteQuota("b") }, map[string]corev1.ResourceList{"a": utiltesting.Resources("cpu", "40")}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, runtimes(m)); diff != "" {
			t.Errorf("%s: runtime (-want,+got):\n%s", s.name, diff)
		}
	}
}

func TestQuotaOf(t *testing.T) {
	quotas := []*schedv1alpha1.ElasticQuota{
		utiltesting.MakeElasticQuota("team-a").Max(utiltesting.Resources("cpu", "10")).Obj(),
		utiltesting.MakeElasticQuota("ns1").Namespace("ns1").Max(utiltesting.Resources("cpu", "10")).Obj(),
		utiltesting.MakeElasticQuota("elsewhere").Namespace("other").Max(utiltesting.Resources("cpu", "10")).Obj(),
		utiltesting.MakeElasticQuota("listed").Max(utiltesting.Resources("cpu", "10")).Annotation(extension.AnnotationQuotaNamespaces, `["ns2","elsewhere"]`).Obj(),
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"label":                          {pod: utiltesting.MakePod("p").Label(extension.LabelQuotaName, "team-a").Namespace("ns1").Obj(), want: "team-a"},
		"label of an unknown quota":      {pod: utiltesting.MakePod("p").Label(extension.LabelQuotaName, "nope").Namespace("ns1").Obj(), want: extension.DefaultQuotaName},
		"quota named like the namespace": {pod: utiltesting.MakePod("p").Namespace("ns1").Obj(), want: "ns1"},
		"quota named like the namespace but in another one": {pod: utiltesting.MakePod("p").Namespace("elsewhere").Obj(), want: "listed"},
		"namespaces annotation":                             {pod: utiltesting.MakePod("p").Namespace("ns2").Obj(), want: "listed"},
		"default quota":                                     {pod: utiltesting.MakePod("p").Namespace("ns3").Obj(), want: extension.DefaultQuotaName},
	}
	m, err := newTestManager(utiltesting.Resources("cpu", "10"), quotas, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, m.QuotaOf(tc.pod)); diff != "" {
				t.Errorf("QuotaOf (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestPodsMoveWithQuotas checks that a pod charged to the default quota moves to a quota utiltesting.Now for its
// namespace, and back when the quota goes.
func TestPodsMoveWithQuotas(t *testing.T) {
	m, err := newTestManager(utiltesting.Resources("cpu", "10"), nil, []*corev1.Pod{utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "2")).Namespace("ns1").Node("n1").Obj()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	used := func() map[string]string {
		out := map[string]string{}
		for _, s := range m.Statuses() {
			q := s.Used.List()[corev1.ResourceCPU]
			out[s.Name] = q.String()
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{extension.DefaultQuotaName: "2", extension.SystemQuotaName: "0"}, used()); diff != "" {
		t.Errorf("before (-want,+got):\n%s", diff)
	}
	if err := m.UpdateQuota(utiltesting.MakeElasticQuota("ns1").Namespace("ns1").Max(utiltesting.Resources("cpu", "10")).Obj()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{extension.DefaultQuotaName: "0", extension.SystemQuotaName: "0", "ns1": "2"}, used()); diff != "" {
		t.Errorf("with the quota (-want,+got):\n%s", diff)
	}
	m.DeleteQuota("ns1")
	if diff := cmp.Diff(map[string]string{extension.DefaultQuotaName: "2", extension.SystemQuotaName: "0"}, used()); diff != "" {
		t.Errorf("after (-want,+got):\n%s", diff)
	}
}

func TestUpdateQuotaRejectsBadAnnotations(t *testing.T) {
	tests := map[string]struct {
		quota *schedv1alpha1.ElasticQuota
		want  string
	}{
		"shared weight not JSON": {
			quota: utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "10")).Annotation(extension.AnnotationSharedWeight, "{cpu").Obj(),
			want:  `quota "a": annotation "quota.scheduling.koordinator.sh/shared-weight": invalid character 'c' looking for beginning of object key string`,
		},
		"negative shared weight": {
			quota: utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "10")).Annotation(extension.AnnotationSharedWeight, `{"cpu":"-1"}`).Obj(),
			want:  `quota "a": annotation "quota.scheduling.koordinator.sh/shared-weight": cpu weight -1 is negative`,
		},
		"bad namespaces": {
			quota: utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "10")).Annotation(extension.AnnotationQuotaNamespaces, `["Bad_NS"]`).Obj(),
			want:  `quota "a": annotation "quota.scheduling.koordinator.sh/namespaces": [0]: "Bad_NS" is not a valid namespace name (an RFC 1123 label)`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(utiltesting.Resources("cpu", "10"), []*schedv1alpha1.ElasticQuota{utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "4")).Obj()}, nil, func(o *Options) { o.EnableRuntimeQuota = false })
			if err != nil {
				t.Fatal(err)
			}
			err = m.UpdateQuota(tc.quota)
			if err == nil {
				t.Fatal("UpdateQuota succeeded, want an error")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("UpdateQuota error (-want,+got):\n%s", diff)
			}
			// The last good configuration stays: max 4, not the rejected object's 10.
			a, err := m.Admission("a", false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(quantity.Amounts{corev1.ResourceCPU: 4000}, a.Levels[0].Limit); diff != "" {
				t.Errorf("limit (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestTerminatingPods: a pod whose deletion started leaves its quota at once, unless CountTerminatingPods
// (Koordinator's accounting) keeps it there until it is gone or done.
func TestTerminatingPods(t *testing.T) {
	quotas := []*schedv1alpha1.ElasticQuota{utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "40")).Obj()}
	deleting := utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "10")).Label(extension.LabelQuotaName, "a").Node("n1").Obj()
	deleting.DeletionTimestamp = &metav1.Time{Time: utiltesting.Now}
	done := utiltesting.MakePod("a2").Req(utiltesting.Resources("cpu", "5")).Label(extension.LabelQuotaName, "a").Node("n1").Phase(corev1.PodSucceeded).Obj()
	for name, tc := range map[string]struct {
		count bool
		want  string
	}{
		"leave at deletion (Koord's default)": {count: false, want: "0"},
		"count until gone (Koordinator's)":    {count: true, want: "10"},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(utiltesting.Resources("cpu", "40"), quotas, []*corev1.Pod{deleting, done}, func(o *Options) { o.CountTerminatingPods = tc.count })
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range m.Statuses() {
				if s.Name == "a" {
					q := s.Used.List()[corev1.ResourceCPU]
					if got := q.String(); got != tc.want {
						t.Errorf("used cpu = %s, want %s", got, tc.want)
					}
				}
			}
		})
	}
}

// TestMultiQuotaTree: with the MultiQuotaTree gate each tree ID is a tree of its own, sharing its root's
// total-resource annotation; the quotas without a tree share the cluster less the trees' totals (unless the
// root is labelled ignore-default-tree). The node has 100 cpu.
func TestMultiQuotaTree(t *testing.T) {
	cpu := func(v string) corev1.ResourceList { return utiltesting.Resources("cpu", v) }
	// Tree t1: root r1 (total 30 cpu) with child a; b has no tree.
	quotas := func(rootEdit func(*utiltesting.ElasticQuotaWrapper)) []*schedv1alpha1.ElasticQuota {
		r1 := utiltesting.MakeElasticQuota("r1").Min(cpu("0")).Max(cpu("1000")).IsParent().Tree("t1", true, `{"cpu":"30"}`)
		if rootEdit != nil {
			rootEdit(r1)
		}
		return []*schedv1alpha1.ElasticQuota{
			r1.Obj(),
			utiltesting.MakeElasticQuota("a").Min(cpu("0")).Max(cpu("1000")).Parent("r1").Tree("t1", false, "").Obj(),
			utiltesting.MakeElasticQuota("b").Min(cpu("0")).Max(cpu("1000")).Obj(),
		}
	}
	// a asks 50, b asks 90.
	pods := []*corev1.Pod{
		utiltesting.MakePod("a1").Req(cpu("50")).Label(extension.LabelQuotaName, "a").Obj(),
		utiltesting.MakePod("b1").Req(cpu("90")).Label(extension.LabelQuotaName, "b").Obj(),
	}
	tests := map[string]struct {
		multiTree bool
		rootEdit  func(*utiltesting.ElasticQuotaWrapper)
		want      map[string]corev1.ResourceList
	}{
		// One tree of 100: r1 (request 50) and b (request 90) have no min and equal weights (max 1000): 50 each.
		"gate off: one tree": {
			want: map[string]corev1.ResourceList{"r1": cpu("50"), "a": cpu("50"), "b": cpu("50")},
		},
		// t1 shares 30; the default tree 100 - 30 = 70, all of it b's (it asks 90).
		"gate on: the tree shares its total, the rest the cluster less it": {
			multiTree: true,
			want:      map[string]corev1.ResourceList{"r1": cpu("30"), "a": cpu("30"), "b": cpu("70")},
		},
		"gate on, ignore-default-tree: the default tree keeps the whole cluster": {
			multiTree: true,
			rootEdit:  func(q *utiltesting.ElasticQuotaWrapper) { q.Label(extension.LabelQuotaIgnoreDefaultTree, "true") },
			want:      map[string]corev1.ResourceList{"r1": cpu("30"), "a": cpu("30"), "b": cpu("90")},
		},
		"gate on, the root without a total: the tree has nothing": {
			multiTree: true,
			rootEdit:  func(q *utiltesting.ElasticQuotaWrapper) { delete(q.Annotations, extension.AnnotationTotalResource) },
			want:      map[string]corev1.ResourceList{"r1": cpu("0"), "a": cpu("0"), "b": cpu("90")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(cpu("100"), quotas(tc.rootEdit), pods, func(o *Options) { o.MultiQuotaTree = tc.multiTree })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, runtimes(m)); diff != "" {
				t.Errorf("runtime quotas (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestForgetMissing: pods the informer lost are forgotten at the second round that misses them, with what
// they used and requested; a pod missing once then seen again stays, and so do live pods. Quota a has 4 pods
// of 10 cpu: a1 live and bound, a2 bound then lost (its deletion never arrived), a3 reserved after its
// deletion had arrived (the binding cycle's Reserve came second), a4 missing from the first round only.
func TestForgetMissing(t *testing.T) {
	quotas := []*schedv1alpha1.ElasticQuota{utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "100")).Obj()}
	pod := func(name string, bound bool) *corev1.Pod {
		b := utiltesting.MakePod(name).UID(name).Req(utiltesting.Resources("cpu", "10")).Label(extension.LabelQuotaName, "a")
		if bound {
			b = b.Node("n1")
		}
		return b.Obj()
	}
	a1, a2, a3, a4 := pod("a1", true), pod("a2", true), pod("a3", false), pod("a4", true)
	m, err := newTestManager(utiltesting.Resources("cpu", "100"), quotas, []*corev1.Pod{a1, a2, a3, a4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.DeletePod(a3.UID)
	m.Reserve(a3)
	usage := func() string {
		for _, s := range m.Statuses() {
			if s.Name == "a" {
				used, request := s.Used.List()[corev1.ResourceCPU], s.Request.List()[corev1.ResourceCPU]
				return "used " + used.String() + ", request " + request.String()
			}
		}
		return "no quota a"
	}
	if got, want := usage(), "used 40, request 40"; got != want {
		t.Fatalf("before: %s, want %s", got, want)
	}

	live := map[types.UID]bool{"a1": true}
	round := func() []string {
		var names []string
		for _, f := range m.ForgetMissing(func(p *corev1.Pod) bool { return live[p.UID] }) {
			names = append(names, fmt.Sprintf("%s/%s/%t", f.Pod.Name, f.Quota, f.Assigned))
		}
		slices.Sort(names)
		return names
	}
	if got := round(); len(got) != 0 {
		t.Errorf("first round forgot %v, want nothing", got)
	}
	live["a4"] = true
	if diff := cmp.Diff([]string{"a2/a/true", "a3/a/true"}, round()); diff != "" {
		t.Errorf("second round forgot (-want +got):\n%s", diff)
	}
	if got, want := usage(), "used 20, request 20"; got != want {
		t.Errorf("after: %s, want %s", got, want)
	}
	delete(live, "a4")
	if got := round(); len(got) != 0 {
		t.Errorf("a round after a4 came back forgot %v, want nothing", got)
	}
	// An update proves the pod live again.
	m.UpdatePod(a4)
	if got := round(); len(got) != 0 {
		t.Errorf("a round after a4 was updated forgot %v, want nothing", got)
	}
}
