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
)

func TestFilter(t *testing.T) {
	n1 := node("n1", rl("cpu", "4", "memory", "8Gi", "pods", "110"))
	// 2 cpu and 2Gi are requested on n1 by running pods: 2 cpu and 6Gi are free.
	running := on(pod("running", nil, rl("cpu", "2", "memory", "2Gi")), "n1")
	restricted := func(r *schedv1alpha1.Reservation) {
		r.Spec.AllocatePolicy = schedv1alpha1.ReservationAllocatePolicyRestricted
	}
	tests := map[string]struct {
		resvs []*schedv1alpha1.Reservation
		// owners are bound owner pods allocating the reservations.
		owners []*corev1.Pod
		pod    *corev1.Pod
		want   status
	}{
		"no reservation on the node": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n2", rl("cpu", "1500m"), byLabel("web"))},
			pod:   pod("p", nil, rl("cpu", "2")),
			want:  status{Code: fwk.Success},
		},
		"non-owner fits next to the held part": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web"))},
			pod:   pod("p", nil, rl("cpu", "500m")),
			want:  status{Code: fwk.Success},
		},
		"non-owner does not fit: 2 free, 1500m held": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web"))},
			pod:   pod("p", nil, rl("cpu", "1")),
			want:  status{Code: fwk.Unschedulable, Reasons: []string{`node cpu: 2 free, 1500m held by reservation "r1", pod requests 1`}},
		},
		"non-owner memory not held": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web"))},
			pod:   pod("p", nil, rl("memory", "6Gi")),
			want:  status{Code: fwk.Success},
		},
		"owner uses its reservation and the node (Aligned)": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web"))},
			pod:   pod("p", map[string]string{"app": "web"}, rl("cpu", "2")),
			want:  status{Code: fwk.Success},
		},
		"owner asks more than the node has: left to NodeResourcesFit": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web"))},
			pod:   pod("p", map[string]string{"app": "web"}, rl("cpu", "2500m")),
			want:  status{Code: fwk.Success},
		},
		"Restricted: reserved resources come from the reservation only": {
			resvs: []*schedv1alpha1.Reservation{edited(reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web")), restricted)},
			pod:   pod("p", map[string]string{"app": "web"}, rl("cpu", "2")),
			want: status{Code: fwk.Unschedulable, Reasons: []string{
				`reservation "r1" (Restricted) cpu: 1500m unallocated, pod requests 2`,
				`node cpu: 2 free, 1500m held by reservation "r1", pod requests 2`,
			}},
		},
		"Restricted: other resources come from the node": {
			resvs: []*schedv1alpha1.Reservation{edited(reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web")), restricted)},
			pod:   pod("p", map[string]string{"app": "web"}, rl("cpu", "1", "memory", "4Gi")),
			want:  status{Code: fwk.Success},
		},
		"two reservations, one partly allocated: 3 free, 2 held": {
			// r2 reserves 1 cpu, of which an owner bound on n1 allocates 500m: n1 then has 2500m requested.
			resvs: []*schedv1alpha1.Reservation{
				reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web")),
				edited(reservation("r2", "n1", rl("cpu", "1"), byLabel("db")), multiUse),
			},
			owners: []*corev1.Pod{allocating(on(pod("db-0", map[string]string{"app": "db"}, rl("cpu", "500m")), "n1"), "r2")},
			pod:    pod("p", nil, rl("cpu", "500m")),
			want: status{Code: fwk.Unschedulable, Reasons: []string{
				`node cpu: 1500m free, 2 held by reservations "r1", "r2", pod requests 500m`,
			}},
		},
		"owner of one of two reservations": {
			resvs: []*schedv1alpha1.Reservation{
				reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web")),
				edited(reservation("r2", "n1", rl("cpu", "1"), byLabel("db")), multiUse),
			},
			owners: []*corev1.Pod{allocating(on(pod("db-0", map[string]string{"app": "db"}, rl("cpu", "500m")), "n1"), "r2")},
			// 1500m free, r2 holds 500m: the web pod may use r1's 1500m but no more.
			pod:  pod("p", map[string]string{"app": "web"}, rl("cpu", "1")),
			want: status{Code: fwk.Success},
		},
		"ignored pod may not use its reservation": {
			resvs: []*schedv1alpha1.Reservation{reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web"))},
			pod:   pod("p", map[string]string{"app": "web", extension.LabelReservationIgnored: "true"}, rl("cpu", "1")),
			want:  status{Code: fwk.Unschedulable, Reasons: []string{`node cpu: 2 free, 1500m held by reservation "r1", pod requests 1`}},
		},
		"allocate-once reservation used: it holds nothing more": {
			resvs:  []*schedv1alpha1.Reservation{reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web"))},
			owners: []*corev1.Pod{allocating(on(pod("web-0", map[string]string{"app": "web"}, rl("cpu", "500m")), "n1"), "r1")},
			// 1500m free, nothing held.
			pod:  pod("p", nil, rl("cpu", "1500m")),
			want: status{Code: fwk.Success},
		},
		"affinity pod must fit its reservation": {
			resvs: []*schedv1alpha1.Reservation{edited(reservation("r1", "n1", rl("cpu", "1500m"), byLabel("web")), restricted)},
			pod:   withAffinityName(pod("p", map[string]string{"app": "web"}, rl("cpu", "2")), "r1"),
			want: status{Code: fwk.Unschedulable, Reasons: []string{
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
			got := summarize(f.plugin.Filter(f.ctx, cs, tc.pod, nodeInfo(n1, pods...)))
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
