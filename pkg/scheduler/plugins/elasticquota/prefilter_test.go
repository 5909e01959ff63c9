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
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// Two tenants on a 40-cpu cluster, each min 10 and max 40. team-a runs 30 cpu and has the incoming pod
// pending; team-b runs 5.
func twoTenants() ([]*schedv1alpha1.ElasticQuota, []*corev1.Node, []*corev1.Pod) {
	return []*schedv1alpha1.ElasticQuota{
			utiltesting.MakeElasticQuota("team-a").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj(),
			utiltesting.MakeElasticQuota("team-b").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj(),
			utiltesting.MakeElasticQuota("parent").Max(utiltesting.Resources("cpu", "40")).Obj(),
			utiltesting.MakeElasticQuota("child").Max(utiltesting.Resources("cpu", "40")).Parent("parent").Obj(),
		}, []*corev1.Node{utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "40", "memory", "100Gi", "pods", "110")).Obj()}, []*corev1.Pod{
			utiltesting.MakePod("a-low").Label(extension.LabelQuotaName, "team-a").Priority(10).Node("n1").Req(utiltesting.Resources("cpu", "20")).Obj(),
			utiltesting.MakePod("a-high").Label(extension.LabelQuotaName, "team-a").Priority(100).Node("n1").Req(utiltesting.Resources("cpu", "10")).Obj(),
			utiltesting.MakePod("b1").Label(extension.LabelQuotaName, "team-b").Priority(10).Node("n1").Req(utiltesting.Resources("cpu", "5")).Obj(),
		}
}

func TestPreFilter(t *testing.T) {
	tests := map[string]struct {
		args    func(*configv1.ElasticQuotaArgs)
		pending []*corev1.Pod
		pod     *corev1.Pod
		want    plugintest.Status
	}{
		// Requests: a 30 + 4 = 34, b 5. b gets 5, a 10 + (40 - 10 - 5) = 35 > 34, so a's runtime is 34:
		// 30 + 4 fits.
		"borrows what team-b lends": {
			pod:  utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-a").Priority(50).Req(utiltesting.Resources("cpu", "4")).Obj(),
			want: plugintest.Status{Code: fwk.Success},
		},
		// b asks for 10 more (request 15): both borrow. Each gets its min 10, the other 20 splits 1:1 (weights
		// = max 40 each), b is capped at its request 15 and its extra 5 goes to a: 10 + 10 + 5 = 25.
		"team-b takes its min back": {
			pending: []*corev1.Pod{utiltesting.MakePod("b2").Label(extension.LabelQuotaName, "team-b").Priority(10).Req(utiltesting.Resources("cpu", "10")).Obj()},
			pod:     utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-a").Priority(50).Req(utiltesting.Resources("cpu", "4")).Obj(),
			want:    plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{`quota "team-a" cpu: used 30 + request 4 > runtime 25`}},
		},
		// Reserve pods are the Reservation plugin's: the same 10 cpu as above, asked by a reserve pod of team-b,
		// change nothing, and a reserve pod itself is not admitted to a quota at all.
		"a reserve pod's request is not charged": {
			pending: []*corev1.Pod{utiltesting.MakePod("reserve-b").Label(extension.LabelQuotaName, "team-b").
				Label(extension.LabelReservePod, "true").Label(extension.LabelReservationName, "r1").Priority(10).Req(utiltesting.Resources("cpu", "10")).Obj()},
			pod:  utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-a").Priority(50).Req(utiltesting.Resources("cpu", "4")).Obj(),
			want: plugintest.Status{Code: fwk.Success},
		},
		"a reserve pod is skipped": {
			pod: utiltesting.MakePod("reserve-a").Label(extension.LabelQuotaName, "team-a").
				Label(extension.LabelReservePod, "true").Label(extension.LabelReservationName, "r1").Priority(50).Req(utiltesting.Resources("cpu", "400")).Obj(),
			want: plugintest.Status{Code: fwk.Skip},
		},
		"against max without runtime quotas": {
			args:    func(a *configv1.ElasticQuotaArgs) { a.EnableRuntimeQuota = new(bool) },
			pending: []*corev1.Pod{utiltesting.MakePod("b2").Label(extension.LabelQuotaName, "team-b").Priority(10).Req(utiltesting.Resources("cpu", "10")).Obj()},
			pod:     utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-a").Priority(50).Req(utiltesting.Resources("cpu", "4")).Obj(),
			want:    plugintest.Status{Code: fwk.Success},
		},
		"parent quota takes no pods": {
			pod:  utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "parent").Priority(50).Req(utiltesting.Resources("cpu", "1")).Obj(),
			want: plugintest.Status{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{`quota "parent" is a parent quota: only quotas without children take pods`}},
		},
		"pod without quota goes to the default quota": {
			pod:  utiltesting.MakePod("incoming").Priority(50).Req(utiltesting.Resources("cpu", "1")).Obj(),
			want: plugintest.Status{Code: fwk.Success},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			quotas, nodes, pods := twoTenants()
			pods = append(append(pods, tc.pending...), tc.pod)
			f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs](t, tc.args), quotas, nodes, pods)
			cycle := framework.NewCycleState()
			_, got := f.plugin.PreFilter(f.Ctx, cycle, tc.pod, nil)
			if diff := cmp.Diff(tc.want, plugintest.Summarize(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("PreFilter (-want,+got):\n%s", diff)
			}
			if tc.want.Code == fwk.Success {
				if s := f.plugin.Filter(f.Ctx, cycle, tc.pod, nil); !s.IsSuccess() {
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
	incoming := utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-a").Priority(50).Req(utiltesting.Resources("cpu", "8")).Obj()
	pods = append(pods, utiltesting.MakePod("b2").Label(extension.LabelQuotaName, "team-b").Priority(10).Req(utiltesting.Resources("cpu", "10")).Obj(), incoming)
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil), quotas, nodes, pods)
	cycle := framework.NewCycleState()
	if _, s := f.plugin.PreFilter(f.Ctx, cycle, incoming, nil); s.Code() != fwk.Unschedulable {
		t.Fatalf("PreFilter = %v, want Unschedulable", s)
	}
	info := func(p *corev1.Pod) fwk.PodInfo {
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			t.Fatal(err)
		}
		return pi
	}
	want := plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{`quota "team-a" cpu: used 30 + request 8 > runtime 25`}}
	clone := cycle.Clone()
	if s := f.plugin.RemovePod(f.Ctx, clone, incoming, info(pods[2]), nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	if diff := cmp.Diff(want, plugintest.Summarize(f.plugin.Filter(f.Ctx, clone, incoming, nil))); diff != "" {
		t.Errorf("Filter without team-b's pod (-want,+got):\n%s", diff)
	}
	if s := f.plugin.RemovePod(f.Ctx, clone, incoming, info(pods[0]), nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := f.plugin.Filter(f.Ctx, clone, incoming, nil); !s.IsSuccess() {
		t.Errorf("Filter without a-low = %v, want Success", s)
	}
	if s := f.plugin.AddPod(f.Ctx, clone, incoming, info(pods[0]), nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	if diff := cmp.Diff(want, plugintest.Summarize(f.plugin.Filter(f.Ctx, clone, incoming, nil))); diff != "" {
		t.Errorf("Filter with a-low back (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(want, plugintest.Summarize(f.plugin.Filter(f.Ctx, cycle, incoming, nil))); diff != "" {
		t.Errorf("Filter of the original cycle (-want,+got):\n%s", diff)
	}
}

func TestIsEligibleVictim(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	np := utiltesting.MakePod("np").Label(extension.LabelQuotaName, "team-a").Priority(0).Node("n1").Req(utiltesting.Resources("cpu", "1")).Obj()
	np.Labels[extension.LabelPreemptible] = "false"
	tests := map[string]struct {
		args      func(*configv1.ElasticQuotaArgs)
		preemptor *corev1.Pod
		victim    *corev1.Pod
		want      bool
	}{
		"same quota":              {preemptor: utiltesting.MakePod("p").Label(extension.LabelQuotaName, "team-a").Priority(50).Obj(), victim: pods[0], want: true},
		"other quota":             {preemptor: utiltesting.MakePod("p").Label(extension.LabelQuotaName, "team-a").Priority(50).Obj(), victim: pods[2]},
		"non-preemptible":         {preemptor: utiltesting.MakePod("p").Label(extension.LabelQuotaName, "team-a").Priority(50).Obj(), victim: np},
		"default quota protected": {preemptor: utiltesting.MakePod("p").Priority(50).Obj(), victim: utiltesting.MakePod("d").Priority(0).Node("n1").Obj()},
		"default quota without protection": {
			args:      func(a *configv1.ElasticQuotaArgs) { a.DisableDefaultQuotaPreemption = new(bool) },
			preemptor: utiltesting.MakePod("p").Priority(50).Obj(), victim: utiltesting.MakePod("d").Priority(0).Node("n1").Obj(), want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs](t, tc.args), quotas, nodes, pods)
			pi, err := framework.NewPodInfo(tc.victim)
			if err != nil {
				t.Fatal(err)
			}
			victim := preemption.NewPodVictim(pi, nil, nil)
			if got := f.plugin.isEligibleVictim(nil, victim, tc.preemptor); got != tc.want {
				t.Errorf("isEligibleVictim = %v, want %v", got, tc.want)
			}
		})
	}
}
