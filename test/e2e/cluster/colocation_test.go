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

package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/koordctl/explain"
)

// recent is how old a NodeMetric may be and still count as kept up to date: two report intervals, plus slack
// for a round that runs late and for the write.
const recent = 2*reportInterval + 5*time.Second

// TestNodeMetricsReported checks that every node has a NodeMetric with node and system usage, updated within
// the last report intervals, and that each is updated again: the agents keep reporting.
func TestNodeMetricsReported(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	first := map[string]time.Time{}
	var names []string
	eventually(ctx, t, 3*reportInterval+10*time.Second, "every NodeMetric reported twice, recently", func(ctx context.Context) (bool, string) {
		list, err := env.koord.SloV1alpha1().NodeMetrics().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		now := time.Now()
		names = names[:0]
		var problems []string
		for i := range list.Items {
			nm := &list.Items[i]
			names = append(names, nm.Name)
			if nm.Status.UpdateTime == nil || nm.Status.NodeMetric == nil {
				problems = append(problems, fmt.Sprintf("%s has no updateTime or nodeMetric", nm.Name))
				continue
			}
			usage := nm.Status.NodeMetric
			for what, q := range map[string]*resource.Quantity{
				"nodeUsage cpu": usage.NodeUsage.ResourceList.Cpu(), "nodeUsage memory": usage.NodeUsage.ResourceList.Memory(),
				"systemUsage cpu": usage.SystemUsage.ResourceList.Cpu(), "systemUsage memory": usage.SystemUsage.ResourceList.Memory(),
			} {
				if q.Sign() <= 0 {
					problems = append(problems, fmt.Sprintf("%s has %s %s", nm.Name, what, q))
				}
			}
			updated := nm.Status.UpdateTime.Time
			if age := now.Sub(updated); age > recent {
				problems = append(problems, fmt.Sprintf("%s was updated %s ago, more than %s", nm.Name, age, recent))
			}
			if f, ok := first[nm.Name]; !ok {
				first[nm.Name] = updated
				problems = append(problems, fmt.Sprintf("%s: first report seen at %s", nm.Name, updated))
			} else if !updated.After(f) {
				problems = append(problems, fmt.Sprintf("%s: not updated again since %s", nm.Name, f))
			}
		}
		if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(env.c.NodeNames()))) {
			problems = append(problems, fmt.Sprintf("NodeMetrics %v, want one per node %v", names, env.c.NodeNames()))
		}
		return len(problems) == 0, strings.Join(problems, "; ")
	})
}

// TestBatchResourcesFollowReportedUsage checks that koord-manager writes batch-cpu and batch-memory to every
// node, equal to the spec's usage-policy formula applied, by the test, to what the simulated agent reported in
// the node's NodeMetric: capacity − capacity × (100 − reclaimPercent)% − max(systemUsage, capacity −
// allocatable) − HPUsed.
//
// Two things may make the node's value differ from the formula on the latest NodeMetric, and the check allows
// for exactly those:
//   - rounding: koord-manager converts quantities to milli-cores and bytes rounding up, and percentages truncate,
//     so the test computes in the same integer units and allows one unit either way;
//   - the resourceDiffThreshold throttle: koord-manager rewrites a node only when the new value differs from
//     the written one by more than resourceDiffThreshold of it (or updateTimeThresholdSeconds later). The node's
//     koord.dev/colocation-resources annotation records the inputs of the last write. When those inputs are the
//     current ones, the node's value must be exact; when they differ (the agent reported something new that the
//     throttle held back) the value may lag by at most resourceDiffThreshold.
//
// In both cases the written value must be the formula applied exactly to the inputs the annotation records,
// with the test's own capacity and the configured reclaim percent. On these empty nodes the inputs do not
// change between reports (the simulated system usage is constant), so in practice the exact branch applies.
func TestBatchResourcesFollowReportedUsage(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	s := env.strategy
	if *s.CPUCalculatePolicy != configuration.CalculateByPodUsage || *s.MemoryCalculatePolicy != configuration.CalculateByPodUsage {
		t.Fatalf("the installed slo-controller-config uses cpu policy %q and memory policy %q; this test implements the usage policy",
			*s.CPUCalculatePolicy, *s.MemoryCalculatePolicy)
	}
	cpuPercent, memoryPercent := *s.CPUReclaimThresholdPercent, *s.MemoryReclaimThresholdPercent
	diffThreshold := *s.ResourceDiffThreshold

	for _, name := range env.c.NodeNames() {
		t.Run("node="+name, func(t *testing.T) {
			eventually(ctx, t, time.Minute, "batch resources from the formula", func(ctx context.Context) (bool, string) {
				node, err := env.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				nm, err := env.koord.SloV1alpha1().NodeMetrics().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				if nm.Status.NodeMetric == nil {
					return false, "the NodeMetric has no usage yet"
				}
				pods, err := podsOn(ctx, name)
				if err != nil {
					return false, err.Error()
				}
				gotCPU, gotMemory, ok := batchOf(node)
				if !ok {
					return false, fmt.Sprintf("batch resources missing or capacity ≠ allocatable: capacity %v, allocatable %v", node.Status.Capacity, node.Status.Allocatable)
				}
				expl, err := extension.GetColocationExplanation(node.Annotations)
				if err != nil || expl == nil {
					return false, fmt.Sprintf("annotation %s: %v (present: %t)", extension.AnnotationColocationExplanation, err, expl != nil)
				}
				if expl.CPU.SystemUsed == nil || expl.CPU.HPUsed == nil || expl.Memory.SystemUsed == nil || expl.Memory.HPUsed == nil {
					return false, fmt.Sprintf("annotation %s lacks systemUsed or hpUsed: %+v", extension.AnnotationColocationExplanation, expl)
				}

				cpuIn, memoryIn := batchInputs(node, nm, pods)
				recordedCPU := nodeInputs{capacity: cpuIn.capacity, allocatable: cpuIn.allocatable,
					systemUsage: expl.CPU.SystemUsed.MilliValue(), hpUsed: expl.CPU.HPUsed.MilliValue()}
				recordedMemory := nodeInputs{capacity: memoryIn.capacity, allocatable: memoryIn.allocatable,
					systemUsage: expl.Memory.SystemUsed.Value(), hpUsed: expl.Memory.HPUsed.Value()}
				var problems []string
				for _, r := range []struct {
					resource          string
					got               int64
					current, recorded nodeInputs
					percent           int64
				}{
					{"batch-cpu", gotCPU, cpuIn, recordedCPU, cpuPercent},
					{"batch-memory", gotMemory, memoryIn, recordedMemory, memoryPercent},
				} {
					want := batchUsagePolicy(r.current, r.percent)
					if fromRecord := batchUsagePolicy(r.recorded, r.percent); !within(r.got, fromRecord, 1) {
						problems = append(problems, fmt.Sprintf("%s is %d, but the formula on the inputs the annotation records (%+v) gives %d",
							r.resource, r.got, r.recorded, fromRecord))
					}
					current := max(r.current.systemUsage, r.current.capacity-r.current.allocatable, 0)
					throttled := r.recorded.systemUsage != current || r.recorded.hpUsed != r.current.hpUsed
					switch {
					case within(r.got, want, 1):
					case throttled && within(r.got, want, int64(float64(r.got)*diffThreshold)):
						t.Logf("%s is %d, the formula on the latest NodeMetric gives %d: held back by resourceDiffThreshold %v", r.resource, r.got, want, diffThreshold)
					default:
						problems = append(problems, fmt.Sprintf("%s is %d, the formula on the reported usage (%+v, reclaim %d%%) gives %d (written from %+v)",
							r.resource, r.got, r.current, r.percent, want, r.recorded))
					}
				}
				return len(problems) == 0, strings.Join(problems, "; ")
			})
			eventually(ctx, t, 30*time.Second, "koordctl explain node matches the node term by term", func(ctx context.Context) (bool, string) {
				return explainNodeMatches(ctx, name)
			})
		})
	}
}

// explainNodeMatches runs `koordctl explain node` and reports whether its batch-cpu and batch-memory
// calculations have terms, agree with themselves (computed, written, allocatable) and give what the node
// offers.
func explainNodeMatches(ctx context.Context, name string) (bool, string) {
	x := &explain.NodeExplanation{}
	if err := koordctlExplain(ctx, "node", name, x); err != nil {
		return false, err.Error()
	}
	node, err := env.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	var problems []string
	for _, r := range []corev1.ResourceName{extension.BatchCPU, extension.BatchMemory} {
		i := slices.IndexFunc(x.Terms, func(rt explain.ResourceTerms) bool { return rt.Resource == string(r) })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("no calculation of %s among %d", r, len(x.Terms)))
			continue
		}
		rt := x.Terms[i]
		explained, err := resource.ParseQuantity(rt.Allocatable)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: allocatable %q: %v", r, rt.Allocatable, err))
		case explained.Cmp(node.Status.Allocatable[r]) != 0:
			allocatable := node.Status.Allocatable[r]
			problems = append(problems, fmt.Sprintf("%s: explained allocatable %s, the node offers %s", r, rt.Allocatable, allocatable.String()))
		case !rt.Consistent || len(rt.Terms) == 0:
			problems = append(problems, fmt.Sprintf("%s: %d terms, consistent %t: %+v", r, len(rt.Terms), rt.Consistent, rt))
		}
	}
	return len(problems) == 0, strings.Join(problems, "; ")
}

// within reports whether a and b differ by at most tolerance.
func within(a, b, tolerance int64) bool {
	d := a - b
	return d <= tolerance && -d <= tolerance
}

// TestBEPodMutatedAndScheduledOnBatchResources creates a ClusterColocationProfile giving matched pods the BE
// QoS class and koord-scheduler, then a koord-batch pod asking for cpu and memory. The webhook must rewrite its
// resources into batch-cpu (milli-cores) and batch-memory, and koord-scheduler must place it on a node that
// offers them, where KWOK runs it.
func TestBEPodMutatedAndScheduledOnBatchResources(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	const profileLabel = "koord.dev/e2e-profile"
	profile := &configv1alpha1.ClusterColocationProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-be"},
		Spec: configv1alpha1.ClusterColocationProfileSpec{
			Selector:      &metav1.LabelSelector{MatchLabels: map[string]string{profileLabel: "be"}},
			QoSClass:      string(extension.QoSBE),
			SchedulerName: "koord-scheduler",
		},
	}
	profiles := env.koord.ConfigV1alpha1().ClusterColocationProfiles()
	if _, err := profiles.Create(ctx, profile, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterColocationProfile: %v", err)
	}
	t.Cleanup(func() {
		if err := profiles.Delete(context.WithoutCancel(ctx), profile.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete ClusterColocationProfile: %v", err)
		}
	})

	pod := newPod("e2e-be", "2", "2Gi", func(pod *corev1.Pod) {
		pod.Labels[profileLabel] = "be"
		pod.Spec.PriorityClassName = string(extension.PriorityBatch)
		pod.Spec.Containers[0].Resources.Limits = pod.Spec.Containers[0].Resources.Requests.DeepCopy()
	})
	// The webhook reads profiles from koord-manager's cache: dry runs (webhooks see them) show when it has the
	// profile, without creating anything.
	eventually(ctx, t, 30*time.Second, "the webhook applies the new profile", func(ctx context.Context) (bool, string) {
		got, err := env.kube.CoreV1().Pods(namespace).Create(ctx, pod.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err.Error()
		}
		_, ok := got.Spec.Containers[0].Resources.Requests[extension.BatchCPU]
		return ok, fmt.Sprintf("dry-run pod resources %v", got.Spec.Containers[0].Resources)
	})

	createPods(ctx, t, pod)
	created, err := env.kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	batch := corev1.ResourceList{extension.BatchCPU: resource.MustParse("2000"), extension.BatchMemory: resource.MustParse("2Gi")}
	if diff := cmp.Diff(corev1.ResourceRequirements{Requests: batch, Limits: batch}, created.Spec.Containers[0].Resources); diff != "" {
		t.Errorf("container resources after the webhook (-want,+got):\n%s", diff)
	}
	if got := created.Labels[extension.LabelPodQoS]; got != string(extension.QoSBE) {
		t.Errorf("label %s = %q, want %q from the profile", extension.LabelPodQoS, got, extension.QoSBE)
	}
	if created.Spec.SchedulerName != "koord-scheduler" {
		t.Errorf("schedulerName = %q, want koord-scheduler from the profile", created.Spec.SchedulerName)
	}
	if p := ptr.Deref(created.Spec.Priority, 0); p < extension.PriorityBatchValueMin || p > extension.PriorityBatchValueMax {
		t.Errorf("priority = %d, want koord-batch's band %d–%d", p, extension.PriorityBatchValueMin, extension.PriorityBatchValueMax)
	}
	if _, ok := created.Annotations[extension.AnnotationExtendedResourceSpec]; !ok {
		t.Errorf("annotations %v lack %s", created.Annotations, extension.AnnotationExtendedResourceSpec)
	}

	running := waitRunning(ctx, t, time.Minute, pod.Name)[pod.Name]
	if !slices.Contains(env.c.NodeNames(), running.Spec.NodeName) {
		t.Fatalf("pod runs on %q, want a fake node", running.Spec.NodeName)
	}
	node, err := env.kube.CoreV1().Nodes().Get(ctx, running.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu, memory, ok := batchOf(node); !ok || cpu < 2000 || memory < 2<<30 {
		t.Errorf("pod runs on %s, which offers batch-cpu %d and batch-memory %d (both present: %t); want at least 2000 and 2Gi",
			node.Name, cpu, memory, ok)
	}

	// koordctl explain pod shows the class, the batch resources and the profile that gave them.
	x := &explain.PodExplanation{}
	if err := koordctlExplain(ctx, "pod", pod.Name, x); err != nil {
		t.Fatal(err)
	}
	if x.QoSClass != string(extension.QoSBE) || x.PriorityClass != string(extension.PriorityBatch) || x.Node != running.Spec.NodeName {
		t.Errorf("koordctl explain pod: QoS %q, priority class %q, node %q; want BE, %s, %s", x.QoSClass, x.PriorityClass, x.Node, extension.PriorityBatch, running.Spec.NodeName)
	}
	if !slices.Contains(x.Profiles, profile.Name) {
		t.Errorf("koordctl explain pod: profiles %q, want %s", x.Profiles, profile.Name)
	}
	// A simulated node has no cgroups to show (test/realnode reads a real pod's through its koordlet).
	if x.Cgroups != nil || !strings.Contains(x.CgroupsUnavailable, "simulated") {
		t.Errorf("koordctl explain pod: cgroups %+v, unavailable %q; want none, for a simulated node", x.Cgroups, x.CgroupsUnavailable)
	}
	if x.ReclaimedResources == nil {
		t.Fatal("koordctl explain pod shows no batch resources")
	}
	for name, want := range batch {
		if got := x.ReclaimedResources.Requests[name]; got.Cmp(want) != 0 {
			t.Errorf("koordctl explain pod: %s requested %s, want %s", name, got.String(), want.String())
		}
	}
}

// loadAwareCPUThreshold is LoadAwareScheduling's usageThresholds.cpu in config/scheduler.
const loadAwareCPUThreshold = 65

// TestLoadAwareAvoidsHotNode makes node 0 hot with a pod bound to it that the simulated agent sees using 28 of
// its 32 cores, and makes it the cheapest node by requests (the other nodes carry pods that request half their
// CPU but use little), so that only the load-aware filter keeps pods away from it. Once node 0's NodeMetric
// reports usage above the threshold, a pod that may go only to node 0 must stay Pending for the load-aware
// reason, and LS pods for koord-scheduler must all land on the other nodes.
func TestLoadAwareAvoidsHotNode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	names := env.c.NodeNames()
	hot := names[0]

	bound := []*corev1.Pod{newPod("e2e-hot", "1", "1Gi", withLS, onNode(hot), withCPUUsage("28"))}
	for i, n := range names[1:] {
		bound = append(bound, newPod(fmt.Sprintf("e2e-filler-%d", i), "16", "8Gi", withLS, onNode(n), withCPUUsage("1")))
	}
	createPods(ctx, t, bound...)
	waitRunning(ctx, t, time.Minute, podNames(bound)...)

	var nodeUsage string
	eventually(ctx, t, 3*reportInterval+aggregateDuration+10*time.Second, "node "+hot+" reported above the load-aware threshold", func(ctx context.Context) (bool, string) {
		nm, err := env.koord.SloV1alpha1().NodeMetrics().Get(ctx, hot, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if nm.Status.NodeMetric == nil {
			return false, "no usage"
		}
		node, err := env.kube.CoreV1().Nodes().Get(ctx, hot, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		used := nm.Status.NodeMetric.NodeUsage.ResourceList.Cpu().MilliValue()
		allocatable := node.Status.Allocatable.Cpu().MilliValue()
		nodeUsage = fmt.Sprintf("%dm of %dm", used, allocatable)
		return used*100 > allocatable*loadAwareCPUThreshold, nodeUsage
	})
	t.Logf("Node %s reports cpu usage %s", hot, nodeUsage)

	probe := newPod("e2e-probe", "100m", "64Mi", withLS, byKoordScheduler, func(pod *corev1.Pod) {
		pod.Spec.NodeSelector = map[string]string{corev1.LabelHostname: hot}
	})
	createPods(ctx, t, probe)
	eventually(ctx, t, 30*time.Second, "a pod that fits only "+hot+" is rejected for its load", func(ctx context.Context) (bool, string) {
		pod, err := env.kube.CoreV1().Pods(namespace).Get(ctx, probe.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if pod.Spec.NodeName != "" {
			return false, "bound to " + pod.Spec.NodeName
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				want := fmt.Sprintf("> threshold %d percent", loadAwareCPUThreshold)
				return strings.Contains(c.Message, "node cpu usage") && strings.Contains(c.Message, want), c.Message
			}
		}
		return false, fmt.Sprintf("conditions %v", pod.Status.Conditions)
	})
	explainPendingPod(ctx, t, probe.Name, "LoadAwareScheduling")

	var ls []*corev1.Pod
	for i := range 4 {
		ls = append(ls, newPod(fmt.Sprintf("e2e-ls-%d", i), "1", "1Gi", withLS, byKoordScheduler))
	}
	createPods(ctx, t, ls...)
	placed := map[string]string{}
	eventually(ctx, t, 30*time.Second, "every LS pod scheduled", func(ctx context.Context) (bool, string) {
		for _, p := range ls {
			pod, err := env.kube.CoreV1().Pods(namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if pod.Spec.NodeName == "" {
				return false, fmt.Sprintf("pod %s pending: %v", p.Name, pod.Status.Conditions)
			}
			placed[p.Name] = pod.Spec.NodeName
		}
		return true, ""
	})
	for pod, node := range placed {
		if node == hot {
			t.Errorf("pod %s was scheduled onto the hot node %s", pod, node)
		}
	}
	t.Logf("LS pods placed: %v", placed)
}

// podNames returns the names of pods.
func podNames(pods []*corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

// TestStaleAgentLosesBatchResources stops the simulated agent of the last node (its label no longer matches
// the agents' node selector, nor KWOK's) and checks that koord-manager removes the node's batch resources once
// its NodeMetric is older than degradeTimeMinutes, not before, saying so in the node's annotation, while the
// other nodes keep theirs.
func TestStaleAgentLosesBatchResources(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	names := env.c.NodeNames()
	stale := names[len(names)-1]
	nodes := env.kube.CoreV1().Nodes()

	eventually(ctx, t, time.Minute, "node "+stale+" offers batch resources", func(ctx context.Context) (bool, string) {
		node, err := nodes.Get(ctx, stale, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, _, ok := batchOf(node)
		return ok, fmt.Sprintf("allocatable %v", node.Status.Allocatable)
	})

	relabel := func(ctx context.Context, value string) error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{cluster.NodeLabel: value}}})
		if err != nil {
			return err
		}
		_, err = nodes.Patch(ctx, stale, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	if err := relabel(ctx, "e2e-stopped"); err != nil {
		t.Fatalf("relabel node %s: %v", stale, err)
	}
	t.Cleanup(func() {
		if err := relabel(context.WithoutCancel(ctx), cluster.NodeLabelValue); err != nil {
			t.Errorf("restore the label of node %s: %v", stale, err)
		}
	})

	var removedAt time.Time
	eventually(ctx, t, degradeTime+2*reportInterval+30*time.Second, "batch resources removed from "+stale, func(ctx context.Context) (bool, string) {
		node, err := nodes.Get(ctx, stale, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		removedAt = time.Now()
		return !hasBatch(node), fmt.Sprintf("capacity %v, allocatable %v", node.Status.Capacity, node.Status.Allocatable)
	})

	nm, err := env.koord.SloV1alpha1().NodeMetrics().Get(ctx, stale, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nm.Status.UpdateTime == nil {
		t.Fatalf("NodeMetric %s has no updateTime", stale)
	}
	last := nm.Status.UpdateTime.Time
	if deadline := last.Add(degradeTime); removedAt.Before(deadline) {
		t.Errorf("batch resources gone at %s, before the NodeMetric (updated %s) was %s old", removedAt, last, degradeTime)
	}
	t.Logf("Node %s lost its batch resources %s after its last report", stale, removedAt.Sub(last).Round(time.Second))

	node, err := nodes.Get(ctx, stale, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expl, err := extension.GetColocationExplanation(node.Annotations)
	if err != nil || expl == nil {
		t.Fatalf("annotation %s: %v (present: %t)", extension.AnnotationColocationExplanation, err, expl != nil)
	}
	if !strings.Contains(expl.Degraded, "degradeTimeMinutes") {
		t.Errorf("annotation %s says degraded %q, want the stale NodeMetric named", extension.AnnotationColocationExplanation, expl.Degraded)
	}

	for _, other := range names[:len(names)-1] {
		node, err := nodes.Get(ctx, other, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := batchOf(node); !ok {
			t.Errorf("node %s, whose agent still reports, lost its batch resources: allocatable %v", other, node.Status.Allocatable)
		}
	}
}

// TestMidResourcesFromPrediction: a koord-prod pod requesting 8 cores and 8Gi that uses 1 core and 2Gi runs on
// the last node. The node's simulated agent must report a prodReclaimableMetric with CPU reclaimable (its peak
// prediction: the pod's p95 plus 10 % is about 1.1 cores, far below its request), and koord-manager must put
// mid-cpu on the node from it: with midUnallocatedPercent 0 (the shipped setting), mid-cpu is exactly
// min(ProdReclaimable, Capacity − NodeUsage) of the inputs the explanation annotation records, ProdReclaimable
// above 0.
func TestMidResourcesFromPrediction(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	names := env.c.NodeNames()
	node := names[len(names)-1]
	pod := newPod("e2e-prod", "8", "8Gi", withLS, onNode(node), func(pod *corev1.Pod) {
		pod.Spec.PriorityClassName = string(extension.PriorityProd)
		pod.Annotations = map[string]string{"sim.koord.dev/usage": `{"cpu": {"type": "constant", "value": "1"}, "memory": {"type": "constant", "value": "2Gi"}}`}
	})
	createPods(ctx, t, pod)
	waitRunning(ctx, t, time.Minute, pod.Name)

	eventually(ctx, t, time.Minute, "mid-cpu from the reported prodReclaimableMetric", func(ctx context.Context) (bool, string) {
		nm, err := env.koord.SloV1alpha1().NodeMetrics().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		r := nm.Status.ProdReclaimableMetric
		if r == nil || r.Resource.Cpu().MilliValue() <= 0 || nm.Status.ProdPeakMetric == nil {
			return false, fmt.Sprintf("prodReclaimableMetric %v, prodPeakMetric %v: no CPU predicted reclaimable yet", r, nm.Status.ProdPeakMetric)
		}
		// The pod reserves 8 cores and uses 1: at most 7 are reclaimable.
		if got := r.Resource.Cpu().MilliValue(); got > 7000 {
			return false, fmt.Sprintf("prodReclaimable cpu %dm is more than the pod's request less its usage", got)
		}
		n, err := env.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		mid, ok := n.Status.Allocatable[extension.MidCPU]
		if !ok || mid.Value() <= 0 {
			return false, fmt.Sprintf("the node has no mid-cpu yet (allocatable %v)", n.Status.Allocatable)
		}
		expl, err := extension.GetColocationExplanation(n.Annotations)
		if err != nil || expl == nil || expl.CPU.ProdReclaimable == nil || expl.CPU.NodeUnused == nil || expl.CPU.Mid == nil {
			return false, fmt.Sprintf("explanation %+v (%v) lacks the mid inputs", expl, err)
		}
		want := min(expl.CPU.ProdReclaimable.MilliValue(), expl.CPU.NodeUnused.MilliValue())
		if mid.Value() != want || expl.CPU.Mid.MilliValue() != want {
			return false, fmt.Sprintf("mid-cpu %d (explanation %dm), want min(prodReclaimable %dm, nodeUnused %dm) = %d",
				mid.Value(), expl.CPU.Mid.MilliValue(), expl.CPU.ProdReclaimable.MilliValue(), expl.CPU.NodeUnused.MilliValue(), want)
		}
		// The throttle (resourceDiffThreshold) may hold back a small change of the prediction, so the recorded
		// input need not be the latest report's; it came from a prediction, not from an empty metric.
		if expl.CPU.ProdReclaimable.MilliValue() <= 0 {
			return false, "the explanation records no prodReclaimable"
		}
		return true, ""
	})
}
