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

package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
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
			total: rl("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				quota("a").min(rl("cpu", "10")).max(rl("cpu", "40")).obj(),
				quota("b").min(rl("cpu", "10")).max(rl("cpu", "40")).obj(),
			},
			pods: []*corev1.Pod{
				pod("a1", rl("cpu", "20")).inQuota("a").on("n1").obj(),
				pod("a2", rl("cpu", "10")).inQuota("a").obj(),
				pod("b1", rl("cpu", "5")).inQuota("b").on("n1").obj(),
			},
			want: map[string]corev1.ResourceList{"a": rl("cpu", "30"), "b": rl("cpu", "5")},
		},
		// b keeps its min 10 though it requests 5: a gets 40 - 10 = 30 of its 40.
		"lending off": {
			total: rl("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				quota("a").min(rl("cpu", "10")).max(rl("cpu", "40")).obj(),
				quota("b").min(rl("cpu", "10")).max(rl("cpu", "40")).noLending().obj(),
			},
			pods: []*corev1.Pod{
				pod("a1", rl("cpu", "40")).inQuota("a").obj(),
				pod("b1", rl("cpu", "5")).inQuota("b").obj(),
			},
			want: map[string]corev1.ResourceList{"a": rl("cpu", "30"), "b": rl("cpu", "10")},
		},
		// Shared weights 1:3 of 40 spare cpu; memory weights default to max (10Gi each), so memory splits 1:1.
		"shared weights": {
			total: rl("cpu", "40", "memory", "10Gi"),
			quotas: []*schedv1alpha1.ElasticQuota{
				quota("a").max(rl("cpu", "40", "memory", "10Gi")).annotate(extension.AnnotationSharedWeight, `{"cpu":"1"}`).obj(),
				quota("b").max(rl("cpu", "40", "memory", "10Gi")).annotate(extension.AnnotationSharedWeight, `{"cpu":"3"}`).obj(),
			},
			pods: []*corev1.Pod{
				pod("a1", rl("cpu", "40", "memory", "10Gi")).inQuota("a").obj(),
				pod("b1", rl("cpu", "40", "memory", "10Gi")).inQuota("b").obj(),
			},
			want: map[string]corev1.ResourceList{"a": rl("cpu", "10", "memory", "5Gi"), "b": rl("cpu", "30", "memory", "5Gi")},
		},
		// min 20 + 40 > 30: scaled to 10 and 20, which both requests exceed.
		"min scaling": {
			total: rl("cpu", "30"),
			quotas: []*schedv1alpha1.ElasticQuota{
				quota("a").min(rl("cpu", "20")).max(rl("cpu", "100")).obj(),
				quota("b").min(rl("cpu", "40")).max(rl("cpu", "100")).obj(),
			},
			pods: []*corev1.Pod{
				pod("a1", rl("cpu", "25")).inQuota("a").obj(),
				pod("b1", rl("cpu", "50")).inQuota("b").obj(),
			},
			want: map[string]corev1.ResourceList{"a": rl("cpu", "10"), "b": rl("cpu", "20")},
		},
		"min scaling off": {
			total: rl("cpu", "30"),
			quotas: []*schedv1alpha1.ElasticQuota{
				quota("a").min(rl("cpu", "20")).max(rl("cpu", "100")).obj(),
				quota("b").min(rl("cpu", "40")).max(rl("cpu", "100")).obj(),
			},
			pods: []*corev1.Pod{
				pod("a1", rl("cpu", "25")).inQuota("a").obj(),
				pod("b1", rl("cpu", "50")).inQuota("b").obj(),
			},
			opts: func(o *Options) { o.EnableMinQuotaScale = false },
			want: map[string]corev1.ResourceList{"a": rl("cpu", "20"), "b": rl("cpu", "40")},
		},
		// Level 1 (total 100): p requests min(50,100) + min(10,100) = 60 <= its min 60, so gets 60; q requests
		// 80 > min 40, gets 40, and nothing is left. Level 2 (p's 60): p1 requests 50 > min 20, p2 10 <= min
		// 40; 60 - 20 - 10 = 30 left -> p1 20 + 30 = 50.
		"multi-level tree": {
			total: rl("cpu", "100"),
			quotas: []*schedv1alpha1.ElasticQuota{
				quota("p").min(rl("cpu", "60")).max(rl("cpu", "100")).isParent().obj(),
				quota("p1").min(rl("cpu", "20")).max(rl("cpu", "100")).parent("p").obj(),
				quota("p2").min(rl("cpu", "40")).max(rl("cpu", "100")).parent("p").obj(),
				quota("q").min(rl("cpu", "40")).max(rl("cpu", "100")).obj(),
			},
			pods: []*corev1.Pod{
				pod("p1-1", rl("cpu", "50")).inQuota("p1").obj(),
				pod("p2-1", rl("cpu", "10")).inQuota("p2").obj(),
				pod("q-1", rl("cpu", "80")).inQuota("q").obj(),
			},
			want: map[string]corev1.ResourceList{"p": rl("cpu", "60"), "p1": rl("cpu", "50"), "p2": rl("cpu", "10"), "q": rl("cpu", "40")},
		},
		// a requests 100 but max is 15, so its request counts as 15. Equal weights: 40 splits 20/20, a is capped
		// at 15 and its 5 go to b: 25 of its 30.
		"capped by max": {
			total: rl("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				quota("a").max(rl("cpu", "15")).annotate(extension.AnnotationSharedWeight, `{"cpu":"1"}`).obj(),
				quota("b").max(rl("cpu", "40")).annotate(extension.AnnotationSharedWeight, `{"cpu":"1"}`).obj(),
			},
			pods: []*corev1.Pod{
				pod("a1", rl("cpu", "100")).inQuota("a").obj(),
				pod("b1", rl("cpu", "30")).inQuota("b").obj(),
			},
			want: map[string]corev1.ResourceList{"a": rl("cpu", "15"), "b": rl("cpu", "25")},
		},
		// The default quota's 10 used cpu comes off the 40 the tree shares: a gets 30 of its 40.
		"default quota use comes off the total": {
			total:  rl("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{quota("a").max(rl("cpu", "40")).obj()},
			pods: []*corev1.Pod{
				pod("a1", rl("cpu", "40")).inQuota("a").obj(),
				pod("d1", rl("cpu", "10")).on("n1").obj(),
			},
			want: map[string]corev1.ResourceList{"a": rl("cpu", "30")},
		},
		// o's parent does not exist: it gets no runtime.
		"quota outside the tree": {
			total: rl("cpu", "40"),
			quotas: []*schedv1alpha1.ElasticQuota{
				quota("a").max(rl("cpu", "40")).obj(),
				quota("o").max(rl("cpu", "40")).parent("missing").obj(),
			},
			pods: []*corev1.Pod{pod("a1", rl("cpu", "10")).inQuota("a").obj()},
			want: map[string]corev1.ResourceList{"a": rl("cpu", "10")},
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
	m, err := newTestManager(rl("cpu", "40"), []*schedv1alpha1.ElasticQuota{
		quota("a").min(rl("cpu", "10")).max(rl("cpu", "40")).obj(),
		quota("b").min(rl("cpu", "10")).max(rl("cpu", "40")).obj(),
	}, []*corev1.Pod{pod("a1", rl("cpu", "40")).inQuota("a").obj()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func()
		want map[string]corev1.ResourceList
	}{
		{"a borrows all of b's min", func() {}, map[string]corev1.ResourceList{"a": rl("cpu", "40"), "b": rl("cpu", "0")}},
		// b asks for 20: b gets its min 10 back first, then 40 - 10 - 10 = 20 is split 40:40 -> 10 each.
		{"b asks for its min back", func() { m.UpdatePod(pod("b1", rl("cpu", "20")).inQuota("b").obj()) }, map[string]corev1.ResourceList{"a": rl("cpu", "20"), "b": rl("cpu", "20")}},
		{"a second node doubles the total", func() { m.SetNode("n2", rl("cpu", "40")) }, map[string]corev1.ResourceList{"a": rl("cpu", "40"), "b": rl("cpu", "20")}},
		{"b's pod goes", func() { m.DeletePod("b1") }, map[string]corev1.ResourceList{"a": rl("cpu", "40"), "b": rl("cpu", "0")}},
		{"b may no longer lend", func() {
			if err := m.UpdateQuota(quota("b").min(rl("cpu", "50")).max(rl("cpu", "80")).noLending().obj()); err != nil {
				t.Fatal(err)
			}
		}, map[string]corev1.ResourceList{"a": rl("cpu", "30"), "b": rl("cpu", "50")}},
		{"b is deleted", func() { m.DeleteQuota("b") }, map[string]corev1.ResourceList{"a": rl("cpu", "40")}},
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
		quota("team-a").max(rl("cpu", "10")).obj(),
		quota("ns1").namespace("ns1").max(rl("cpu", "10")).obj(),
		quota("elsewhere").namespace("other").max(rl("cpu", "10")).obj(),
		quota("listed").max(rl("cpu", "10")).annotate(extension.AnnotationQuotaNamespaces, `["ns2","elsewhere"]`).obj(),
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"label":                          {pod: pod("p", nil).inQuota("team-a").ns("ns1").obj(), want: "team-a"},
		"label of an unknown quota":      {pod: pod("p", nil).inQuota("nope").ns("ns1").obj(), want: extension.DefaultQuotaName},
		"quota named like the namespace": {pod: pod("p", nil).ns("ns1").obj(), want: "ns1"},
		"quota named like the namespace but in another one": {pod: pod("p", nil).ns("elsewhere").obj(), want: "listed"},
		"namespaces annotation":                             {pod: pod("p", nil).ns("ns2").obj(), want: "listed"},
		"default quota":                                     {pod: pod("p", nil).ns("ns3").obj(), want: extension.DefaultQuotaName},
	}
	m, err := newTestManager(rl("cpu", "10"), quotas, nil, nil)
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

// TestPodsMoveWithQuotas checks that a pod charged to the default quota moves to a quota created for its
// namespace, and back when the quota goes.
func TestPodsMoveWithQuotas(t *testing.T) {
	m, err := newTestManager(rl("cpu", "10"), nil, []*corev1.Pod{pod("p", rl("cpu", "2")).ns("ns1").on("n1").obj()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	used := func() map[string]string {
		out := map[string]string{}
		for _, s := range m.Statuses() {
			q := s.Used.ResourceList()[corev1.ResourceCPU]
			out[s.Name] = q.String()
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{extension.DefaultQuotaName: "2", extension.SystemQuotaName: "0"}, used()); diff != "" {
		t.Errorf("before (-want,+got):\n%s", diff)
	}
	if err := m.UpdateQuota(quota("ns1").namespace("ns1").max(rl("cpu", "10")).obj()); err != nil {
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
			quota: quota("a").max(rl("cpu", "10")).annotate(extension.AnnotationSharedWeight, "{cpu").obj(),
			want:  `quota "a": annotation "quota.scheduling.koordinator.sh/shared-weight": invalid character 'c' looking for beginning of object key string`,
		},
		"negative shared weight": {
			quota: quota("a").max(rl("cpu", "10")).annotate(extension.AnnotationSharedWeight, `{"cpu":"-1"}`).obj(),
			want:  `quota "a": annotation "quota.scheduling.koordinator.sh/shared-weight": cpu weight -1 is negative`,
		},
		"bad namespaces": {
			quota: quota("a").max(rl("cpu", "10")).annotate(extension.AnnotationQuotaNamespaces, `["Bad_NS"]`).obj(),
			want:  `quota "a": annotation "quota.scheduling.koordinator.sh/namespaces": [0]: "Bad_NS" is not a valid namespace name (an RFC 1123 label)`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(rl("cpu", "10"), []*schedv1alpha1.ElasticQuota{quota("a").max(rl("cpu", "4")).obj()}, nil, func(o *Options) { o.EnableRuntimeQuota = false })
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
			if diff := cmp.Diff(Vector{corev1.ResourceCPU: 4000}, a.Levels[0].Limit); diff != "" {
				t.Errorf("limit (-want,+got):\n%s", diff)
			}
		})
	}
}
