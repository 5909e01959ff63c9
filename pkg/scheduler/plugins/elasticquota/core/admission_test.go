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
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

func TestAdmission(t *testing.T) {
	// Total 40 cpu. a (min 10, max 40) uses 31 and requests 33, b (min 10) uses and requests 7: b gets 7,
	// a gets 10 + (40 - 10 - 7) = 33, its request.
	quotas := []*schedv1alpha1.ElasticQuota{
		quota("p").max(rl("cpu", "40")).isParent().obj(),
		quota("a").min(rl("cpu", "10", "memory", "1Gi")).max(rl("cpu", "40", "memory", "10Gi")).parent("p").obj(),
		quota("b").min(rl("cpu", "10")).max(rl("cpu", "40")).parent("p").obj(),
		quota("o").max(rl("cpu", "40")).parent("missing").obj(),
	}
	pods := []*corev1.Pod{
		pod("a1", rl("cpu", "30")).inQuota("a").on("n1").obj(),
		pod("a2", rl("cpu", "2")).inQuota("a").obj(),
		pod("a3", rl("cpu", "1")).inQuota("a").nonPreemptible().on("n1").obj(),
		pod("b1", rl("cpu", "7")).inQuota("b").on("n1").obj(),
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
		"fits": {quota: "a", request: rl("cpu", "1")},
		"over runtime": {
			quota: "a", request: rl("cpu", "4"),
			want: []string{`quota "a" cpu: used 31 + request 4 > runtime 33`},
		},
		"resources the quota does not name are not checked": {quota: "a", request: rl("cpu", "1", "nvidia.com/gpu", "8")},
		"against max when runtime quotas are off": {
			quota: "a", request: rl("cpu", "10"), runtimeOff: true,
			want: []string{`quota "a" cpu: used 31 + request 10 > max 40`},
		},
		"non-preemptible within min": {quota: "a", request: rl("cpu", "2"), nonPreemptible: true},
		"non-preemptible over min": {
			quota: "a", request: rl("cpu", "10"), nonPreemptible: true,
			want: []string{
				`quota "a" cpu: used 31 + request 10 > runtime 33`,
				`quota "a" cpu: non-preemptible used 1 + request 10 > min 10`,
			},
		},
		// p's runtime is the whole 40; its used is a's 31 and b's 7.
		"parent checked": {
			quota: "b", request: rl("cpu", "3"), checkParents: true,
			want: []string{`quota "b" cpu: used 7 + request 3 > runtime 7`, `quota "p" cpu: used 38 + request 3 > runtime 40`},
		},
		"parent quota takes no pods": {quota: "p", wantErr: `quota "p" is a parent quota: only quotas without children take pods`},
		"quota outside the tree":     {quota: "o", wantErr: `quota "o" is not in the quota tree: its parent "missing" does not exist or its parents form a cycle`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(rl("cpu", "40", "memory", "10Gi"), quotas, pods, func(o *Options) { o.EnableRuntimeQuota = !tc.runtimeOff })
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
			got := a.Check(VectorOf(tc.request), tc.nonPreemptible)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Check (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestAdmissionWhatIf checks that removing and adding pods through charges changes the admission of a cycle,
// and only the levels the pod belongs to.
func TestAdmissionWhatIf(t *testing.T) {
	m, err := newTestManager(rl("cpu", "40"), []*schedv1alpha1.ElasticQuota{
		quota("a").max(rl("cpu", "10")).obj(),
		quota("b").max(rl("cpu", "10")).obj(),
	}, []*corev1.Pod{pod("a1", rl("cpu", "8")).inQuota("a").on("n1").obj(), pod("a2", rl("cpu", "4")).inQuota("a").obj()}, func(o *Options) { o.EnableRuntimeQuota = false })
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Admission("a", false)
	if err != nil {
		t.Fatal(err)
	}
	req := VectorOf(rl("cpu", "4"))
	if got := a.Check(req, false); len(got) != 1 {
		t.Fatalf("Check before = %v, want one reason", got)
	}
	c := a.Clone()
	c.Add(m.ChargeOf(pod("b1", rl("cpu", "8")).inQuota("b").obj()), false)
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

func pods1(name string) *corev1.Pod { return pod(name, rl("cpu", "8")).inQuota("a").on("n1").obj() }

func TestRevokeVictims(t *testing.T) {
	// a's runtime: b takes back its min 20 of 30, so a (min 10) gets 10. a uses 18 over 4 pods.
	quotas := []*schedv1alpha1.ElasticQuota{
		quota("a").min(rl("cpu", "10")).max(rl("cpu", "30")).obj(),
		quota("b").min(rl("cpu", "20")).max(rl("cpu", "30")).obj(),
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
				pod("high", rl("cpu", "6")).inQuota("a").priority(100).on("n1").obj(),
				pod("mid", rl("cpu", "2")).inQuota("a").priority(50).on("n1").obj(),
				pod("low-old", rl("cpu", "6")).inQuota("a").priority(10).age(time.Hour).on("n1").obj(),
				pod("low-new", rl("cpu", "4")).inQuota("a").priority(10).on("n1").obj(),
				pod("pending", rl("cpu", "20")).inQuota("b").obj(),
			},
			want: []string{"low-old", "low-new"},
		},
		// Taking low-new (1) leaves 17, low-old (8) leaves 9 <= 10. Walking back: low-old is needed, but
		// low-new fits again (9 + 1 = 10) and stays.
		"pods that fit again stay": {
			pods: []*corev1.Pod{
				pod("high", rl("cpu", "9")).inQuota("a").priority(100).on("n1").obj(),
				pod("low-old", rl("cpu", "8")).inQuota("a").priority(10).age(time.Hour).on("n1").obj(),
				pod("low-new", rl("cpu", "1")).inQuota("a").priority(10).on("n1").obj(),
				pod("pending", rl("cpu", "20")).inQuota("b").obj(),
			},
			want: []string{"low-old"},
		},
		"non-preemptible pods are never victims": {
			pods: []*corev1.Pod{
				pod("np", rl("cpu", "12")).inQuota("a").priority(0).nonPreemptible().on("n1").obj(),
				pod("p", rl("cpu", "6")).inQuota("a").priority(100).on("n1").obj(),
				pod("pending", rl("cpu", "20")).inQuota("b").obj(),
			},
			want: []string{"p"},
		},
		// A pod being deleted no longer counts: used 10 <= runtime 10, nothing to revoke.
		"terminating pods no longer count": {
			pods: []*corev1.Pod{
				pod("p", rl("cpu", "10")).inQuota("a").priority(0).on("n1").obj(),
				terminating(pod("t", rl("cpu", "8")).inQuota("a").priority(100).on("n1").obj()),
				pod("pending", rl("cpu", "20")).inQuota("b").obj(),
			},
		},
		"within runtime": {
			pods: []*corev1.Pod{pod("p", rl("cpu", "6")).inQuota("a").on("n1").obj()},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newTestManager(rl("cpu", "30"), quotas, tc.pods, nil)
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
				quotas = append(quotas, quota(parent).min(rl("cpu", "100", "memory", "100Gi")).max(rl("cpu", "1000", "memory", "1000Gi")).isParent().obj())
				for l := range 4 {
					quotas = append(quotas, quota(fmt.Sprintf("%s-l%d", parent, l)).min(rl("cpu", "20", "memory", "20Gi")).max(rl("cpu", "500", "memory", "500Gi")).parent(parent).obj())
				}
			}
			var pods []*corev1.Pod
			for i := range 1000 {
				leaf := fmt.Sprintf("p%d-l%d", i%4, (i/4)%4)
				pw := pod(fmt.Sprintf("pod-%d", i), rl("cpu", "1", "memory", "1Gi")).inQuota(leaf)
				if i%2 == 0 {
					pw = pw.on("n1")
				}
				pods = append(pods, pw.obj())
			}
			m, err := newTestManager(rl("cpu", "2000", "memory", "2000Gi"), quotas, pods, nil)
			if err != nil {
				b.Fatal(err)
			}
			incoming := pod("incoming", rl("cpu", "1", "memory", "1Gi")).inQuota("p0-l0").obj()
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
	p.DeletionTimestamp = &metav1.Time{Time: created}
	return p
}
