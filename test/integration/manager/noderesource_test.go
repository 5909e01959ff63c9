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

package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordctl/explain"
	"github.com/koord-dev/koord/pkg/manager"
)

// The tests in this file run koord-manager with only the noderesource controller (plus the SLO config loader and
// the webhooks) against the real apiserver. The test plays the node agent: it writes NodeMetric status through
// the status subresource, binds pods with spec.nodeName and sets their phase through the status subresource.
//
// Every fixture is the base fixture of the reference's noderesource unit tests (§8.2), in binary units:
//
//	node      capacity = allocatable = 100 cores / 120Gi (so kubelet-reserved is 0)
//	system    usage 7 cores / 12Gi
//	podA      qosClass LS (koord-prod), requests 20 / 20Gi, Running,   usage 11 / 11Gi
//	podB      qosClass BE, koord-batch, no requests,        Running,   usage 10 / 10Gi
//	podC      no labels, Guaranteed 20 / 40Gi (→ LSR, prod), Pending,  usage 22 / 22Gi
//	podD      qosClass BE, koord-batch, no requests,        Succeeded, no metric
//	nodeUsage 7 + 11 + 10 + 22 = 50 cores; 12 + 11 + 10 + 22 = 55Gi
//
// High-priority (HP) pods are the running and pending pods that are not batch or free: podA and podC.
//
//	HPRequest    cpu 20 + 20 = 40;                 memory 20Gi + 40Gi = 60Gi
//	HPUsed       cpu 11 + 22 = 33;                 memory 11Gi + 22Gi = 33Gi
//	HPMaxUsedReq cpu max(20,11) + max(20,22) = 42; memory max(20,11) + max(40,22) = 60Gi
//	prod request (mid's Unallocated) = HPRequest (neither pod is mid)

// nrCaseLabel selects a node strategy of colocation-config in the worked examples.
const nrCaseLabel = "test.koord.dev/noderesource-case"

// nrGi is n GiB in bytes.
func nrGi(n int64) int64 { return n << 30 }

// nrOptions are manager options that run only the noderesource controller: the NodeMetrics are the
// test's to create, as the node agent's statuses are.
func nrOptions(t *testing.T) manager.Options {
	t.Helper()
	opts := testOptions(t)
	opts.Controllers = []string{manager.ControllerNodeResource}
	return opts
}

// nrSetColocationConfig creates or updates the slo-controller-config ConfigMap with colocation-config set to
// colocation (a JSON ColocationCfg), and deletes the ConfigMap when the test ends.
func nrSetColocationConfig(t *testing.T, colocation string) {
	t.Helper()
	ensureSystemNamespace(t)
	ctx := t.Context()
	key := client.ObjectKey{Namespace: configuration.ConfigNamespace, Name: configuration.SLOCtrlConfigMap}
	cm := &corev1.ConfigMap{}
	err := env.Client.Get(ctx, key, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Data:       map[string]string{configuration.ColocationConfigKey: colocation},
		}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatalf("create ConfigMap %s: %v", key, err)
		}
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
		})
	case err != nil:
		t.Fatalf("get ConfigMap %s: %v", key, err)
	default:
		// Left over by an earlier test, or this test's own: take it over.
		cm.Data = map[string]string{configuration.ColocationConfigKey: colocation}
		if err := env.Client.Update(ctx, cm); err != nil {
			t.Fatalf("update ConfigMap %s: %v", key, err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cm) })
	}
}

// nrCreateNamespace creates a namespace without colocation profiles for the test's pods.
func nrCreateNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "noderesource-"}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	// There is no namespace controller: the namespace stays Terminating, which is harmless with a unique name.
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })
	return ns.Name
}

// nrCreateBasePods creates podA..podD of the base fixture in ns, bound to node, with their phases set.
func nrCreateBasePods(t *testing.T, ns, node string) {
	t.Helper()
	res := func(cpu, memory string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	}
	// The pod validating webhook wants BE pods to name their (batch) priority.
	batch := map[string]string{extension.LabelPodQoS: "BE", extension.LabelPodPriorityClass: "koord-batch"}
	for _, p := range []struct {
		suffix string
		labels map[string]string
		res    corev1.ResourceRequirements
		phase  corev1.PodPhase
	}{
		{"a", map[string]string{extension.LabelPodQoS: "LS"}, corev1.ResourceRequirements{Requests: res("20", "20Gi")}, corev1.PodRunning},
		{"b", batch, corev1.ResourceRequirements{}, corev1.PodRunning},
		{"c", nil, corev1.ResourceRequirements{Requests: res("20", "40Gi"), Limits: res("20", "40Gi")}, corev1.PodPending},
		{"d", batch, corev1.ResourceRequirements{}, corev1.PodSucceeded},
	} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: node + "-" + p.suffix, Labels: p.labels},
			Spec: corev1.PodSpec{
				NodeName:   node,
				Containers: []corev1.Container{{Name: "main", Image: "pause", Resources: p.res}},
			},
		}
		if err := env.Client.Create(t.Context(), pod); err != nil {
			t.Fatalf("create pod %s: %v", pod.Name, err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)) })
		pod.Status.Phase = p.phase
		if err := env.Client.Status().Update(t.Context(), pod); err != nil {
			t.Fatalf("set phase of pod %s: %v", pod.Name, err)
		}
	}
}

// nrBaseNodeMetricStatus is the NodeMetric status of the base fixture for the pods nrCreateBasePods creates, as the
// node agent reports it.
func nrBaseNodeMetricStatus(ns, node string, updateTime time.Time) slov1alpha1.NodeMetricStatus {
	rm := func(cpu, memory string) slov1alpha1.ResourceMap {
		return slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}
	}
	return slov1alpha1.NodeMetricStatus{
		UpdateTime: ptr.To(metav1.NewTime(updateTime)),
		NodeMetric: &slov1alpha1.NodeMetricInfo{NodeUsage: rm("50", "55Gi"), SystemUsage: rm("7", "12Gi")},
		PodsMetric: []slov1alpha1.PodMetricInfo{
			{Namespace: ns, Name: node + "-a", PodUsage: rm("11", "11Gi"), Priority: "koord-prod", QoS: "LS"},
			{Namespace: ns, Name: node + "-b", PodUsage: rm("10", "10Gi"), Priority: "koord-batch", QoS: "BE"},
			{Namespace: ns, Name: node + "-c", PodUsage: rm("22", "22Gi"), Priority: "koord-prod", QoS: "LSR"},
		},
	}
}

// nrSetPodACPU sets the CPU usage of podA (the first pod metric) and keeps nodeUsage consistent with it.
func nrSetPodACPU(status *slov1alpha1.NodeMetricStatus, cores int64) {
	old := status.PodsMetric[0].PodUsage.ResourceList[corev1.ResourceCPU]
	status.PodsMetric[0].PodUsage.ResourceList[corev1.ResourceCPU] = *resource.NewQuantity(cores, resource.DecimalSI)
	usage := status.NodeMetric.NodeUsage.ResourceList[corev1.ResourceCPU]
	usage.Sub(old)
	usage.Add(*resource.NewQuantity(cores, resource.DecimalSI))
	status.NodeMetric.NodeUsage.ResourceList[corev1.ResourceCPU] = usage
}

// nrReportNodeMetric writes status into the NodeMetric of node through the status subresource, creating the
// NodeMetric first when it does not exist (the manager's nodemetric controller does that in a cluster; it does
// not run here).
func nrReportNodeMetric(t *testing.T, node string, status slov1alpha1.NodeMetricStatus) {
	t.Helper()
	ctx := t.Context()
	nm := &slov1alpha1.NodeMetric{}
	err := env.Client.Get(ctx, client.ObjectKey{Name: node}, nm)
	if apierrors.IsNotFound(err) {
		nm = &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: node}}
		if err := env.Client.Create(ctx, nm); err != nil {
			t.Fatalf("create NodeMetric %s: %v", node, err)
		}
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: node}})
		})
	} else if err != nil {
		t.Fatalf("get NodeMetric %s: %v", node, err)
	}
	nm.Status = status
	if err := env.Client.Status().Update(ctx, nm); err != nil {
		t.Fatalf("update status of NodeMetric %s: %v", node, err)
	}
}

// nrCreateNode creates a node of 100 cores and 120Gi (capacity = allocatable) with labels.
func nrCreateNode(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	list := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100"),
		corev1.ResourceMemory: resource.MustParse("120Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status:     corev1.NodeStatus{Capacity: list, Allocatable: list.DeepCopy()},
	}
	if err := env.Client.Create(t.Context(), node); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	if len(node.Status.Capacity) == 0 {
		// The apiserver dropped the status on create: write it as the kubelet would.
		node.Status = corev1.NodeStatus{Capacity: list, Allocatable: list.DeepCopy()}
		if err := env.Client.Status().Update(t.Context(), node); err != nil {
			t.Fatalf("set status of node %s: %v", name, err)
		}
	}
}

// nrSetupBaseNode creates the base fixture on a new node: pods, then the NodeMetric, then the node, so that the
// first calculation already sees every input (a first result from partial inputs could be kept by the update
// throttle).
func nrSetupBaseNode(t *testing.T, ns, node string, labels map[string]string, mutate func(*slov1alpha1.NodeMetricStatus)) slov1alpha1.NodeMetricStatus {
	t.Helper()
	nrCreateBasePods(t, ns, node)
	status := nrBaseNodeMetricStatus(ns, node, time.Now())
	if mutate != nil {
		mutate(&status)
	}
	nrReportNodeMetric(t, node, status)
	nrCreateNode(t, node, labels)
	return status
}

// nrColocationResources are the node's batch and mid resources (milli-cores for the cpu ones, bytes for the memory
// ones) in its capacity and its allocatable.
func nrColocationResources(node *corev1.Node) (capacity, allocatable map[corev1.ResourceName]int64) {
	pick := func(list corev1.ResourceList) map[corev1.ResourceName]int64 {
		out := map[corev1.ResourceName]int64{}
		for _, name := range []corev1.ResourceName{extension.BatchCPU, extension.BatchMemory, extension.MidCPU, extension.MidMemory} {
			if v, ok := list[name]; ok {
				out[name] = v.Value()
			}
		}
		return out
	}
	return pick(node.Status.Capacity), pick(node.Status.Allocatable)
}

// nrEventuallyDiff polls cond like eventually and, when it never returns an empty diff, fails with the last one.
func nrEventuallyDiff(t *testing.T, msg string, cond func(ctx context.Context) (string, error)) {
	t.Helper()
	last := "(never evaluated)"
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		diff, err := cond(ctx)
		if err != nil {
			return false, err
		}
		last = diff
		return diff == "", nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last difference (-want +got):\n%s", msg, err, last)
	}
}

// nrWaitForResources waits until both the capacity and the allocatable of node hold exactly want among the batch
// and mid resources, and returns the node. koord-manager writes the explanation annotation before the values, so
// the node returned also carries the explanation of these values.
func nrWaitForResources(t *testing.T, name string, want map[corev1.ResourceName]int64) *corev1.Node {
	t.Helper()
	node := &corev1.Node{}
	nrEventuallyDiff(t, "node "+name+" did not get the expected batch and mid resources", func(ctx context.Context) (string, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return "", err
		}
		capacity, allocatable := nrColocationResources(node)
		return cmp.Diff(want, capacity, cmpopts.EquateEmpty()) + cmp.Diff(want, allocatable, cmpopts.EquateEmpty()), nil
	})
	return node
}

// nrBatch is the resources of a node with batch-cpu and batch-memory, and mid-cpu and mid-memory 0: without
// prodReclaimableMetric nothing is reclaimable (as in Koordinator) and midUnallocatedPercent is 0 by default.
func nrBatch(cpu, memory int64) map[corev1.ResourceName]int64 {
	return map[corev1.ResourceName]int64{extension.BatchCPU: cpu, extension.BatchMemory: memory, extension.MidCPU: 0, extension.MidMemory: 0}
}

// nrExplanation parses the colocation explanation annotation of node.
func nrExplanation(t *testing.T, node *corev1.Node) *extension.ColocationExplanation {
	t.Helper()
	e, err := extension.GetColocationExplanation(node.Annotations)
	if err != nil {
		t.Fatalf("explanation annotation of node %s: %v", node.Name, err)
	}
	if e == nil {
		t.Fatalf("node %s has no %s annotation", node.Name, extension.AnnotationColocationExplanation)
	}
	return e
}

// nrMetricValue returns the value of the gauge or counter name with exactly the given labels in
// controller-runtime's registry, where koord-manager (in this process) records its metrics.
func nrMetricValue(t *testing.T, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
					continue metrics
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// nrRewrites is the number of writes koord-manager made because a node's values and explanation did not agree.
func nrRewrites(t *testing.T) float64 {
	t.Helper()
	var sum float64
	for _, reason := range []string{"NoLastUpdate", "ExplanationOutdated"} {
		v, _ := nrMetricValue(t, "koord_manager_noderesource_node_updates_total", map[string]string{"reason": reason})
		sum += v
	}
	return sum
}

// nrQuantityComparer compares quantities by value.
var nrQuantityComparer = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// nrQ parses a quantity.
func nrQ(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

// nrClients returns clientsets of the test apiserver, for koordctl explain.
func nrClients(t *testing.T) (kubernetes.Interface, versioned.Interface) {
	t.Helper()
	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	koord, err := versioned.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return kube, koord
}

// TestNodeResourceWorkedExamples checks each calculate policy, the batch threshold caps and both mid modes on
// the base fixture; every expected number is worked out by hand from the spec's formulas (§3.1, §3.2). Each case
// is a node strategy of one colocation-config selected by a node label, so all cases run under one manager.
func TestNodeResourceWorkedExamples(t *testing.T) {
	suffix := utilrand.String(5)
	tests := []struct {
		name string
		// strategy is the node strategy (JSON fields of ColocationStrategy) on top of the cluster strategy
		// {enable: true, cpuReclaimThresholdPercent: 65, memoryReclaimThresholdPercent: 65}.
		strategy string
		// prodReclaimable, when set, is the NodeMetric's prodReclaimableMetric (cpu, memory).
		prodReclaimable []string
		want            map[corev1.ResourceName]int64
		// wantExplanation, when set, is the explanation annotation expected (update time and midDegraded aside).
		wantExplanation *extension.ColocationExplanation
	}{{
		// usage: Batch = Capacity − SafetyMargin − SystemUsed − HPUsed
		//   SafetyMargin = 100 × (100−65)% = 35;  120Gi × 35% = 42Gi
		//   SystemUsed   = max(system usage 7 / 12Gi, reserved 0) = 7 / 12Gi
		//   cpu    = 100 − 35 − 7 − 33       = 25 cores → 25000
		//   memory = 120 − 42 − 12 − 33 (Gi) = 33Gi
		// No prodReclaimableMetric: nothing reclaimable, as in Koordinator; with midUnallocatedPercent 0, mid is 0
		// (NodeUnused 50 / 65Gi and Unallocated 53 / 48Gi as in the "mid" case).
		name:     "usage",
		strategy: `{"cpuCalculatePolicy":"usage","memoryCalculatePolicy":"usage"}`,
		want:     nrBatch(25000, nrGi(33)),
		wantExplanation: &extension.ColocationExplanation{
			Policy: extension.ColocationPolicy{CPU: "usage", Memory: "usage"},
			CPU: extension.ColocationResourceExplanation{
				Capacity: nrQ("100"), ReclaimPercent: ptr.To[int64](65), SafetyMargin: nrQ("35"), NodeReserved: nrQ("0"),
				SystemUsed: nrQ("7"), HPRequest: nrQ("40"), HPUsed: nrQ("33"), HPMaxUsedReq: nrQ("42"), Batch: nrQ("25"),
				ProdReclaimable: nrQ("0"), NodeUnused: nrQ("50"), Unallocated: nrQ("53"), MidUnallocatedPercent: ptr.To[int64](0), MidThresholdCap: nrQ("100"), Mid: nrQ("0"),
			},
			Memory: extension.ColocationResourceExplanation{
				Capacity: nrQ("120Gi"), ReclaimPercent: ptr.To[int64](65), SafetyMargin: nrQ("42Gi"), NodeReserved: nrQ("0"),
				SystemUsed: nrQ("12Gi"), HPRequest: nrQ("60Gi"), HPUsed: nrQ("33Gi"), HPMaxUsedReq: nrQ("60Gi"), Batch: nrQ("33Gi"),
				ProdReclaimable: nrQ("0"), NodeUnused: nrQ("65Gi"), Unallocated: nrQ("48Gi"), MidUnallocatedPercent: ptr.To[int64](0), MidThresholdCap: nrQ("120Gi"), Mid: nrQ("0"),
			},
		},
	}, {
		// cpu maxUsageRequest with reclaim 70: margin 100 × 30% = 30; 100 − 30 − 7 − HPMaxUsedReq 42 = 21 → 21000
		// memory request with reclaim 80: margin 120Gi × 20% = 24Gi;
		//   Batch = Capacity − SafetyMargin − NodeReserved − HPRequest = 120 − 24 − 0 − 60 = 36Gi
		name:     "request",
		strategy: `{"cpuReclaimThresholdPercent":70,"memoryReclaimThresholdPercent":80,"cpuCalculatePolicy":"maxUsageRequest","memoryCalculatePolicy":"request"}`,
		want:     nrBatch(21000, nrGi(36)),
	}, {
		// maxUsageRequest: Batch = Capacity − SafetyMargin − SystemUsed − HPMaxUsedReq
		//   cpu    = 100 − 35 − 7 − 42       = 16 → 16000
		//   memory = 120 − 42 − 12 − 60 (Gi) = 6Gi
		name:     "maxusagerequest",
		strategy: `{"cpuCalculatePolicy":"maxUsageRequest","memoryCalculatePolicy":"maxUsageRequest"}`,
		want:     nrBatch(16000, nrGi(6)),
	}, {
		// usage (25 / 33Gi as above), capped at Capacity × batchThresholdPercent:
		//   cpu    min(25, 100 × 20%)     = 20 → 20000
		//   memory min(33Gi, 120Gi × 25%) = 30Gi
		name:     "threshold",
		strategy: `{"batchCPUThresholdPercent":20,"batchMemoryThresholdPercent":25}`,
		want:     nrBatch(20000, nrGi(30)),
	}, {
		// Batch as in usage: 25000 / 33Gi. Mid, default mode, prodReclaimable 5 / 8Gi, midUnallocatedPercent 50,
		// midCPUThresholdPercent 30:
		//   NodeUnused  = Capacity − nodeUsage = 100 − 50 = 50;  120 − 55 = 65Gi
		//   Unallocated = max(Capacity − max(reserved 0, system 7 / 12Gi) − prod requests, 0)
		//               = 100 − 7 − 40 = 53;  120 − 12 − 60 = 48Gi
		//   Mid = min(min(ProdReclaimable, NodeUnused) + Unallocated × 50%, Capacity × midThresholdPercent)
		//   cpu    = min(min(5, 50) + 26.5, 100 × 30%)        = min(31.5, 30) = 30 → 30000
		//   memory = min(min(8, 65) + 24, 120 × 100%) (Gi)    = 32Gi
		name:            "mid",
		strategy:        `{"midUnallocatedPercent":50,"midCPUThresholdPercent":30}`,
		prodReclaimable: []string{"5", "8Gi"},
		want: map[corev1.ResourceName]int64{
			extension.BatchCPU: 25000, extension.BatchMemory: nrGi(33), extension.MidCPU: 30000, extension.MidMemory: nrGi(32),
		},
		wantExplanation: &extension.ColocationExplanation{
			Policy: extension.ColocationPolicy{CPU: "usage", Memory: "usage"},
			CPU: extension.ColocationResourceExplanation{
				Capacity: nrQ("100"), ReclaimPercent: ptr.To[int64](65), SafetyMargin: nrQ("35"), NodeReserved: nrQ("0"),
				SystemUsed: nrQ("7"), HPRequest: nrQ("40"), HPUsed: nrQ("33"), HPMaxUsedReq: nrQ("42"), Batch: nrQ("25"),
				ProdReclaimable: nrQ("5"), NodeUnused: nrQ("50"), Unallocated: nrQ("53"), MidUnallocatedPercent: ptr.To[int64](50), MidThresholdCap: nrQ("30"), Mid: nrQ("30"),
			},
			Memory: extension.ColocationResourceExplanation{
				Capacity: nrQ("120Gi"), ReclaimPercent: ptr.To[int64](65), SafetyMargin: nrQ("42Gi"), NodeReserved: nrQ("0"),
				SystemUsed: nrQ("12Gi"), HPRequest: nrQ("60Gi"), HPUsed: nrQ("33Gi"), HPMaxUsedReq: nrQ("60Gi"), Batch: nrQ("33Gi"),
				ProdReclaimable: nrQ("8Gi"), NodeUnused: nrQ("65Gi"), Unallocated: nrQ("48Gi"), MidUnallocatedPercent: ptr.To[int64](50), MidThresholdCap: nrQ("120Gi"), Mid: nrQ("32Gi"),
			},
		},
	}, {
		// Batch as in usage: 25000 / 33Gi. Mid, static mode (no prodReclaimableMetric needed):
		//   Mid = min(Capacity × midStaticReservedPercent, Capacity × midThresholdPercent)
		//   cpu    = min(100 × 20%, 100 × 15%)     = 15 → 15000
		//   memory = min(120Gi × 10%, 120Gi × 100%) = 12Gi
		name:     "midstatic",
		strategy: `{"midReclaimMode":"static","midStaticCPUReservedPercent":20,"midStaticMemoryReservedPercent":10,"midCPUThresholdPercent":15}`,
		want: map[corev1.ResourceName]int64{
			extension.BatchCPU: 25000, extension.BatchMemory: nrGi(33), extension.MidCPU: 15000, extension.MidMemory: nrGi(12),
		},
	}}

	nodeConfigs := make([]string, len(tests))
	for i, tc := range tests {
		nodeConfigs[i] = fmt.Sprintf(`{"name":%q,"nodeSelector":{"matchLabels":{%q:%q}},%s`, tc.name, nrCaseLabel, tc.name, tc.strategy[1:])
	}
	nrSetColocationConfig(t, `{"enable":true,"cpuReclaimThresholdPercent":65,"memoryReclaimThresholdPercent":65,"nodeConfigs":[`+
		strings.Join(nodeConfigs, ",")+`]}`)
	startManager(t, nrOptions(t))
	ns := nrCreateNamespace(t)
	rewrites := nrRewrites(t)

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "nr-" + tc.name + "-" + suffix
			nrSetupBaseNode(t, ns, name, map[string]string{nrCaseLabel: tc.name}, func(s *slov1alpha1.NodeMetricStatus) {
				if tc.prodReclaimable != nil {
					s.ProdReclaimableMetric = &slov1alpha1.ReclaimableMetric{Resource: slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse(tc.prodReclaimable[0]), corev1.ResourceMemory: resource.MustParse(tc.prodReclaimable[1]),
					}}}
				}
			})
			node := nrWaitForResources(t, name, tc.want)
			// koordctl explain node evaluates each formula from the terms koord-manager recorded: every result
			// it wrote is recomputed and agrees with it and with the node.
			kube, koord := nrClients(t)
			x, err := (&explain.Explainer{Kube: kube, Koord: koord}).Node(t.Context(), name)
			if err != nil {
				t.Fatal(err)
			}
			for _, term := range x.Terms {
				if !term.Consistent || (term.Written != "" && term.Computed != term.Written) {
					t.Errorf("koordctl explain node: %s computed %q, written %q, node %q: %s", term.Resource, term.Computed, term.Written, term.Allocatable, term.Note)
				}
			}
			if tc.wantExplanation == nil {
				return
			}
			got := nrExplanation(t, node)
			if diff := cmp.Diff(tc.wantExplanation, got, nrQuantityComparer,
				cmpopts.IgnoreFields(extension.ColocationExplanation{}, "UpdateTime", "MidDegraded")); diff != "" {
				t.Errorf("explanation (-want +got):\n%s", diff)
			}
			if _, hasMid := tc.want[extension.MidCPU]; hasMid != (got.MidDegraded == "") {
				t.Errorf("explanation midDegraded = %q with mid resources %v", got.MidDegraded, hasMid)
			}
			// The same inputs are exported as gauges (cpu in cores, memory in bytes).
			for _, g := range []struct {
				resource, input string
				want            float64
			}{{"cpu", "hp_used", 33}, {"cpu", "system_used", 7}, {"memory", "safety_margin", float64(nrGi(42))}, {"memory", "hp_request", float64(nrGi(60))}} {
				v, ok := nrMetricValue(t, "koord_manager_noderesource_input", map[string]string{"node": name, "resource": g.resource, "input": g.input})
				if !ok || v != g.want {
					t.Errorf("koord_manager_noderesource_input{resource=%q,input=%q} = %v (present %v), want %v", g.resource, g.input, v, ok, g.want)
				}
			}
		})
	}
	// Each result was written once. A second write for the same values (NoLastUpdate: the node has values but no
	// explanation; ExplanationOutdated: the explanation does not match the values) would mean that the
	// controller saw, and reacted to, a half-written node.
	if got := nrRewrites(t); got != rewrites {
		t.Errorf("the controller rewrote unchanged results %v times; every node was written once", got-rewrites)
	}
}

// TestNodeResourceNodeLabelOverride checks that the reclaim-ratio node labels override colocation-config, and
// that changing them on a running node changes its batch resources.
func TestNodeResourceNodeLabelOverride(t *testing.T) {
	nrSetColocationConfig(t, `{"enable":true,"cpuReclaimThresholdPercent":65,"memoryReclaimThresholdPercent":65}`)
	startManager(t, nrOptions(t))
	ns := nrCreateNamespace(t)
	name := "nr-labels-" + utilrand.String(5)

	// Labels cpu 0.5, memory 0.75 (usage policy):
	//   cpu    margin 100 × 50% = 50;      100 − 50 − 7 − 33 = 10 → 10000
	//   memory margin 120Gi × 25% = 30Gi;  120 − 30 − 12 − 33 = 45Gi
	nrSetupBaseNode(t, ns, name, map[string]string{extension.LabelCPUReclaimRatio: "0.5", extension.LabelMemoryReclaimRatio: "0.75"}, nil)
	nrWaitForResources(t, name, nrBatch(10000, nrGi(45)))

	relabel := func(labels map[string]string) {
		t.Helper()
		node := &corev1.Node{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, node); err != nil {
			t.Fatalf("get node: %v", err)
		}
		patched := node.DeepCopy()
		patched.Labels = labels
		if err := env.Client.Patch(t.Context(), patched, client.MergeFrom(node)); err != nil {
			t.Fatalf("relabel node: %v", err)
		}
	}
	// cpu 0.8: margin 20; 100 − 20 − 7 − 33 = 40 → 40000 (a change of 300 %, far above the diff threshold).
	relabel(map[string]string{extension.LabelCPUReclaimRatio: "0.8", extension.LabelMemoryReclaimRatio: "0.75"})
	nrWaitForResources(t, name, nrBatch(40000, nrGi(45)))
	// Without labels colocation-config's 65 / 65 applies again: 25000 / 33Gi.
	relabel(nil)
	nrWaitForResources(t, name, nrBatch(25000, nrGi(33)))
}

// TestNodeResourceDegrade checks the degrade rule with degradeTimeMinutes 1: a stale NodeMetric removes the batch
// resources at once, a fresh one brings them back, and a NodeMetric turning stale later removes them at its
// deadline without any further event.
func TestNodeResourceDegrade(t *testing.T) {
	nrSetColocationConfig(t, `{"enable":true,"cpuReclaimThresholdPercent":65,"memoryReclaimThresholdPercent":65,"degradeTimeMinutes":1}`)
	startManager(t, nrOptions(t))
	ns := nrCreateNamespace(t)
	name := "nr-degrade-" + utilrand.String(5)

	// Usage policy on the base fixture: 25000 / 33Gi.
	base := nrBatch(25000, nrGi(33))
	status := nrSetupBaseNode(t, ns, name, nil, nil)
	nrWaitForResources(t, name, base)

	// The agent's last report is 2 minutes old: older than degradeTimeMinutes, the resources go.
	status.UpdateTime = ptr.To(metav1.NewTime(time.Now().Add(-2 * time.Minute)))
	nrReportNodeMetric(t, name, status)
	node := nrWaitForResources(t, name, nil)
	if e := nrExplanation(t, node); !strings.Contains(e.Degraded, "degradeTimeMinutes") || e.CPU.Batch != nil || e.Memory.Batch != nil {
		t.Errorf("explanation of the degraded node: degraded %q, batch cpu %v memory %v; want a degraded message naming degradeTimeMinutes and no batch",
			e.Degraded, e.CPU.Batch, e.Memory.Batch)
	}

	// A fresh report brings them back.
	status.UpdateTime = ptr.To(metav1.Now())
	nrReportNodeMetric(t, name, status)
	node = nrWaitForResources(t, name, base)
	if e := nrExplanation(t, node); e.Degraded != "" {
		t.Errorf("explanation after a fresh NodeMetric still says degraded: %q", e.Degraded)
	}

	// A report 50 s old is fresh for 10 more seconds. Nothing happens after it, so the removal can only come from
	// the controller's requeue at the deadline, and it must not come before.
	updateTime := time.Now().Add(-50 * time.Second).Truncate(time.Second)
	status.UpdateTime = ptr.To(metav1.NewTime(updateTime))
	nrReportNodeMetric(t, name, status)
	deadline := updateTime.Add(time.Minute)
	eventually(t, "batch resources were not removed when the NodeMetric turned stale", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return false, err
		}
		_, gone := node.Status.Allocatable[extension.BatchCPU]
		return !gone, nil
	})
	if now := time.Now(); now.Before(deadline) {
		t.Errorf("batch resources were removed at %s, before the NodeMetric turned stale at %s", now, deadline)
	}
	nrWaitForResources(t, name, nil)
}

// TestNodeResourceThrottle checks the update throttle: with resourceDiffThreshold 0.1 and a long
// updateTimeThresholdSeconds, a result that moves by less than 10 % is computed but not written; one that moves
// by more is.
func TestNodeResourceThrottle(t *testing.T) {
	nrSetColocationConfig(t, `{"enable":true,"cpuReclaimThresholdPercent":65,"memoryReclaimThresholdPercent":65,`+
		`"resourceDiffThreshold":0.1,"updateTimeThresholdSeconds":3600}`)
	startManager(t, nrOptions(t))
	ns := nrCreateNamespace(t)
	name := "nr-throttle-" + utilrand.String(5)
	ctx := t.Context()

	status := nrSetupBaseNode(t, ns, name, nil, nil)
	before := nrWaitForResources(t, name, nrBatch(25000, nrGi(33)))

	// podA uses 12 cores instead of 11: HPUsed 34, batch-cpu 100 − 35 − 7 − 34 = 24 → 24000.
	// |24000 − 25000| = 1000 ≤ 25000 × 0.1 = 2500: throttled, the node keeps 25000.
	throttledLabels := map[string]string{"reason": "Throttled"}
	throttled, _ := nrMetricValue(t, "koord_manager_noderesource_node_update_skips_total", throttledLabels)
	nrSetPodACPU(&status, 12)
	status.UpdateTime = ptr.To(metav1.Now())
	nrReportNodeMetric(t, name, status)
	// The controller processed the new metric: its gauges show the new input and result, and it counted a
	// throttled skip (after its decision).
	eventually(t, "the controller did not process the new NodeMetric", func(context.Context) (bool, error) {
		hpUsed, _ := nrMetricValue(t, "koord_manager_noderesource_input", map[string]string{"node": name, "resource": "cpu", "input": "hp_used"})
		batch, _ := nrMetricValue(t, "koord_manager_noderesource_batch_allocatable", map[string]string{"node": name, "resource": "cpu"})
		skips, _ := nrMetricValue(t, "koord_manager_noderesource_node_update_skips_total", throttledLabels)
		return hpUsed == 34 && batch == 24 && skips > throttled, nil
	})
	after := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, after); err != nil {
		t.Fatalf("get node: %v", err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		capacity, allocatable := nrColocationResources(after)
		t.Errorf("node was written for a change below resourceDiffThreshold: resourceVersion %s → %s, capacity %v, allocatable %v",
			before.ResourceVersion, after.ResourceVersion, capacity, allocatable)
	}

	// podA uses 16 cores: HPUsed 38, batch-cpu 100 − 35 − 7 − 38 = 20 → 20000.
	// |20000 − 25000| = 5000 > 2500: written. Memory is unchanged at 33Gi.
	nrSetPodACPU(&status, 16)
	status.UpdateTime = ptr.To(metav1.Now())
	nrReportNodeMetric(t, name, status)
	nrWaitForResources(t, name, nrBatch(20000, nrGi(33)))
}

// TestNodeResourceRestartIdempotent checks that a new manager writes nothing to a node whose inputs did not
// change while it was down, while it does update a node whose inputs did.
func TestNodeResourceRestartIdempotent(t *testing.T) {
	nrSetColocationConfig(t, `{"enable":true,"cpuReclaimThresholdPercent":65,"memoryReclaimThresholdPercent":65}`)
	rm := startManager(t, nrOptions(t))
	ns := nrCreateNamespace(t)
	suffix := utilrand.String(5)
	// Named so that "a" sorts first: the new manager's single worker takes the nodes of its initial list in
	// that order, so once "b" is updated, "a" has been reconciled too.
	unchanged, changed := "nr-restart-a-"+suffix, "nr-restart-b-"+suffix
	ctx := t.Context()

	base := nrBatch(25000, nrGi(33))
	nrSetupBaseNode(t, ns, unchanged, nil, nil)
	changedStatus := nrSetupBaseNode(t, ns, changed, nil, nil)
	before := nrWaitForResources(t, unchanged, base)
	nrWaitForResources(t, changed, base)
	// Read the first node's version once both nodes have their resources.
	if err := env.Client.Get(ctx, client.ObjectKey{Name: unchanged}, before); err != nil {
		t.Fatalf("get node: %v", err)
	}

	rm.stop(t)
	unchangedSkips, _ := nrMetricValue(t, "koord_manager_noderesource_node_update_skips_total", map[string]string{"reason": "Unchanged"})
	// While the manager is down the agent reports more usage on the second node: podA 16 cores,
	// batch-cpu 100 − 35 − 7 − 38 = 20 → 20000 (a 20 % change).
	nrSetPodACPU(&changedStatus, 16)
	changedStatus.UpdateTime = ptr.To(metav1.Now())
	nrReportNodeMetric(t, changed, changedStatus)

	startManager(t, nrOptions(t))
	nrWaitForResources(t, changed, nrBatch(20000, nrGi(33)))
	eventually(t, "the new manager did not skip any node as unchanged", func(context.Context) (bool, error) {
		v, _ := nrMetricValue(t, "koord_manager_noderesource_node_update_skips_total", map[string]string{"reason": "Unchanged"})
		return v > unchangedSkips, nil
	})

	after := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: unchanged}, after); err != nil {
		t.Fatalf("get node: %v", err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the restarted manager wrote node %s whose inputs did not change: resourceVersion %s → %s\nannotations before %v\nafter %v",
			unchanged, before.ResourceVersion, after.ResourceVersion, before.Annotations, after.Annotations)
	}
	capacity, allocatable := nrColocationResources(after)
	if diff := cmp.Diff(base, capacity); diff != "" {
		t.Errorf("capacity of %s (-want +got):\n%s", unchanged, diff)
	}
	if diff := cmp.Diff(base, allocatable); diff != "" {
		t.Errorf("allocatable of %s (-want +got):\n%s", unchanged, diff)
	}
}

// TestNodeResourceRestartWithBrokenConfig checks that a manager started while the ConfigMap does not validate
// writes nothing, rather than the defaults (colocation off, which would remove every node's batch resources), and
// catches up once the ConfigMap is fixed.
func TestNodeResourceRestartWithBrokenConfig(t *testing.T) {
	const valid = `{"enable":true,"cpuReclaimThresholdPercent":65,"memoryReclaimThresholdPercent":65}`
	nrSetColocationConfig(t, valid)
	rm := startManager(t, nrOptions(t))
	ns := nrCreateNamespace(t)
	suffix := utilrand.String(5)
	existing, added := "nr-broken-a-"+suffix, "nr-broken-b-"+suffix
	ctx := t.Context()

	base := nrBatch(25000, nrGi(33))
	nrSetupBaseNode(t, ns, existing, nil, nil)
	before := nrWaitForResources(t, existing, base)
	if err := env.Client.Get(ctx, client.ObjectKey{Name: existing}, before); err != nil {
		t.Fatalf("get node: %v", err)
	}

	// While the manager is down (and with it the ConfigMap webhook) the ConfigMap is broken.
	rm.stop(t)
	nrSetColocationConfig(t, `{"enable":true,"cpuReclaimThresholdPercent":-5}`)
	rejected, _ := nrMetricValue(t, "koord_manager_slo_config_rejected_total", nil)
	reconciles, _ := nrMetricValue(t, "controller_runtime_reconcile_total", map[string]string{"controller": "noderesource", "result": "success"})

	startManager(t, nrOptions(t))
	nrSetupBaseNode(t, ns, added, nil, nil)
	// The loader rejected the ConfigMap, and the controller has run for both nodes.
	eventually(t, "the broken ConfigMap was not rejected", func(context.Context) (bool, error) {
		v, _ := nrMetricValue(t, "koord_manager_slo_config_rejected_total", nil)
		return v > rejected, nil
	})
	eventually(t, "the noderesource controller did not run", func(context.Context) (bool, error) {
		v, _ := nrMetricValue(t, "controller_runtime_reconcile_total", map[string]string{"controller": "noderesource", "result": "success"})
		return v >= reconciles+2, nil
	})
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: existing}, node); err != nil {
		t.Fatalf("get node: %v", err)
	}
	if node.ResourceVersion != before.ResourceVersion {
		capacity, allocatable := nrColocationResources(node)
		t.Fatalf("a manager without a valid configuration wrote node %s: resourceVersion %s → %s, capacity %v, allocatable %v",
			existing, before.ResourceVersion, node.ResourceVersion, capacity, allocatable)
	}

	// Fixed: the new node gets its resources, the existing one is left as it is.
	nrSetColocationConfig(t, valid)
	nrWaitForResources(t, added, base)
	if err := env.Client.Get(ctx, client.ObjectKey{Name: existing}, node); err != nil {
		t.Fatalf("get node: %v", err)
	}
	if node.ResourceVersion != before.ResourceVersion {
		t.Errorf("node %s was written although its inputs did not change: resourceVersion %s → %s",
			existing, before.ResourceVersion, node.ResourceVersion)
	}
}

// TestNodeResourceColocationDisabled checks that turning colocation off in colocation-config removes the batch
// and mid resources from nodes that have them, also from a node whose node config says enable: true: the
// cluster's enable is the master switch.
func TestNodeResourceColocationDisabled(t *testing.T) {
	const enabled = `{"enable":true,"cpuReclaimThresholdPercent":65,"memoryReclaimThresholdPercent":65,` +
		`"midReclaimMode":"static","midStaticCPUReservedPercent":10,"midStaticMemoryReservedPercent":10,` +
		`"nodeConfigs":[{"name":"force-on","nodeSelector":{"matchLabels":{"` + nrCaseLabel + `":"force-on"}},"enable":true}]}`
	nrSetColocationConfig(t, enabled)
	startManager(t, nrOptions(t))
	ns := nrCreateNamespace(t)
	name := "nr-disabled-" + utilrand.String(5)

	// Batch 25000 / 33Gi (usage); mid static 100 × 10% = 10 → 10000, 120Gi × 10% = 12Gi.
	nrSetupBaseNode(t, ns, name, map[string]string{nrCaseLabel: "force-on"}, nil)
	nrWaitForResources(t, name, map[corev1.ResourceName]int64{
		extension.BatchCPU: 25000, extension.BatchMemory: nrGi(33), extension.MidCPU: 10000, extension.MidMemory: nrGi(12),
	})

	// The edit goes through the ConfigMap validating webhook.
	var cfg map[string]any
	if err := json.Unmarshal([]byte(enabled), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["enable"] = false
	disabled, _ := json.Marshal(cfg)
	nrSetColocationConfig(t, string(disabled))
	node := nrWaitForResources(t, name, nil)
	if e := nrExplanation(t, node); !strings.Contains(e.Degraded, "disabled") || e.CPU.Batch != nil || e.CPU.Mid != nil {
		t.Errorf("explanation after colocation was disabled: degraded %q, cpu batch %v mid %v; want a message saying disabled and no results",
			e.Degraded, e.CPU.Batch, e.CPU.Mid)
	}
}
