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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestAdmission(t *testing.T) {
	// Total 40 cpu. a (min 10, max 40) uses 31 and requests 33, b (min 10) uses and requests 7: b gets 7,
	// a gets 10 + (40 - 10 - 7) = 33, its request.
	quotas := []*schedv1alpha1.ElasticQuota{
		utiltesting.MakeElasticQuota("p").Max(utiltesting.Resources("cpu", "40")).IsParent().Obj(),
		utiltesting.MakeElasticQuota("a").Min(utiltesting.Resources("cpu", "10", "memory", "1Gi")).Max(utiltesting.Resources("cpu", "40", "memory", "10Gi")).Parent("p").Obj(),
		utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Parent("p").Obj(),
		utiltesting.MakeElasticQuota("o").Max(utiltesting.Resources("cpu", "40")).Parent("missing").Obj(),
	}
	pods := []*corev1.Pod{
		utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "30")).Label(extension.LabelQuotaName, "a").Node("n1").Obj(),
		utiltesting.MakePod("a2").Req(utiltesting.Resources("cpu", "2")).Label(extension.LabelQuotaName, "a").Obj(),
		utiltesting.MakePod("a3").Req(utiltesting.Resources("cpu", "1")).Label(extension.LabelQuotaName, "a").Label(extension.LabelPreemptible, "false").Node("n1").Obj(),
		utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "7")).Label(extension.LabelQuotaName, "b").Node("n1").Obj(),
	}
	tests := map[string]struct {
		quota          string
		checkParents   bool
		runtimeOff     bool
		request        corev1.ResourceList
		nonPreemptible bool
		want           []string
		wantErr        string
	}{
		"fits": {quota: "a", request: utiltesting.Resources("cpu", "1")},
		"over runtime": {
			quota: "a", request: utiltesting.Resources("cpu", "4"),
			want: []string{`quota "a" cpu: used 31 + request 4 > runtime 33`},
		},
		"resources the quota does not name are not checked": {quota: "a", request: utiltesting.Resources("cpu", "1", "nvidia.com/gpu", "8")},
		"against max when runtime quotas are off": {
			quota: "a", request: utiltesting.Resources("cpu", "10"), runtimeOff: true,
			want: []string{`quota "a" cpu: used 31 + request 10 > max 40`},
		},
		"non-preemptible within min": {quota: "a", request: utiltesting.Resources("cpu", "2"), nonPreemptible: true},
		"non-preemptible over min": {
			quota: "a", request: utiltesting.Resources("cpu", "10"), nonPreemptible: true,
			want: []string{
				`quota "a" cpu: used 31 + request 10 > runtime 33`,
				`quota "a" cpu: non-preemptible used 1 + request 10 > min 10`,
			},
		},
		// p's runtime is the whole 40; its used is a's 31 and b's 7.
		"parent checked": {
			quota: "b", request: utiltesting.Resources("cpu", "3"), checkParents: true,
			want: []string{`quota "b" cpu: used 7 + request 3 > runtime 7`, `quota "p" cpu: used 38 + request 3 > runtime 40`},
		},
		"parent quota takes no pods": {quota: "p", wantErr: `quota "p" is a parent quota: only quotas without children take pods`},
		"quota outside the tree":     {quota: "o", wantErr: `quota "o" is not in the quota tree: its parent "missing" does not exist or its parents form a cycle`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(utiltesting.Resources("cpu", "40", "memory", "10Gi"), quotas, pods, func(o *Options) { o.EnableRuntimeQuota = !tc.runtimeOff })
			if err != nil {
				t.Fatal(err)
			}
			a, err := m.Admission(tc.quota, tc.checkParents)
			if tc.wantErr != "" || err != nil {
				got := ""
				if err != nil {
					got = err.Error()
				}
				if diff := cmp.Diff(tc.wantErr, got); diff != "" {
					t.Errorf("Admission error (-want,+got):\n%s", diff)
				}
				return
			}
			got := a.Check(quantity.FromList(tc.request), tc.nonPreemptible)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Check (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestAdmissionWhatIf checks that removing and adding pods through charges changes the admission of a cycle,
// and only the levels the pod belongs to.
func TestAdmissionWhatIf(t *testing.T) {
	m, err := newTestManager(utiltesting.Resources("cpu", "40"), []*schedv1alpha1.ElasticQuota{
		utiltesting.MakeElasticQuota("a").Max(utiltesting.Resources("cpu", "10")).Obj(),
		utiltesting.MakeElasticQuota("b").Max(utiltesting.Resources("cpu", "10")).Obj(),
	}, []*corev1.Pod{utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "8")).Label(extension.LabelQuotaName, "a").Node("n1").Obj(), utiltesting.MakePod("a2").Req(utiltesting.Resources("cpu", "4")).Label(extension.LabelQuotaName, "a").Obj()}, func(o *Options) { o.EnableRuntimeQuota = false })
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Admission("a", false)
	if err != nil {
		t.Fatal(err)
	}
	req := quantity.FromList(utiltesting.Resources("cpu", "4"))
	if got := a.Check(req, false); len(got) != 1 {
		t.Fatalf("Check before = %v, want one reason", got)
	}
	c := a.Clone()
	c.Add(m.ChargeOf(utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "8")).Label(extension.LabelQuotaName, "b").Obj()), false)
	if got := c.Check(req, false); len(got) != 1 {
		t.Errorf("Check after removing another quota's pod = %v, want one reason", got)
	}
	c.Add(m.ChargeOf(pods1("a1")), false)
	if got := c.Check(req, false); len(got) != 0 {
		t.Errorf("Check after removing a1 = %v, want none", got)
	}
	if got := a.Check(req, false); len(got) != 1 {
		t.Errorf("Check of the original after changing the clone = %v, want one reason", got)
	}
}

func pods1(name string) *corev1.Pod {
	return utiltesting.MakePod(name).Req(utiltesting.Resources("cpu", "8")).Label(extension.LabelQuotaName, "a").Node("n1").Obj()
}

func TestRevokeVictims(t *testing.T) {
	// a's runtime: b takes back its min 20 of 30, so a (min 10) gets 10. a uses 18 over 4 pods.
	quotas := []*schedv1alpha1.ElasticQuota{
		utiltesting.MakeElasticQuota("a").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "30")).Obj(),
		utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "20")).Max(utiltesting.Resources("cpu", "30")).Obj(),
	}
	tests := map[string]struct {
		pods         []*corev1.Pod
		want         []string
		wantOverUsed bool
	}{
		// Used 18 > 10. Low priority first, newest first: low-new (4) leaves 14, low-old (6) leaves 8 <= 10.
		// Walking back, neither fits again (8 + 6 > 10, 8 + 4 > 10): both go.
		"lowest priority and newest first": {
			pods: []*corev1.Pod{
				utiltesting.MakePod("high").Req(utiltesting.Resources("cpu", "6")).Label(extension.LabelQuotaName, "a").Priority(100).Node("n1").Obj(),
				utiltesting.MakePod("mid").Req(utiltesting.Resources("cpu", "2")).Label(extension.LabelQuotaName, "a").Priority(50).Node("n1").Obj(),
				utiltesting.MakePod("low-old").Req(utiltesting.Resources("cpu", "6")).Label(extension.LabelQuotaName, "a").Priority(10).Created(utiltesting.Now.Add(-time.Hour)).Node("n1").Obj(),
				utiltesting.MakePod("low-new").Req(utiltesting.Resources("cpu", "4")).Label(extension.LabelQuotaName, "a").Priority(10).Node("n1").Obj(),
				utiltesting.MakePod("pending").Req(utiltesting.Resources("cpu", "20")).Label(extension.LabelQuotaName, "b").Obj(),
			},
			want: []string{"low-old", "low-new"},
		},
		// Taking low-new (1) leaves 17, low-old (8) leaves 9 <= 10. Walking back: low-old is needed, but
		// low-new fits again (9 + 1 = 10) and stays.
		"pods that fit again stay": {
			pods: []*corev1.Pod{
				utiltesting.MakePod("high").Req(utiltesting.Resources("cpu", "9")).Label(extension.LabelQuotaName, "a").Priority(100).Node("n1").Obj(),
				utiltesting.MakePod("low-old").Req(utiltesting.Resources("cpu", "8")).Label(extension.LabelQuotaName, "a").Priority(10).Created(utiltesting.Now.Add(-time.Hour)).Node("n1").Obj(),
				utiltesting.MakePod("low-new").Req(utiltesting.Resources("cpu", "1")).Label(extension.LabelQuotaName, "a").Priority(10).Node("n1").Obj(),
				utiltesting.MakePod("pending").Req(utiltesting.Resources("cpu", "20")).Label(extension.LabelQuotaName, "b").Obj(),
			},
			want: []string{"low-old"},
		},
		"non-preemptible pods are never victims": {
			pods: []*corev1.Pod{
				utiltesting.MakePod("np").Req(utiltesting.Resources("cpu", "12")).Label(extension.LabelQuotaName, "a").Priority(0).Label(extension.LabelPreemptible, "false").Node("n1").Obj(),
				utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "6")).Label(extension.LabelQuotaName, "a").Priority(100).Node("n1").Obj(),
				utiltesting.MakePod("pending").Req(utiltesting.Resources("cpu", "20")).Label(extension.LabelQuotaName, "b").Obj(),
			},
			want: []string{"p"},
		},
		// A pod being deleted no longer counts: used 10 <= runtime 10, nothing to revoke.
		"terminating pods no longer count": {
			pods: []*corev1.Pod{
				utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "10")).Label(extension.LabelQuotaName, "a").Priority(0).Node("n1").Obj(),
				terminating(utiltesting.MakePod("t").Req(utiltesting.Resources("cpu", "8")).Label(extension.LabelQuotaName, "a").Priority(100).Node("n1").Obj()),
				utiltesting.MakePod("pending").Req(utiltesting.Resources("cpu", "20")).Label(extension.LabelQuotaName, "b").Obj(),
			},
		},
		"within runtime": {
			pods: []*corev1.Pod{utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "6")).Label(extension.LabelQuotaName, "a").Node("n1").Obj()},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(utiltesting.Resources("cpu", "30"), quotas, tc.pods, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range m.RevokeVictims("a") {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("RevokeVictims (-want,+got):\n%s", diff)
			}
			wantOver := len(tc.want) > 0 || tc.wantOverUsed
			if gotOver := len(m.OverUsed()) > 0; gotOver != wantOver {
				t.Errorf("OverUsed = %v, want over-use %v", m.OverUsed(), wantOver)
			}
		})
	}
}

// BenchmarkRefresh measures recomputing the runtime quotas of a tree of 20 quotas (4 parents of 4 leaves
// each) with 1000 pods after one pod's request changed, and the admission of a pod after that.
func BenchmarkRefresh(b *testing.B) {
	for _, checkParents := range []bool{false, true} {
		b.Run(fmt.Sprintf("quotas=20/pods=1000/checkParents=%v", checkParents), func(b *testing.B) {
			var quotas []*schedv1alpha1.ElasticQuota
			for p := range 4 {
				parent := fmt.Sprintf("p%d", p)
				quotas = append(quotas, utiltesting.MakeElasticQuota(parent).Min(utiltesting.Resources("cpu", "100", "memory", "100Gi")).Max(utiltesting.Resources("cpu", "1000", "memory", "1000Gi")).IsParent().Obj())
				for l := range 4 {
					quotas = append(quotas, utiltesting.MakeElasticQuota(fmt.Sprintf("%s-l%d", parent, l)).Min(utiltesting.Resources("cpu", "20", "memory", "20Gi")).Max(utiltesting.Resources("cpu", "500", "memory", "500Gi")).Parent(parent).Obj())
				}
			}
			var pods []*corev1.Pod
			for i := range 1000 {
				leaf := fmt.Sprintf("p%d-l%d", i%4, (i/4)%4)
				pw := utiltesting.MakePod(fmt.Sprintf("pod-%d", i)).Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Label(extension.LabelQuotaName, leaf)
				if i%2 == 0 {
					pw = pw.Node("n1")
				}
				pods = append(pods, pw.Obj())
			}
			m, err := newTestManager(utiltesting.Resources("cpu", "2000", "memory", "2000Gi"), quotas, pods, nil)
			if err != nil {
				b.Fatal(err)
			}
			incoming := utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Label(extension.LabelQuotaName, "p0-l0").Obj()
			req := PodRequest(incoming)
			b.ReportAllocs()
			for b.Loop() {
				// The pending pod being scheduled changes its quota's request, so its admission recomputes the
				// runtime quotas.
				m.UpdatePod(incoming)
				a, err := m.Admission("p0-l0", checkParents)
				if err != nil {
					b.Fatal(err)
				}
				if r := a.Check(req, false); len(r) != 0 {
					b.Fatalf("Check = %v", r)
				}
				m.DeletePod(incoming.UID)
			}
		})
	}
}

// terminating marks p as being deleted.
func terminating(p *corev1.Pod) *corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: utiltesting.Now}
	return p
}
