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
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestFilter(t *testing.T) {
	n1 := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "4", "memory", "8Gi", "pods", "110")).Obj()
	// 2 cpu and 2Gi are requested on n1 by running pods: 2 cpu and 6Gi are free.
	running := utiltesting.MakePod("running").Req(utiltesting.Resources("cpu", "2", "memory", "2Gi")).Node("n1").Obj()
	restricted := func(r *schedv1alpha1.Reservation) {
		r.Spec.AllocatePolicy = schedv1alpha1.ReservationAllocatePolicyRestricted
	}
	tests := map[string]struct {
		resvs []*schedv1alpha1.Reservation
		// owners are bound owner pods allocating the reservations.
		owners []*corev1.Pod
		pod    *corev1.Pod
		want   plugintest.Status
	}{
		"no reservation on the node": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n2", utiltesting.Resources("cpu", "1500m"), byLabel("web"))},
			pod:   utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "2")).Obj(),
			want:  plugintest.Status{Code: fwk.Success},
		},
		"non-owner fits next to the held part": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web"))},
			pod:   utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "500m")).Obj(),
			want:  plugintest.Status{Code: fwk.Success},
		},
		"non-owner does not fit: 2 free, 1500m held": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web"))},
			pod:   utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "1")).Obj(),
			want:  plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{`node cpu: 2 free, 1500m held by reservation "r1", pod requests 1`}},
		},
		"non-owner memory not held": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web"))},
			pod:   utiltesting.MakePod("p").Req(utiltesting.Resources("memory", "6Gi")).Obj(),
			want:  plugintest.Status{Code: fwk.Success},
		},
		"owner uses its reservation and the node (Aligned)": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web"))},
			pod:   utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "2")).Obj(),
			want:  plugintest.Status{Code: fwk.Success},
		},
		"owner asks more than the node has: left to NodeResourcesFit": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web"))},
			pod:   utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "2500m")).Obj(),
			want:  plugintest.Status{Code: fwk.Success},
		},
		"Restricted: reserved quantity.Amounts come from the reservation only": {
			resvs: []*schedv1alpha1.Reservation{edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web")), restricted)},
			pod:   utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "2")).Obj(),
			want: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{
				`reservation "r1" (Restricted) cpu: 1500m unallocated, pod requests 2`,
				`node cpu: 2 free, 1500m held by reservation "r1", pod requests 2`,
			}},
		},
		"Restricted: other quantity.Amounts come from the node": {
			resvs: []*schedv1alpha1.Reservation{edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web")), restricted)},
			pod:   utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "1", "memory", "4Gi")).Obj(),
			want:  plugintest.Status{Code: fwk.Success},
		},
		"two reservations, one partly allocated: 3 free, 2 held": {
			// r2 reserves 1 cpu, of which an owner bound on n1 allocates 500m: n1 then has 2500m requested.
			resvs: []*schedv1alpha1.Reservation{
				reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web")),
				edited(reservation("r2", "n1", utiltesting.Resources("cpu", "1"), byLabel("db")), multiUse),
			},
			owners: []*corev1.Pod{allocating(utiltesting.MakePod("db-0").Labels(map[string]string{"app": "db"}).Req(utiltesting.Resources("cpu", "500m")).Node("n1").Obj(), "r2")},
			pod:    utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "500m")).Obj(),
			want: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{
				`node cpu: 1500m free, 2 held by reservations "r1", "r2", pod requests 500m`,
			}},
		},
		"owner of one of two reservations": {
			resvs: []*schedv1alpha1.Reservation{
				reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web")),
				edited(reservation("r2", "n1", utiltesting.Resources("cpu", "1"), byLabel("db")), multiUse),
			},
			owners: []*corev1.Pod{allocating(utiltesting.MakePod("db-0").Labels(map[string]string{"app": "db"}).Req(utiltesting.Resources("cpu", "500m")).Node("n1").Obj(), "r2")},
			// 1500m free, r2 holds 500m: the web pod may use r1's 1500m but no more.
			pod:  utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "1")).Obj(),
			want: plugintest.Status{Code: fwk.Success},
		},
		"ignored pod may not use its reservation": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web"))},
			pod:   utiltesting.MakePod("p").Labels(map[string]string{"app": "web", extension.LabelReservationIgnored: "true"}).Req(utiltesting.Resources("cpu", "1")).Obj(),
			want:  plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{`node cpu: 2 free, 1500m held by reservation "r1", pod requests 1`}},
		},
		"allocate-once reservation used: it holds nothing more": {
			resvs:  []*schedv1alpha1.Reservation{reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web"))},
			owners: []*corev1.Pod{allocating(utiltesting.MakePod("web-0").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "500m")).Node("n1").Obj(), "r1")},
			// 1500m free, nothing held.
			pod:  utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "1500m")).Obj(),
			want: plugintest.Status{Code: fwk.Success},
		},
		"affinity pod must fit its reservation": {
			resvs: []*schedv1alpha1.Reservation{edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1500m"), byLabel("web")), restricted)},
			pod:   withAffinityName(utiltesting.MakePod("p").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "2")).Obj(), "r1"),
			want: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{
				`reservation "r1" (Restricted) cpu: 1500m unallocated, pod requests 2`,
			}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pods := append([]*corev1.Pod{running}, tc.owners...)
			f := newFixture(t, nil, tc.resvs, []*corev1.Node{n1}, pods)
			cs, _, s := f.cycle(tc.pod)
			if !s.IsSuccess() && !s.IsSkip() {
				t.Fatalf("PreFilter = %v", s)
			}
			got := plugintest.Summarize(f.plugin.Filter(f.Ctx, cs, tc.pod, plugintest.NodeInfo(n1, pods...)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want,+got):\n%s", diff)
			}
		})
	}
}

// allocating returns p annotated as allocated from the reservation named (and with UID) name.
func allocating(p *corev1.Pod, name string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[extension.AnnotationReservationAllocated] = `{"name":"` + name + `","uid":"` + name + `"}`
	return p
}

// withAffinityName gives p a reservation affinity naming the reservation.
func withAffinityName(p *corev1.Pod, name string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[extension.AnnotationReservationAffinity] = `{"name":"` + name + `"}`
	return p
}
