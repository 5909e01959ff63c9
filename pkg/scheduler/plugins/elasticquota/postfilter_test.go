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
	corev1 "k8s.io/api/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// TestPostFilter runs kube-scheduler's framework with NodeResourcesFit and the plugin on a full 40-cpu node
// (35 cpu used). team-a (a-low 20 cpu, a-high 10 cpu) has runtime 25 for a team-a pod of 8 cpu, and uses 30
// (see TestPreFilter); a team-b pod of 8 cpu fits team-b's quota (requests: a 30, b 5 + 10 + 8 = 23; both
// borrow: 10 each and 20 split 1:1, so b gets 20 >= 5 + 8) but not the node.
func TestPostFilter(t *testing.T) {
	// The scheduling queue and preemption record kube-scheduler's metrics.
	schedmetrics.Register()
	tests := map[string]struct {
		incoming      *corev1.Pod
		b1Priority    int32
		wantPreFilter plugintest.Status
		wantCode      fwk.Code
		wantNode      string
		wantDeleted   []string
	}{
		// Only a-low (team-a, priority 10) may go: b1 has a lower priority but belongs to team-b, a-high has a
		// higher one. Without a-low, team-a uses 10 + 8 <= 25 and the node has 25 free.
		"preempts a lower-priority pod of the same quota": {
			incoming:      utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-a").Priority(50).Req(utiltesting.Resources("cpu", "8")).Obj(),
			b1Priority:    10,
			wantPreFilter: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{`quota "team-a" cpu: used 30 + request 8 > runtime 25`}},
			wantCode:      fwk.Success,
			wantNode:      "n1",
			wantDeleted:   []string{"a-low"},
		},
		// The team-b pod needs 3 more cpu on the node. a-low (team-a) would free them, but is another quota's.
		"never preempts another quota's pods": {
			incoming:      utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-b").Priority(50).Req(utiltesting.Resources("cpu", "8")).Obj(),
			b1Priority:    60,
			wantPreFilter: plugintest.Status{Code: fwk.Success},
			wantCode:      fwk.Unschedulable,
		},
		"preempts the team-b pod instead": {
			incoming:      utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-b").Priority(50).Req(utiltesting.Resources("cpu", "8")).Obj(),
			b1Priority:    10,
			wantPreFilter: plugintest.Status{Code: fwk.Success},
			wantCode:      fwk.Success,
			wantNode:      "n1",
			wantDeleted:   []string{"b1"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			quotas, nodes, pods := twoTenants()
			pods[2].Spec.Priority = &tc.b1Priority
			pods = append(pods, utiltesting.MakePod("b2").Label(extension.LabelQuotaName, "team-b").Priority(10).Req(utiltesting.Resources("cpu", "10")).Obj(), tc.incoming)
			f, plugin, kube := newPreemptionFramework(t, quotas, nodes, pods)
			ctx := t.Context()

			state := framework.NewCycleState()
			_, s, _ := f.RunPreFilterPlugins(ctx, state, tc.incoming)
			if diff := cmp.Diff(tc.wantPreFilter, plugintest.Summarize(s)); diff != "" {
				t.Fatalf("PreFilter (-want,+got):\n%s", diff)
			}
			m := framework.NewDefaultNodeToStatus()
			if s.IsSuccess() {
				s = f.RunFilterPlugins(ctx, state, tc.incoming, nodeInfoOf(t, f, "n1"))
				if s.IsSuccess() {
					t.Fatal("Filter passed on the full node")
				}
			}
			m.SetAbsentNodesStatus(s)
			result, s := plugin.PostFilter(ctx, state, tc.incoming, m)
			if diff := cmp.Diff(tc.wantCode, s.Code()); diff != "" {
				t.Fatalf("PostFilter code (-want,+got):\n%s\nstatus: %v", diff, s)
			}
			gotNode := ""
			if result != nil {
				gotNode = result.NominatedNodeName
			}
			if diff := cmp.Diff(tc.wantNode, gotNode); diff != "" {
				t.Errorf("nominated node (-want,+got):\n%s", diff)
			}
			var deleted []string
			for _, a := range kube.Actions() {
				if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
					deleted = append(deleted, a.(clienttesting.DeleteAction).GetName())
				}
			}
			if diff := cmp.Diff(tc.wantDeleted, deleted); diff != "" {
				t.Errorf("preempted pods (-want,+got):\n%s", diff)
			}
		})
	}
}

// nodeInfoOf returns the snapshot's NodeInfo of node name.
func nodeInfoOf(t *testing.T, f framework.Framework, name string) fwk.NodeInfo {
	t.Helper()
	ni, err := f.SnapshotSharedLister().NodeInfos().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return ni
}

// newPreemptionFramework builds a framework with PrioritySort, NodeResourcesFit, the plugin (PreFilter and
// Filter) and DefaultBinder over a snapshot of the assigned pods, and returns it with the plugin and the fake
// clientset.
func newPreemptionFramework(t *testing.T, quotas []*schedv1alpha1.ElasticQuota, nodes []*corev1.Node, pods []*corev1.Pod) (framework.Framework, *Plugin, *kubefake.Clientset) {
	t.Helper()
	var assigned []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			assigned = append(assigned, p)
		}
	}
	env := plugintest.New(t, plugintest.WithObjectsOf(quotas), plugintest.WithObjectsOf(nodes), plugintest.WithObjectsOf(pods), plugintest.WithSnapshot(assigned, nodes), plugintest.WithSchedulingQueue())
	var plugin *Plugin
	factory := NewFactory(env.CRDs, plugins.WithClock(env.Clock), plugins.WithFeatures(plfeature.Features{}))
	args := plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil)
	f := env.Framework(t, "",
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterPluginAsExtensions(noderesources.Name, frameworkruntime.FactoryAdapter(plfeature.Features{}, noderesources.NewFit), "Filter", "PreFilter"),
		tf.RegisterPluginAsExtensions(Name, plugintest.Capture(env, factory, args, &plugin), "PreFilter", "Filter"),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
	)
	return f, plugin, env.Kube
}
