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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/features"
)

// TestElasticQuotaBorrowAndReclaim: two tenants share 20Gi of memory with a min of 10Gi each. The first
// borrows what the second does not use; when the second asks for its share, the first's over-use is evicted
// after delayEvictTime and the second's pods take the room. A higher-priority pod of a tenant at its runtime
// quota preempts a pod of its own tenant, never of the other; a pod beyond the runtime quota waits with a
// reason naming the quota.
func TestElasticQuotaBorrowAndReclaim(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, pluginArgs{plugin: "ElasticQuota", fields: map[string]any{
		"monitorAllQuotas": true,
		"delayEvictTime":   "2s",
	}})
	f.runTerminatingPodsToEnd()
	ensurePriorityClass(t, extension.PriorityProd)
	revokedBefore, rejectedBefore := counter(t, "koord_scheduler_elastic_quota_revoked_pods_total"), counter(t, "koord_scheduler_elastic_quota_rejections_total")
	// 2 nodes × 10Gi; pods of 1Gi (memory binds first: 100m cpu each) and no NodeMetric load to speak of.
	f.node("a", "0", 0, nil)
	f.node("b", "0", 0, nil)
	teamA, teamB := f.quota("team-a", "10Gi", "20Gi"), f.quota("team-b", "10Gi", "20Gi")

	// Team A borrows: 16Gi, 6Gi of it from team B's unused min.
	var podsA []*corev1.Pod
	for i := range 16 {
		podsA = append(podsA, f.quotaPod(fmt.Sprintf("a-%d", i), teamA, nil))
	}
	for _, p := range podsA {
		f.boundNode(p)
	}
	f.eventuallyRuntime(teamA, "16Gi")

	// Team B asks for 6Gi: its runtime quota becomes 6Gi and team A's 14Gi. Four pods fit in the free 4Gi at
	// once; two wait until team A's over-use (16Gi > 14Gi) is evicted, 2s later.
	var podsB []*corev1.Pod
	for i := range 6 {
		podsB = append(podsB, f.quotaPod(fmt.Sprintf("b-%d", i), teamB, nil))
	}
	for _, p := range podsB {
		f.boundNode(p)
	}
	f.eventuallyRuntime(teamA, "14Gi")
	if got := f.countBound(teamA); got != 14 {
		t.Errorf("team A has %d pods bound after the reclaim, want 14", got)
	}
	f.eventually("no QuotaOverUsedRevoked event", func(ctx context.Context) (bool, error) {
		events := &corev1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace(f.namespace)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == "QuotaOverUsedRevoked" && strings.Contains(e.Message, fmt.Sprintf("quota %q", teamA)) {
				return true, nil
			}
		}
		return false, nil
	})

	// Team A is at its runtime quota: another pod of the same priority waits, and says why.
	waiting := f.quotaPod("a-waiting", teamA, nil)
	if msg := f.unschedulable(waiting); !strings.Contains(msg, fmt.Sprintf("quota %q memory", teamA)) {
		t.Errorf("PodScheduled message %q does not name quota %q and memory", msg, teamA)
	}
	if err := env.Client.Delete(t.Context(), waiting, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	// A koord-prod pod of team A preempts one of team A's pods, not one of team B's.
	urgent := f.quotaPod("a-urgent", teamA, func(p *corev1.Pod) { p.Spec.PriorityClassName = string(extension.PriorityProd) })
	f.boundNode(urgent)
	if got := f.countBound(teamA); got != 14 {
		t.Errorf("team A has %d pods bound after the preemption, want 14 (its runtime quota)", got)
	}
	if got := f.countBound(teamB); got != 6 {
		t.Errorf("team B has %d pods bound after team A's preemption, want 6", got)
	}
	if got := counter(t, "koord_scheduler_elastic_quota_revoked_pods_total") - revokedBefore; got != 2 {
		t.Errorf("koord_scheduler_elastic_quota_revoked_pods_total grew by %v, want 2", got)
	}
	if got := counter(t, "koord_scheduler_elastic_quota_rejections_total") - rejectedBefore; got < 1 {
		t.Errorf("koord_scheduler_elastic_quota_rejections_total grew by %v, want at least 1", got)
	}
}

// TestMultiQuotaTree: with koord-scheduler's MultiQuotaTree gate, a quota tree (an ElasticQuotaProfile's root
// quota and its children) shares its root's total-resource, and the quotas without a tree share the cluster
// less it. The cluster has 20Gi; the tree's total is 10Gi, so a tree-less quota that asks for 12Gi gets 10Gi
// (it would get 12Gi with the gate off) and a pod beyond it waits; the tree's quota gets 10Gi too.
func TestMultiQuotaTree(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.MultiQuotaTree, true)
	f := newFixture(t)
	startScheduler(t)
	f.node("a", "0", 0, nil)
	f.node("b", "0", 0, nil)
	treeID := f.namespace + "-tree"
	root := f.quotaWith("tree-root", "0", "20Gi", func(eq *schedv1alpha1.ElasticQuota) {
		eq.Labels = map[string]string{extension.LabelQuotaIsRoot: "true", extension.LabelQuotaTreeID: treeID, extension.LabelQuotaIsParent: "true"}
		eq.Annotations = map[string]string{extension.AnnotationTotalResource: `{"cpu":"10","memory":"10Gi"}`}
	})
	child := f.quotaWith("tree-child", "0", "20Gi", func(eq *schedv1alpha1.ElasticQuota) {
		eq.Labels = map[string]string{extension.LabelQuotaParent: root, extension.LabelQuotaTreeID: treeID}
	})
	plain := f.quota("plain", "0", "20Gi")
	sixGi := func(name, quota string) *corev1.Pod {
		requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("6Gi")}
		return f.pod(name, requests, func(p *corev1.Pod) { p.Labels = map[string]string{extension.LabelQuotaName: quota} })
	}
	for _, quota := range []string{plain, child} {
		first, second := sixGi(quota+"-0", quota), sixGi(quota+"-1", quota)
		f.boundNode(first)
		f.eventuallyRuntime(quota, "10Gi")
		if msg := f.unschedulable(second); !strings.Contains(msg, fmt.Sprintf("quota %q memory", quota)) {
			t.Errorf("PodScheduled message %q of the pod beyond quota %s's runtime does not name the quota", msg, quota)
		}
	}
}

// quota creates an ElasticQuota named after the test with min and max memory (and 20 cpus), deleted when the
// test ends, and returns its name.
func (f *fixture) quota(name, minMemory, maxMemory string) string {
	f.t.Helper()
	return f.quotaWith(name, minMemory, maxMemory, nil)
}

// quotaWith is quota with the ElasticQuota edited before it is created.
func (f *fixture) quotaWith(name, minMemory, maxMemory string, edit func(*schedv1alpha1.ElasticQuota)) string {
	f.t.Helper()
	eq := &schedv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: f.namespace + "-" + name, Namespace: f.namespace},
		Spec: schedv1alpha1.ElasticQuotaSpec{
			Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), corev1.ResourceMemory: resource.MustParse(minMemory)},
			Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20"), corev1.ResourceMemory: resource.MustParse(maxMemory)},
		},
	}
	if edit != nil {
		edit(eq)
	}
	if err := env.Client.Create(f.t.Context(), eq); err != nil {
		f.t.Fatalf("create ElasticQuota %s: %v", eq.Name, err)
	}
	// No namespace controller runs here to delete the namespace's objects.
	f.t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), eq); err != nil && !apierrors.IsNotFound(err) {
			f.t.Errorf("delete ElasticQuota %s: %v", eq.Name, err)
		}
	})
	return eq.Name
}

// quotaPod creates a pod of quota requesting 100m cpu and 1Gi memory.
func (f *fixture) quotaPod(name, quota string, edit func(*corev1.Pod)) *corev1.Pod {
	f.t.Helper()
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	return f.pod(name, requests, func(p *corev1.Pod) {
		p.Labels = map[string]string{extension.LabelQuotaName: quota}
		if edit != nil {
			edit(p)
		}
	})
}

// countBound returns the number of pods of quota bound to a node and not terminating.
func (f *fixture) countBound(quota string) int {
	f.t.Helper()
	pods := &corev1.PodList{}
	if err := env.Client.List(f.t.Context(), pods, client.InNamespace(f.namespace), client.MatchingLabels{extension.LabelQuotaName: quota}); err != nil {
		f.t.Fatalf("list pods: %v", err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// eventuallyRuntime waits until koord-scheduler reports the runtime quota of quota with memory.
func (f *fixture) eventuallyRuntime(quota, memory string) {
	f.t.Helper()
	want := resource.MustParse(memory)
	var last string
	err := wait.PollUntilContextTimeout(f.t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		eq := &schedv1alpha1.ElasticQuota{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: quota}, eq); err != nil {
			return false, err
		}
		last = eq.Annotations[extension.AnnotationRuntime]
		runtime, err := extension.GetRuntime(eq)
		if err != nil {
			return false, nil
		}
		got, ok := runtime[corev1.ResourceMemory]
		return ok && got.Cmp(want) == 0, nil
	})
	if err != nil {
		f.t.Fatalf("runtime quota of %s is %s, want memory %s: %v", quota, last, memory, err)
	}
}

// runTerminatingPodsToEnd stands in for the kubelets this control plane lacks: pods of the test being deleted
// gracefully (evicted, preempted) are removed, as a kubelet does once their containers stop.
func (f *fixture) runTerminatingPodsToEnd() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	f.t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			pods := &corev1.PodList{}
			if err := env.Client.List(ctx, pods, client.InNamespace(f.namespace)); err != nil {
				return false, nil
			}
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					_ = env.Client.Delete(ctx, &p, client.GracePeriodSeconds(0), client.Preconditions{UID: ptr.To(p.UID)})
				}
			}
			return false, nil
		})
	}()
}
