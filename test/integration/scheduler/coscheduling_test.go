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

package scheduler

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// TestGangBindsAllOrNothing: a gang whose members all fit binds together; one that does not fit binds none of
// its members, holds nothing (a node added later takes the whole gang), and says why it waits.
func TestGangBindsAllOrNothing(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	f.node("a", "0", 0, nil)
	f.node("b", "0", 0, nil)

	// 4 × 2 cpus on 2 × 10 cpus: they fit, and bind.
	for _, p := range f.gang("fits", 4, "2", nil) {
		f.boundNode(p)
	}

	// 6 × 3 cpus: 3 fit on each node but 2 are taken by the first gang (8 cpus on a node leaves room for
	// none, or 4 of 20 cpus are used: at most 2 + 2 = 4 members fit, two short of the gang).
	big := f.gang("too-big", 6, "3", nil)
	f.consistentlyUnbound(big, 5*time.Second)
	if msg := f.unschedulable(big[0]); !strings.Contains(msg, "gang") {
		t.Errorf("PodScheduled message of a member %q does not mention its gang", msg)
	}
	// Nothing of the gang stays assumed: with a third node all six fit, and bind.
	f.node("c", "0", 0, nil)
	for _, p := range big {
		f.boundNode(p)
	}
}

// TestGangTimesOut: a NonStrict gang whose members do not all fit waits its waiting time, then its waiting
// members are released and marked timed out; none is bound, and the gang binds once it fits.
func TestGangTimesOut(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	f.node("a", "0", 0, nil)

	timeoutsBefore := counter(t, "koord_scheduler_gang_timeouts_total")
	// 4 × 3 cpus on 10 cpus: 3 fit, the fourth does not.
	gang := f.gang("slow", 4, "3", map[string]string{
		extension.AnnotationGangMode:     "NonStrict",
		extension.AnnotationGangWaitTime: "2s",
	})
	f.eventually("the gang's members were not marked timed out", func(ctx context.Context) (bool, error) {
		for _, p := range gang {
			got := &corev1.Pod{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
				return false, err
			}
			if extension.IsGangTimeout(got) {
				return true, nil
			}
		}
		return false, nil
	})
	f.consistentlyUnbound(gang, time.Second)
	if got := counter(t, "koord_scheduler_gang_timeouts_total") - timeoutsBefore; got < 1 {
		t.Errorf("koord_scheduler_gang_timeouts_total grew by %v, want at least 1", got)
	}
	f.node("b", "0", 0, nil)
	for _, p := range gang {
		f.boundNode(p)
	}
}

// requestsOnly lifts LoadAwareScheduling's thresholds, so that only requests decide what fits.
var requestsOnly = pluginArgs{plugin: "LoadAwareScheduling", fields: map[string]any{
	"usageThresholds": map[string]any{"cpu": 100, "memory": 100},
}}

// gang creates n pods of one gang (gang annotations, minimum n), each requesting cpu cpus and 100Mi, with the
// extra annotations.
func (f *fixture) gang(name string, n int, cpus string, annotations map[string]string) []*corev1.Pod {
	f.t.Helper()
	pods := make([]*corev1.Pod, n)
	for i := range n {
		pods[i] = f.pod(fmt.Sprintf("%s-%d", name, i), cpu(cpus), func(p *corev1.Pod) {
			p.Annotations = map[string]string{
				extension.AnnotationGangName:   name,
				extension.AnnotationGangMinNum: fmt.Sprint(n),
			}
			for k, v := range annotations {
				p.Annotations[k] = v
			}
		})
	}
	return pods
}

// consistentlyUnbound fails the test when one of pods is bound within d.
func (f *fixture) consistentlyUnbound(pods []*corev1.Pod, d time.Duration) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.t.Context(), 200*time.Millisecond, d, true, func(context.Context) (bool, error) {
		for _, p := range pods {
			got := &corev1.Pod{}
			// The test's context, not the poll's: a read cut short by the poll's deadline is no finding.
			if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(p), got); err != nil {
				return false, err
			}
			if got.Spec.NodeName != "" {
				return false, fmt.Errorf("pod %s was bound to %s", p.Name, got.Spec.NodeName)
			}
		}
		return false, nil
	})
	if !wait.Interrupted(err) {
		f.t.Fatalf("gang members: %v", err)
	}
}

// withPreemption turns on Coscheduling's job-level preemption.
var withPreemption = pluginArgs{plugin: "Coscheduling", fields: map[string]any{"enablePreemption": true}}

// TestGangPreemption: with enablePreemption, a gang of koord-prod pods that fits nowhere preempts for all its
// members at once and only what it needs (a koord-mid pod that fits beside a member stays); a gang that
// cannot fit even with every lower-priority pod gone evicts nothing and says why.
func TestGangPreemption(t *testing.T) {
	f := newFixture(t)
	// No usage thresholds: LoadAwareScheduling has no PreFilter extensions, so its estimate of a node's usage
	// still counts the pods preemption would remove, and would keep the dry run from placing members.
	startScheduler(t, pluginArgs{plugin: "LoadAwareScheduling", fields: map[string]any{
		"usageThresholds": map[string]any{"cpu": 0, "memory": 0},
	}}, withPreemption)
	f.runTerminatingPodsToEnd()
	for _, pc := range []extension.PriorityClass{extension.PriorityProd, extension.PriorityMid, extension.PriorityBatch} {
		ensurePriorityClass(t, pc)
	}
	victimsBefore := counter(t, "koord_scheduler_gang_preemption_victims_total")
	// Two nodes of 10 cpus, each with a koord-batch and a koord-mid pod of 4 cpus: 2 cpus free on each.
	f.node("a", "0", 0, nil)
	f.node("b", "0", 0, nil)
	low := map[string]*corev1.Pod{}
	for _, name := range []string{"batch-0", "mid-0", "batch-1", "mid-1"} {
		class := extension.PriorityBatch
		if strings.HasPrefix(name, "mid") {
			class = extension.PriorityMid
		}
		low[name] = f.pod(name, cpu("4"), func(p *corev1.Pod) { p.Spec.PriorityClassName = string(class) })
		f.boundNode(low[name])
	}

	// A gang that cannot fit: 3 × 8 cpus on 2 × 10. Nothing is evicted.
	tooBig := f.prodGang("too-big", 3, "8")
	f.eventually("no member says that preemption would not help", func(ctx context.Context) (bool, error) {
		for _, p := range tooBig {
			got := &corev1.Pod{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
				return false, err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == corev1.PodScheduled && strings.Contains(c.Message, "gang preemption would not help") {
					return true, nil
				}
			}
		}
		return false, nil
	})
	for _, p := range tooBig {
		if err := env.Client.Delete(t.Context(), p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.countUnterminated(slices.Collect(maps.Values(low))); got != 4 {
		t.Fatalf("%d of the 4 lower-priority pods are left after a gang that cannot fit, want 4", got)
	}

	// 3 × 4 cpus: two members on one node (both its pods go), one on the other, where the koord-mid pod
	// fits beside it and stays: 3 victims, the gang binds.
	gang := f.prodGang("train", 3, "4")
	for _, p := range gang {
		f.boundNode(p)
	}
	left := f.unterminated(slices.Collect(maps.Values(low)))
	if len(left) != 1 || !strings.HasPrefix(left[0], "mid-") {
		t.Errorf("lower-priority pods left after the gang's preemption: %v, want one koord-mid pod", left)
	}
	if got := counter(t, "koord_scheduler_gang_preemption_victims_total") - victimsBefore; got != 3 {
		t.Errorf("koord_scheduler_gang_preemption_victims_total grew by %v, want 3", got)
	}
}

// prodGang creates a Strict gang of n koord-prod pods requesting cpus each.
func (f *fixture) prodGang(name string, n int, cpus string) []*corev1.Pod {
	f.t.Helper()
	pods := make([]*corev1.Pod, n)
	for i := range n {
		pods[i] = f.pod(fmt.Sprintf("%s-%d", name, i), cpu(cpus), func(p *corev1.Pod) {
			p.Spec.PriorityClassName = string(extension.PriorityProd)
			p.Annotations = map[string]string{
				extension.AnnotationGangName:   name,
				extension.AnnotationGangMinNum: fmt.Sprint(n),
			}
		})
	}
	return pods
}

// unterminated returns the names of pods that still exist and are not being deleted, sorted.
func (f *fixture) unterminated(pods []*corev1.Pod) []string {
	f.t.Helper()
	var names []string
	for _, p := range pods {
		got := &corev1.Pod{}
		err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(p), got)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			f.t.Fatal(err)
		}
		if got.DeletionTimestamp == nil {
			names = append(names, got.Name)
		}
	}
	slices.Sort(names)
	return names
}

// countUnterminated is len(unterminated(pods)).
func (f *fixture) countUnterminated(pods []*corev1.Pod) int { return len(f.unterminated(pods)) }

// TestNetworkTopologyGang: with awareNetworkTopology, a gang that must stay within one block lands in the
// tightest block that holds it all (where LeastAllocated alone would spread it), a gang no block holds waits
// and says so, and the ClusterNetworkTopology's status lists the blocks.
func TestNetworkTopologyGang(t *testing.T) {
	f := newFixture(t)
	spineKey, blockKey := "test.koord.dev/spine", "test.koord.dev/block"
	cnt := &schedulingv1alpha1.ClusterNetworkTopology{
		ObjectMeta: metav1.ObjectMeta{Name: schedulingv1alpha1.DefaultClusterNetworkTopologyName},
		Spec: schedulingv1alpha1.ClusterNetworkTopologySpec{NetworkTopologySpec: []schedulingv1alpha1.NetworkTopologySpec{
			{TopologyLayer: "SpineLayer", LabelKey: []string{spineKey}},
			{TopologyLayer: "BlockLayer", ParentTopologyLayer: "SpineLayer", LabelKey: []string{blockKey}},
			{TopologyLayer: schedulingv1alpha1.NodeTopologyLayer, ParentTopologyLayer: "BlockLayer"},
		}},
	}
	if err := env.Client.Create(t.Context(), cnt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), cnt); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the ClusterNetworkTopology: %v", err)
		}
	})
	// Blocks b1 = {a, b} and b2 = {c, d} of 10 cpus each, in one spine; 6 cpus of a are taken.
	blocks := map[string]string{"a": "b1", "b": "b1", "c": "b2", "d": "b2"}
	nodes := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		name := f.node(n, "0", 0, nil)
		nodes[name] = blocks[n]
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q,%q:%q}}}`, spineKey, f.namespace+"-s1", blockKey, f.namespace+"-"+blocks[n])
		if err := env.Client.Patch(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	startScheduler(t, requestsOnly, pluginArgs{plugin: "Coscheduling", fields: map[string]any{"awareNetworkTopology": true}})
	if got := f.boundNode(f.pod("taken", cpu("6"), nil)); got != f.namespace+"-a" && got != f.namespace+"-b" && got != f.namespace+"-c" && got != f.namespace+"-d" {
		t.Fatalf("pod taken bound to %s", got)
	}

	mustGatherBlock := `{"gatherStrategy":[{"layer":"BlockLayer","strategy":"MustGather"}]}`
	topologyGang := func(name string, n int) []*corev1.Pod {
		pods := make([]*corev1.Pod, n)
		for i := range n {
			pods[i] = f.pod(fmt.Sprintf("%s-%d", name, i), cpu("4"), func(p *corev1.Pod) {
				p.Annotations = map[string]string{
					extension.AnnotationGangName:                name,
					extension.AnnotationGangMinNum:              fmt.Sprint(n),
					extension.AnnotationGangNetworkTopologySpec: mustGatherBlock,
				}
			})
		}
		return pods
	}
	// 3 × 4 cpus: the block of the taken node holds exactly 3, the other 4; the tighter one is chosen.
	taken := &corev1.Pod{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: f.namespace, Name: "taken"}, taken); err != nil {
		t.Fatal(err)
	}
	wantBlock := nodes[taken.Spec.NodeName]
	for _, p := range topologyGang("train", 3) {
		if got := f.boundNode(p); nodes[got] != wantBlock {
			t.Errorf("member %s bound to %s in block %s, want block %s", p.Name, got, nodes[got], wantBlock)
		}
	}
	// 5 × 4 cpus: the other block holds 4.
	big := topologyGang("big", 5)
	f.eventually("no member of the big gang says why it waits", func(ctx context.Context) (bool, error) {
		for _, p := range big {
			got := &corev1.Pod{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
				return false, err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == corev1.PodScheduled && strings.Contains(c.Message, "no topology domain can hold the gang's 5 pending members") {
					return true, nil
				}
			}
		}
		return false, nil
	})
	f.consistentlyUnbound(big, time.Second)

	f.eventually("the ClusterNetworkTopology's status does not list the test's blocks", func(ctx context.Context) (bool, error) {
		got := &schedulingv1alpha1.ClusterNetworkTopology{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cnt), got); err != nil {
			return false, err
		}
		found := 0
		for _, d := range got.Status.DetailStatus {
			if d.TopologyInfo.TopologyLayer == "BlockLayer" && strings.HasPrefix(d.TopologyInfo.TopologyName, f.namespace) && d.NodeNum == 2 {
				found++
			}
		}
		return found == 2, nil
	})
}
