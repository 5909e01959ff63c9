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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/test/e2e/localcluster"
)

const (
	// namespace holds the tests' pods.
	namespace = metav1.NamespaceDefault
	// pollInterval is how often the tests look again while they wait for the loop.
	pollInterval = 250 * time.Millisecond
	// e2eLabel marks every pod the tests create.
	e2eLabel = "koord.dev/e2e"
)

// eventually calls cond every pollInterval until it returns true, and fails the test when timeout passes first
// (localcluster.Eventually).
func eventually(ctx context.Context, t *testing.T, timeout time.Duration, what string, cond func(context.Context) (bool, string)) {
	t.Helper()
	localcluster.Eventually(ctx, t, pollInterval, timeout, what, cond)
}

// newPod returns a pod of the tests with one container requesting cpu and memory (no limits), changed by opts.
func newPod(name, cpu, memory string, opts ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: namespace,
			Labels:    map[string]string{e2eLabel: "true"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse(cpu),
					corev1.ResourceMemory: resource.MustParse(memory),
				}},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	for _, o := range opts {
		o(pod)
	}
	return pod
}

// withLS makes the pod latency-sensitive (Koordinator QoS class LS).
func withLS(pod *corev1.Pod) { pod.Labels[extension.LabelPodQoS] = string(extension.QoSLS) }

// onNode binds the pod to node directly, past any scheduler.
func onNode(node string) func(*corev1.Pod) {
	return func(pod *corev1.Pod) { pod.Spec.NodeName = node }
}

// byKoordScheduler hands the pod to koord-scheduler.
func byKoordScheduler(pod *corev1.Pod) { pod.Spec.SchedulerName = "koord-scheduler" }

// withCPUUsage makes the simulated agent see the pod use cpu cores, constantly.
func withCPUUsage(cpu string) func(*corev1.Pod) {
	return func(pod *corev1.Pod) {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations["sim.koord.dev/usage"] = fmt.Sprintf(`{"cpu": {"type": "constant", "value": %q}}`, cpu)
	}
}

// createPods creates pods and deletes them when the test ends.
func createPods(ctx context.Context, t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	for _, pod := range pods {
		if _, err := env.kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", pod.Name, err)
		}
		t.Cleanup(func() { deletePod(context.WithoutCancel(ctx), t, pod.Name) })
	}
}

// deletePod deletes the pod at once (no grace period: a pod on a node KWOK no longer manages would otherwise
// stay terminating).
func deletePod(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	err := env.kube.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete pod %s: %v", name, err)
	}
}

// waitRunning waits until every named pod is Running and returns them.
func waitRunning(ctx context.Context, t *testing.T, timeout time.Duration, names ...string) map[string]*corev1.Pod {
	t.Helper()
	got := map[string]*corev1.Pod{}
	eventually(ctx, t, timeout, fmt.Sprintf("pods %v Running", names), func(ctx context.Context) (bool, string) {
		for _, name := range names {
			pod, err := env.kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if pod.Status.Phase != corev1.PodRunning {
				return false, fmt.Sprintf("pod %s on node %q is %s %v", name, pod.Spec.NodeName, pod.Status.Phase, pod.Status.Conditions)
			}
			got[name] = pod
		}
		return true, ""
	})
	return got
}

// nodeInputs are what the batch formula takes from a node, its NodeMetric and its pods, in milli-cores for cpu
// and bytes for memory.
type nodeInputs struct {
	capacity, allocatable, systemUsage, hpUsed int64
}

// batchInputs returns the inputs of batch-cpu and batch-memory under the usage policy (docs/manager.md, "Batch
// and mid resources"): capacity, allocatable and the NodeMetric's system usage, and HPUsed: the reported usage
// of every Running or Pending pod on the node that is neither koord-batch nor koord-free (its request while it
// has no metric yet; an LSE pod counts its CPU request), plus the usage of reported pods that match no such pod
// and are not koord-batch or koord-free.
func batchInputs(node *corev1.Node, nm *slov1alpha1.NodeMetric, pods []corev1.Pod) (cpu, memory nodeInputs) {
	cpu.capacity = node.Status.Capacity.Cpu().MilliValue()
	cpu.allocatable = node.Status.Allocatable.Cpu().MilliValue()
	memory.capacity = node.Status.Capacity.Memory().Value()
	memory.allocatable = node.Status.Allocatable.Memory().Value()
	cpu.systemUsage = nm.Status.NodeMetric.SystemUsage.ResourceList.Cpu().MilliValue()
	memory.systemUsage = nm.Status.NodeMetric.SystemUsage.ResourceList.Memory().Value()

	lowPriority := func(pc extension.PriorityClass) bool {
		return pc == extension.PriorityBatch || pc == extension.PriorityFree
	}
	reported := map[string]*slov1alpha1.PodMetricInfo{}
	for i := range nm.Status.PodsMetric {
		m := &nm.Status.PodsMetric[i]
		reported[m.Namespace+"/"+m.Name] = m
	}
	for i := range pods {
		pod := &pods[i]
		if pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodPending {
			continue
		}
		key := pod.Namespace + "/" + pod.Name
		m, ok := reported[key]
		delete(reported, key)
		if lowPriority(extension.GetPodPriorityClassWithDefault(pod)) {
			continue
		}
		req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		if !ok {
			cpu.hpUsed += req.Cpu().MilliValue()
			memory.hpUsed += req.Memory().Value()
			continue
		}
		if extension.GetPodQoSClassRaw(pod) == extension.QoSLSE {
			cpu.hpUsed += req.Cpu().MilliValue()
		} else {
			cpu.hpUsed += m.PodUsage.ResourceList.Cpu().MilliValue()
		}
		memory.hpUsed += m.PodUsage.ResourceList.Memory().Value()
	}
	for _, m := range reported {
		if lowPriority(extension.PriorityClass(m.Priority)) {
			continue
		}
		cpu.hpUsed += m.PodUsage.ResourceList.Cpu().MilliValue()
		memory.hpUsed += m.PodUsage.ResourceList.Memory().Value()
	}
	return cpu, memory
}

// batchUsagePolicy is the batch formula of the usage policy, without a batch threshold percent:
// capacity − capacity × (100 − reclaimPercent)% − max(systemUsed, capacity − allocatable) − hpUsed, at least 0.
// systemUsed is the system usage, or the explanation's systemUsed (which already is that maximum).
func batchUsagePolicy(in nodeInputs, reclaimPercent int64) int64 {
	safetyMargin := in.capacity * (100 - reclaimPercent) / 100
	systemUsed := max(in.systemUsage, in.capacity-in.allocatable, 0)
	return max(in.capacity-safetyMargin-systemUsed-in.hpUsed, 0)
}

// podsOn lists the pods bound to node.
func podsOn(ctx context.Context, node string) ([]corev1.Pod, error) {
	list, err := env.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// batchOf returns the node's batch-cpu (milli-cores) and batch-memory (bytes) in allocatable, and whether both
// are there with capacity equal to allocatable.
func batchOf(node *corev1.Node) (cpu, memory int64, ok bool) {
	ok = true
	get := func(name corev1.ResourceName) int64 {
		a, inAlloc := node.Status.Allocatable[name]
		c, inCap := node.Status.Capacity[name]
		if !inAlloc || !inCap || !a.Equal(c) {
			ok = false
		}
		return a.Value()
	}
	return get(extension.BatchCPU), get(extension.BatchMemory), ok
}

// hasBatch reports whether batch-cpu or batch-memory is in the node's capacity or allocatable.
func hasBatch(node *corev1.Node) bool {
	for _, list := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
		for _, name := range []corev1.ResourceName{extension.BatchCPU, extension.BatchMemory} {
			if _, ok := list[name]; ok {
				return true
			}
		}
	}
	return false
}
