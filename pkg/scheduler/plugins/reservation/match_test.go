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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestMatching(t *testing.T) {
	cpu1 := utiltesting.Resources("cpu", "1")
	web := func(name string) *corev1.Pod {
		return utiltesting.MakePod(name).Labels(map[string]string{"app": "web"}).Req(cpu1).Obj()
	}
	withAffinity := func(p *corev1.Pod, a *extension.ReservationAffinity) *corev1.Pod {
		if err := extension.SetReservationAffinity(p, a); err != nil {
			t.Fatal(err)
		}
		return p
	}
	controlled := func(p *corev1.Pod, kind, name, uid string) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: k8stypes.UID("uid-" + uid), Controller: ptr.To(true)}}
		return p
	}
	tests := map[string]struct {
		resvs       []*schedv1alpha1.Reservation
		pod         *corev1.Pod
		want        []string
		wantCode    []string // PreFilter status code and reasons, empty for Success/Skip
		wantNodes   []string // PreFilterResult node names, nil for all nodes
		wantSkipped bool
	}{
		"label selector matches": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", cpu1, byLabel("web")), reservation("r2", "n1", cpu1, byLabel("db"))},
			pod:   web("p"),
			want:  []string{"r1"},
		},
		"object by uid and by name": {
			resvs: []*schedv1alpha1.Reservation{
				reservation("by-uid", "n1", cpu1, schedv1alpha1.ReservationOwner{Object: &corev1.ObjectReference{UID: "p"}}),
				reservation("by-name", "n1", cpu1, schedv1alpha1.ReservationOwner{Object: &corev1.ObjectReference{Namespace: "default", Name: "p"}}),
				reservation("other-ns", "n1", cpu1, schedv1alpha1.ReservationOwner{Object: &corev1.ObjectReference{Namespace: "prod", Name: "p"}}),
				reservation("other-kind", "n1", cpu1, schedv1alpha1.ReservationOwner{Object: &corev1.ObjectReference{Kind: "Deployment", Name: "p"}}),
			},
			pod:  web("p"),
			want: []string{"by-name", "by-uid"},
		},
		"controller by uid, by name and kind": {
			resvs: []*schedv1alpha1.Reservation{
				reservation("by-uid", "n1", cpu1, schedv1alpha1.ReservationOwner{Controller: &schedv1alpha1.ReservationControllerReference{OwnerReference: metav1.OwnerReference{UID: "uid-rs"}}}),
				reservation("by-name", "n1", cpu1, schedv1alpha1.ReservationOwner{Controller: &schedv1alpha1.ReservationControllerReference{OwnerReference: metav1.OwnerReference{Kind: "ReplicaSet", Name: "rs"}, Namespace: "default"}}),
				reservation("wrong-kind", "n1", cpu1, schedv1alpha1.ReservationOwner{Controller: &schedv1alpha1.ReservationControllerReference{OwnerReference: metav1.OwnerReference{Kind: "Job", Name: "rs"}}}),
				reservation("wrong-ns", "n1", cpu1, schedv1alpha1.ReservationOwner{Controller: &schedv1alpha1.ReservationControllerReference{OwnerReference: metav1.OwnerReference{Name: "rs"}, Namespace: "prod"}}),
			},
			pod:  controlled(web("p"), "ReplicaSet", "rs", "rs"),
			want: []string{"by-name", "by-uid"},
		},
		"fields of one entry are ANDed, entries ORed, empty entry matches nothing": {
			resvs: []*schedv1alpha1.Reservation{
				reservation("and-fails", "n1", cpu1, schedv1alpha1.ReservationOwner{Object: &corev1.ObjectReference{Name: "p"}, LabelSelector: byLabel("db").LabelSelector}),
				reservation("or-passes", "n1", cpu1, schedv1alpha1.ReservationOwner{Object: &corev1.ObjectReference{Name: "x"}}, byLabel("web")),
				reservation("empty", "n1", cpu1, schedv1alpha1.ReservationOwner{}),
			},
			pod:  web("p"),
			want: []string{"or-passes"},
		},
		"bad label selector matches nothing": {
			resvs: []*schedv1alpha1.Reservation{reservation("bad", "n1", cpu1, schedv1alpha1.ReservationOwner{LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Like", Values: []string{"web"}}},
			}})},
			pod: web("p"),
		},
		"untolerated taint, tolerated through the affinity": {
			resvs: []*schedv1alpha1.Reservation{
				edited(reservation("tainted", "n1", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) {
					r.Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
				}),
				edited(reservation("soft", "n1", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) {
					r.Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectPreferNoSchedule}}
				}),
			},
			pod:  web("p"),
			want: []string{"soft"},
		},
		"taint tolerated": {
			resvs: []*schedv1alpha1.Reservation{
				edited(reservation("tainted", "n1", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) {
					r.Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
				}),
			},
			pod: withAffinity(web("p"), &extension.ReservationAffinity{
				ReservationSelector: map[string]string{},
				Tolerations:         []corev1.Toleration{{Key: "team", Operator: corev1.TolerationOpEqual, Value: "a", Effect: corev1.TaintEffectNoSchedule}},
			}),
			want:      []string{"tainted"},
			wantNodes: []string{"n1"},
		},
		"affinity by name restricts nodes": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", cpu1, byLabel("web")), reservation("r2", "n2", cpu1, byLabel("web"))},
			pod:   withAffinity(web("p"), &extension.ReservationAffinity{Name: "r2"}),
			want:  []string{"r2"}, wantNodes: []string{"n2"},
		},
		"affinity by selector terms and reservationSelector": {
			resvs: []*schedv1alpha1.Reservation{
				edited(reservation("gpu-a", "n1", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Labels = map[string]string{"pool": "gpu", "zone": "a"} }),
				edited(reservation("gpu-b", "n2", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Labels = map[string]string{"pool": "gpu", "zone": "b"} }),
				edited(reservation("cpu-a", "n3", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Labels = map[string]string{"pool": "cpu", "zone": "a"} }),
			},
			pod: withAffinity(web("p"), &extension.ReservationAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &extension.ReservationAffinitySelector{ReservationSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu"}}},
				}}},
				ReservationSelector: map[string]string{"zone": "a"},
			}),
			want: []string{"gpu-a"}, wantNodes: []string{"n1"},
		},
		"affinity matching nothing": {
			resvs:    []*schedv1alpha1.Reservation{reservation("r1", "n1", cpu1, byLabel("web"))},
			pod:      withAffinity(web("p"), &extension.ReservationAffinity{Name: "nope"}),
			wantCode: []string{"UnschedulableAndUnresolvable", "no Available reservation matches the pod's scheduling.koordinator.sh/reservation-affinity (1 Available reservations checked)"},
		},
		"malformed affinity": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", cpu1, byLabel("web"))},
			pod: func() *corev1.Pod {
				p := web("p")
				p.Annotations = map[string]string{extension.AnnotationReservationAffinity: "{"}
				return p
			}(),
			wantCode: []string{"UnschedulableAndUnresolvable"},
		},
		"ignored label uses nothing": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", cpu1, byLabel("web"))},
			pod:   utiltesting.MakePod("p").Labels(map[string]string{"app": "web", extension.LabelReservationIgnored: "true"}).Req(cpu1).Obj(),
		},
		"pending, failed and succeeded reservations are not placed": {
			resvs: []*schedv1alpha1.Reservation{
				reservation("pending", "", cpu1, byLabel("web")),
				edited(reservation("failed", "n1", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Status.Phase = schedv1alpha1.ReservationFailed }),
				edited(reservation("succeeded", "n1", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Status.Phase = schedv1alpha1.ReservationSucceeded }),
			},
			pod:         web("p"),
			wantSkipped: true,
		},
		"unschedulable reservation takes no owner": {
			resvs: []*schedv1alpha1.Reservation{edited(reservation("r1", "n1", cpu1, byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Spec.Unschedulable = true })},
			pod:   web("p"),
		},
		"reserve pod matches no reservation even with owner labels": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", cpu1, byLabel("web"))},
			pod:   utiltesting.MakePod("r2").Labels(map[string]string{"app": "web", extension.LabelReservePod: "true", extension.LabelReservationName: "r2", extension.LabelReservationUID: "r2"}).Req(cpu1).Obj(),
		},
		"reserve pod of a placed reservation": {
			resvs:    []*schedv1alpha1.Reservation{reservation("r1", "n1", cpu1, byLabel("web"))},
			pod:      utiltesting.MakePod("r1").Labels(map[string]string{extension.LabelReservePod: "true", extension.LabelReservationName: "r1", extension.LabelReservationUID: "r1"}).Req(cpu1).Obj(),
			wantCode: []string{"UnschedulableAndUnresolvable", `reservation "r1" is already placed on node "n1"`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, tc.resvs, nil, nil)
			cs, res, s := f.cycle(tc.pod)
			if len(tc.wantCode) > 0 {
				got := append([]string{s.Code().String()}, s.Reasons()...)
				if diff := cmp.Diff(tc.wantCode, got[:len(tc.wantCode)]); diff != "" {
					t.Fatalf("PreFilter status (-want,+got):\n%s", diff)
				}
				return
			}
			if tc.wantSkipped != s.IsSkip() {
				t.Errorf("PreFilter skipped = %v, want %v (%v)", s.IsSkip(), tc.wantSkipped, s)
			}
			if !s.IsSuccess() && !s.IsSkip() {
				t.Fatalf("PreFilter = %v", s)
			}
			var gotNodes []string
			if res != nil {
				gotNodes = slices.Sorted(slices.Values(res.NodeNames.UnsortedList()))
			}
			if diff := cmp.Diff(tc.wantNodes, gotNodes); diff != "" {
				t.Errorf("PreFilterResult nodes (-want,+got):\n%s", diff)
			}
			st, err := getPreFilterState(cs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range st.snap.All() {
				if st.matched.Has(r.UID) {
					got = append(got, r.Name)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("matched reservations (-want,+got):\n%s", diff)
			}
		})
	}
}
