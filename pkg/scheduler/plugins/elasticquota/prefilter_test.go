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

package elasticquota

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
)

// Two tenants on a 40-cpu cluster, each min 10 and max 40. team-a runs 30 cpu and has the incoming pod
// pending; team-b runs 5.
func twoTenants() ([]*schedv1alpha1.ElasticQuota, []*corev1.Node, []*corev1.Pod) {
	return []*schedv1alpha1.ElasticQuota{
			quota("team-a", "", rl("cpu", "10"), rl("cpu", "40")),
			quota("team-b", "", rl("cpu", "10"), rl("cpu", "40")),
			quota("parent", "", nil, rl("cpu", "40")),
			quota("child", "parent", nil, rl("cpu", "40")),
		}, []*corev1.Node{node("n1", rl("cpu", "40", "memory", "100Gi", "pods", "110"))}, []*corev1.Pod{
			pod("a-low", "team-a", 10, "n1", rl("cpu", "20")),
			pod("a-high", "team-a", 100, "n1", rl("cpu", "10")),
			pod("b1", "team-b", 10, "n1", rl("cpu", "5")),
		}
}

func TestPreFilter(t *testing.T) {
	tests := map[string]struct {
		args    func(*configv1.ElasticQuotaArgs)
		pending []*corev1.Pod
		pod     *corev1.Pod
		want    status
	}{
		// Requests: a 30 + 4 = 34, b 5. b gets 5, a 10 + (40 - 10 - 5) = 35 > 34, so a's runtime is 34:
		// 30 + 4 fits.
		"borrows what team-b lends": {
			pod:  pod("incoming", "team-a", 50, "", rl("cpu", "4")),
			want: status{Code: fwk.Success},
		},
		// b asks for 10 more (request 15): both borrow. Each gets its min 10, the other 20 splits 1:1 (weights
		// = max 40 each), b is capped at its request 15 and its extra 5 goes to a: 10 + 10 + 5 = 25.
		"team-b takes its min back": {
			pending: []*corev1.Pod{pod("b2", "team-b", 10, "", rl("cpu", "10"))},
			pod:     pod("incoming", "team-a", 50, "", rl("cpu", "4")),
			want:    status{Code: fwk.Unschedulable, Reasons: []string{`quota "team-a" cpu: used 30 + request 4 > runtime 25`}},
		},
		"against max without runtime quotas": {
			args:    func(a *configv1.ElasticQuotaArgs) { a.EnableRuntimeQuota = new(bool) },
			pending: []*corev1.Pod{pod("b2", "team-b", 10, "", rl("cpu", "10"))},
			pod:     pod("incoming", "team-a", 50, "", rl("cpu", "4")),
			want:    status{Code: fwk.Success},
		},
		"parent quota takes no pods": {
			pod:  pod("incoming", "parent", 50, "", rl("cpu", "1")),
			want: status{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{`quota "parent" is a parent quota: only quotas without children take pods`}},
		},
		"pod without quota goes to the default quota": {
			pod:  pod("incoming", "", 50, "", rl("cpu", "1")),
			want: status{Code: fwk.Success},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			quotas, nodes, pods := twoTenants()
			pods = append(append(pods, tc.pending...), tc.pod)
			f := newFixture(t, argsWith(t, tc.args), quotas, nodes, pods)
			cycle := framework.NewCycleState()
			_, got := f.plugin.PreFilter(f.ctx, cycle, tc.pod, nil)
			if diff := cmp.Diff(tc.want, summarize(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("PreFilter (-want,+got):\n%s", diff)
			}
			if tc.want.Code == fwk.Success {
				if s := f.plugin.Filter(f.ctx, cycle, tc.pod, nil); !s.IsSuccess() {
					t.Errorf("Filter after a successful PreFilter = %v", s)
				}
			}
		})
	}
}

// TestPreemptionWhatIf checks that removing pods of the quota through PreFilterExtensions makes Filter
// pass, and that removing pods of other quotas does not.
func TestPreemptionWhatIf(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	incoming := pod("incoming", "team-a", 50, "", rl("cpu", "8"))
	pods = append(pods, pod("b2", "team-b", 10, "", rl("cpu", "10")), incoming)
	f := newFixture(t, argsWith(t, nil), quotas, nodes, pods)
	cycle := framework.NewCycleState()
	if _, s := f.plugin.PreFilter(f.ctx, cycle, incoming, nil); s.Code() != fwk.Unschedulable {
		t.Fatalf("PreFilter = %v, want Unschedulable", s)
	}
	info := func(p *corev1.Pod) fwk.PodInfo {
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			t.Fatal(err)
		}
		return pi
	}
	want := status{Code: fwk.Unschedulable, Reasons: []string{`quota "team-a" cpu: used 30 + request 8 > runtime 25`}}
	clone := cycle.Clone()
	if s := f.plugin.RemovePod(f.ctx, clone, incoming, info(pods[2]), nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	if diff := cmp.Diff(want, summarize(f.plugin.Filter(f.ctx, clone, incoming, nil))); diff != "" {
		t.Errorf("Filter without team-b's pod (-want,+got):\n%s", diff)
	}
	if s := f.plugin.RemovePod(f.ctx, clone, incoming, info(pods[0]), nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := f.plugin.Filter(f.ctx, clone, incoming, nil); !s.IsSuccess() {
		t.Errorf("Filter without a-low = %v, want Success", s)
	}
	if s := f.plugin.AddPod(f.ctx, clone, incoming, info(pods[0]), nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	if diff := cmp.Diff(want, summarize(f.plugin.Filter(f.ctx, clone, incoming, nil))); diff != "" {
		t.Errorf("Filter with a-low back (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(want, summarize(f.plugin.Filter(f.ctx, cycle, incoming, nil))); diff != "" {
		t.Errorf("Filter of the original cycle (-want,+got):\n%s", diff)
	}
}

func TestIsEligibleVictim(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	np := pod("np", "team-a", 0, "n1", rl("cpu", "1"))
	np.Labels[extension.LabelPreemptible] = "false"
	tests := map[string]struct {
		args      func(*configv1.ElasticQuotaArgs)
		preemptor *corev1.Pod
		victim    *corev1.Pod
		want      bool
	}{
		"same quota":              {preemptor: pod("p", "team-a", 50, "", nil), victim: pods[0], want: true},
		"other quota":             {preemptor: pod("p", "team-a", 50, "", nil), victim: pods[2]},
		"non-preemptible":         {preemptor: pod("p", "team-a", 50, "", nil), victim: np},
		"default quota protected": {preemptor: pod("p", "", 50, "", nil), victim: pod("d", "", 0, "n1", nil)},
		"default quota without protection": {
			args:      func(a *configv1.ElasticQuotaArgs) { a.DisableDefaultQuotaPreemption = new(bool) },
			preemptor: pod("p", "", 50, "", nil), victim: pod("d", "", 0, "n1", nil), want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, argsWith(t, tc.args), quotas, nodes, pods)
			pi, err := framework.NewPodInfo(tc.victim)
			if err != nil {
				t.Fatal(err)
			}
			victim := preemptionVictim(pi)
			if got := f.plugin.isEligibleVictim(nil, victim, tc.preemptor); got != tc.want {
				t.Errorf("isEligibleVictim = %v, want %v", got, tc.want)
			}
		})
	}
}
