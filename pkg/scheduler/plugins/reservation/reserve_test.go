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

package reservation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/defaultprebind"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// resvView is what a test checks of a reservation in the cache.
type resvView struct {
	Allocated string
	Held      string
	Owners    int
}

func (f *fixture) view(name string) resvView {
	for _, r := range f.plugin.cache.Snapshot().All() {
		if r.Name == name {
			return resvView{Allocated: r.Allocated.String(), Held: r.Held.String(), Owners: r.OwnerCount}
		}
	}
	return resvView{Held: "gone"}
}

// reserve runs PreFilter and Reserve for pod on node and returns the cycle state.
func (f *fixture) reserve(t *testing.T, pod *corev1.Pod, node string) fwk.CycleState {
	t.Helper()
	cs, _, s := f.cycle(pod)
	if !s.IsSuccess() && !s.IsSkip() {
		t.Fatalf("PreFilter = %v", s)
	}
	if s := f.plugin.Reserve(f.Ctx, cs, pod, node); !s.IsSuccess() {
		t.Fatalf("Reserve = %v", s)
	}
	return cs
}

func TestReserveUnreserve(t *testing.T) {
	n1 := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8", "memory", "16Gi")).Obj()
	web := func(name, cpu string) *corev1.Pod {
		return utiltesting.MakePod(name).Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", cpu)).Obj()
	}
	tests := map[string]struct {
		resv *schedv1alpha1.Reservation
		// pods are reserved on n1 in turn.
		pods          []*corev1.Pod
		want          resvView
		wantAfterLast resvView // after Unreserve of the last pod
	}{
		"allocate once: the first owner takes it": {
			resv:          reservation("r1", "n1", utiltesting.Resources("cpu", "2"), byLabel("web")),
			pods:          []*corev1.Pod{web("a", "1")},
			want:          resvView{Allocated: "cpu=1", Held: "", Owners: 1},
			wantAfterLast: resvView{Allocated: "", Held: "cpu=2"},
		},
		"allocate once: a second owner gets nothing": {
			resv:          reservation("r1", "n1", utiltesting.Resources("cpu", "2"), byLabel("web")),
			pods:          []*corev1.Pod{web("a", "1"), web("b", "1")},
			want:          resvView{Allocated: "cpu=1", Held: "", Owners: 1},
			wantAfterLast: resvView{Allocated: "cpu=1", Held: "", Owners: 1},
		},
		"multi-use: owners add up, only reserved quantity.Amounts count": {
			resv:          edited(reservation("r1", "n1", utiltesting.Resources("cpu", "3"), byLabel("web")), multiUse),
			pods:          []*corev1.Pod{web("a", "1"), utiltesting.MakePod("b").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "1500m", "memory", "1Gi")).Obj()},
			want:          resvView{Allocated: "cpu=2500m", Held: "cpu=500m", Owners: 2},
			wantAfterLast: resvView{Allocated: "cpu=1", Held: "cpu=2", Owners: 1},
		},
		"non-owner allocates nothing": {
			resv:          reservation("r1", "n1", utiltesting.Resources("cpu", "2"), byLabel("web")),
			pods:          []*corev1.Pod{utiltesting.MakePod("x").Req(utiltesting.Resources("cpu", "1")).Obj()},
			want:          resvView{Allocated: "", Held: "cpu=2"},
			wantAfterLast: resvView{Allocated: "", Held: "cpu=2"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, []*schedv1alpha1.Reservation{tc.resv}, []*corev1.Node{n1}, nil)
			var last fwk.CycleState
			for _, p := range tc.pods {
				last = f.reserve(t, p, "n1")
			}
			if diff := cmp.Diff(tc.want, f.view("r1")); diff != "" {
				t.Errorf("after Reserve (-want,+got):\n%s", diff)
			}
			f.plugin.Unreserve(f.Ctx, last, tc.pods[len(tc.pods)-1], "n1")
			if diff := cmp.Diff(tc.wantAfterLast, f.view("r1")); diff != "" {
				t.Errorf("after Unreserve (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestChooseAndScore(t *testing.T) {
	nodes := []*corev1.Node{utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8")).Obj(), utiltesting.MakeNode("n2").Allocatable(utiltesting.Resources("cpu", "8")).Obj(), utiltesting.MakeNode("n3").Allocatable(utiltesting.Resources("cpu", "8")).Obj()}
	ordered := func(r *schedv1alpha1.Reservation, order string) *schedv1alpha1.Reservation {
		r.Labels = map[string]string{extension.LabelReservationOrder: order}
		return r
	}
	tests := map[string]struct {
		resvs      []*schedv1alpha1.Reservation
		wantChosen map[string]string // node → reservation Reserve picks
		wantScores map[string]int64
	}{
		"smallest order first, zero order last": {
			resvs: []*schedv1alpha1.Reservation{
				ordered(reservation("a", "n1", utiltesting.Resources("cpu", "1"), byLabel("web")), "2"),
				ordered(reservation("b", "n1", utiltesting.Resources("cpu", "4"), byLabel("web")), "1"),
				reservation("c", "n1", utiltesting.Resources("cpu", "1"), byLabel("web")),
				ordered(reservation("d", "n2", utiltesting.Resources("cpu", "1"), byLabel("web")), "3"),
			},
			wantChosen: map[string]string{"n1": "b", "n2": "d", "n3": ""},
			// n1 holds the smallest order; d would be fully allocated: 100%.
			wantScores: map[string]int64{"n1": 100, "n2": 100, "n3": 0},
		},
		"most allocated without order": {
			resvs: []*schedv1alpha1.Reservation{
				reservation("big", "n1", utiltesting.Resources("cpu", "4"), byLabel("web")),
				reservation("small", "n1", utiltesting.Resources("cpu", "2"), byLabel("web")),
				reservation("other", "n2", utiltesting.Resources("cpu", "4"), byLabel("web")),
				reservation("foreign", "n3", utiltesting.Resources("cpu", "1"), byLabel("db")),
			},
			wantChosen: map[string]string{"n1": "small", "n2": "other", "n3": ""},
			// 1 of 2 cpu: 50; 1 of 4 cpu: 25; no matching reservation: 0.
			wantScores: map[string]int64{"n1": 50, "n2": 25, "n3": 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, tc.resvs, nodes, nil)
			p := utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "1")).Obj()
			gotScores := map[string]int64{}
			cs, _, s := f.cycle(p)
			if !s.IsSuccess() {
				t.Fatalf("PreFilter = %v", s)
			}
			if s := f.plugin.PreScore(f.Ctx, cs, p, nil); !s.IsSuccess() {
				t.Fatalf("PreScore = %v", s)
			}
			for _, n := range nodes {
				score, s := f.plugin.Score(f.Ctx, cs, p, plugintest.NodeInfo(n))
				if !s.IsSuccess() {
					t.Fatalf("Score = %v", s)
				}
				gotScores[n.Name] = score
			}
			if diff := cmp.Diff(tc.wantScores, gotScores); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
			gotChosen := map[string]string{}
			for _, n := range nodes {
				cs := f.reserve(t, p, n.Name)
				gotChosen[n.Name] = ""
				if rs := getReserveState(cs); rs != nil {
					gotChosen[n.Name] = rs.name
				}
				f.plugin.Unreserve(f.Ctx, cs, p, n.Name)
			}
			if diff := cmp.Diff(tc.wantChosen, gotChosen); diff != "" {
				t.Errorf("chosen reservations (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPreScoreSkipsNonOwners(t *testing.T) {
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "1"), byLabel("web"))}, nil, nil)
	p := utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "1")).Obj()
	cs, _, _ := f.cycle(p)
	if s := f.plugin.PreScore(f.Ctx, cs, p, nil); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip", s)
	}
}

func TestPreBind(t *testing.T) {
	n1 := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8")).Obj()
	owner := utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "1")).Obj()
	other := utiltesting.MakePod("q").Req(utiltesting.Resources("cpu", "1")).Obj()
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "2"), byLabel("web"))}, []*corev1.Node{n1}, []*corev1.Pod{owner, other})

	cs := f.reserve(t, other, "n1")
	if _, s := f.plugin.PreBindPreFlight(f.Ctx, cs, other, "n1"); !s.IsSkip() {
		t.Errorf("PreBindPreFlight(non-owner) = %v, want Skip", s)
	}

	cs = f.reserve(t, owner, "n1")
	if _, s := f.plugin.PreBindPreFlight(f.Ctx, cs, owner, "n1"); !s.IsSuccess() {
		t.Fatalf("PreBindPreFlight(owner) = %v", s)
	}
	if s := f.plugin.PreBind(f.Ctx, cs, owner, "n1"); !s.IsSuccess() {
		t.Fatalf("PreBind = %v", s)
	}
	got, err := f.Kube.CoreV1().Pods("default").Get(f.Ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"name":"r1","uid":"r1"}`, got.Annotations[extension.AnnotationReservationAllocated]); diff != "" {
		t.Errorf("annotation (-want,+got):\n%s", diff)
	}
}

// TestPreBindThroughDefaultPreBind: with DefaultPreBind after it in the profile, the annotation is recorded
// and written in DefaultPreBind's one patch; with DefaultPreBind before it (changes applied already), the
// plugin writes it itself.
func TestPreBindThroughDefaultPreBind(t *testing.T) {
	n1 := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8")).Obj()
	owner := utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "1")).Obj()
	for name, defaultFirst := range map[string]bool{"DefaultPreBind last": false, "DefaultPreBind first": true} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "2"), byLabel("web"))}, []*corev1.Node{n1}, []*corev1.Pod{owner})
			dpb, err := defaultprebind.New(f.Ctx, nil, f.Handle(t))
			if err != nil {
				t.Fatal(err)
			}
			pb := dpb.(fwk.PreBindPlugin)
			cs := f.reserve(t, owner, "n1")
			for _, pl := range []fwk.PreBindPlugin{f.plugin, pb} {
				if _, s := pl.PreBindPreFlight(f.Ctx, cs, owner, "n1"); !s.IsSuccess() {
					t.Fatalf("%s PreBindPreFlight = %v", pl.Name(), s)
				}
			}
			order := []fwk.PreBindPlugin{f.plugin, pb}
			if defaultFirst {
				order = []fwk.PreBindPlugin{pb, f.plugin}
			}
			f.Kube.ClearActions()
			for _, pl := range order {
				if s := pl.PreBind(f.Ctx, cs, owner, "n1"); !s.IsSuccess() {
					t.Fatalf("%s PreBind = %v", pl.Name(), s)
				}
			}
			patches := 0
			for _, a := range f.Kube.Actions() {
				if a.GetVerb() == "patch" && a.GetResource().Resource == "pods" {
					patches++
				}
			}
			got, err := f.Kube.CoreV1().Pods("default").Get(f.Ctx, "p", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if patches != 1 || got.Annotations[extension.AnnotationReservationAllocated] != `{"name":"r1","uid":"r1"}` {
				t.Errorf("%d pod patches, annotation %q; want one patch writing the allocation", patches, got.Annotations[extension.AnnotationReservationAllocated])
			}
		})
	}
}
