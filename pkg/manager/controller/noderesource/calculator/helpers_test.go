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

package calculator

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// now is the fixed time of the tests.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rl builds a cpu and memory resource list; an empty string leaves the resource out.
func rl(cpu, memory string) corev1.ResourceList {
	list := corev1.ResourceList{}
	if cpu != "" {
		list[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		list[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return list
}

// testNode returns a node whose capacity and allocatable are cpu and memory.
func testNode(cpu, memory string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "test-node"},
		Status:     corev1.NodeStatus{Capacity: rl(cpu, memory), Allocatable: rl(cpu, memory)},
	}
}

// testPod returns a pod with one container per request pair (requests equal to limits), the QoS label qos
// (none when empty) and the phase.
func testPod(name string, qos extension.QoSClass, phase corev1.PodPhase, requests ...corev1.ResourceList) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
		Spec:       corev1.PodSpec{NodeName: "test-node"},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if qos != "" {
		pod.Labels = map[string]string{extension.LabelPodQoS: string(qos)}
	}
	for _, r := range requests {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name:      "c",
			Resources: corev1.ResourceRequirements{Requests: r, Limits: r.DeepCopy()},
		})
	}
	if len(requests) == 0 {
		pod.Spec.Containers = []corev1.Container{{Name: "c"}}
	}
	return pod
}

// podMetric returns the usage of the pod test/name as reported with priority class pc.
func podMetric(name string, pc extension.PriorityClass, cpu, memory string) slov1alpha1.PodMetricInfo {
	return slov1alpha1.PodMetricInfo{
		Name: name, Namespace: "test", Priority: string(pc),
		PodUsage: slov1alpha1.ResourceMap{ResourceList: rl(cpu, memory)},
	}
}

// baseInput is the fixture of Koordinator's noderesource tests: a node of 100 cores and 120G with reclaim
// thresholds 65/65 (safety margin 35 cores and 42G) and system usage 7 cores and 12G, and
//   - podA, LS, requests 20/20G, running, usage 11/11G;
//   - podB, BE, no requests, running, usage 10/10G;
//   - podC, no QoS label but Guaranteed (so LSR and koord-prod), requests 20/40G over two containers, pending,
//     usage 22/22G;
//   - podD, BE, requests 10/10G, succeeded, not reported.
//
// The NodeMetric was updated just now and has no prodReclaimableMetric.
func baseInput() Input {
	return Input{
		Node: testNode("100", "120G"),
		NodeMetric: &slov1alpha1.NodeMetric{
			ObjectMeta: metav1.ObjectMeta{Name: "test-node"},
			Status: slov1alpha1.NodeMetricStatus{
				UpdateTime: &metav1.Time{Time: now},
				NodeMetric: &slov1alpha1.NodeMetricInfo{
					NodeUsage:   slov1alpha1.ResourceMap{ResourceList: rl("50", "55G")},
					SystemUsage: slov1alpha1.ResourceMap{ResourceList: rl("7", "12G")},
				},
				PodsMetric: []slov1alpha1.PodMetricInfo{
					podMetric("podA", extension.PriorityProd, "11", "11G"),
					podMetric("podB", extension.PriorityBatch, "10", "10G"),
					podMetric("podC", extension.PriorityProd, "22", "22G"),
				},
			},
		},
		Pods: []*corev1.Pod{
			testPod("podA", extension.QoSLS, corev1.PodRunning, rl("20", "20G")),
			testPod("podB", extension.QoSBE, corev1.PodRunning),
			testPod("podC", "", corev1.PodPending, rl("10", "20G"), rl("10", "20G")),
			testPod("podD", extension.QoSBE, corev1.PodSucceeded, rl("10", "10G")),
		},
		Strategy: &configuration.ColocationStrategy{
			Enable:                        ptr.To(true),
			CPUReclaimThresholdPercent:    ptr.To[int64](65),
			MemoryReclaimThresholdPercent: ptr.To[int64](65),
		},
		Now: now,
	}
}

// baseResult is the result for baseInput, computed by hand:
//
//	HPRequest    = 20 + 20 = 40 cores,           20G + 40G = 60G (podB and podD are batch)
//	HPUsed       = 11 + 22 = 33 cores,           11G + 22G = 33G
//	HPMaxUsedReq = max(20,11) + max(20,22) = 42, max(20G,11G) + max(40G,22G) = 60G
//	batch-cpu    = 100 − 35 − 7 − 33 = 25 cores = 25000
//	batch-memory = 120G − 42G − 12G − 33G = 33G
//
// There is no prodReclaimableMetric, which counts as nothing reclaimable (as in Koordinator):
//
//	NodeUnused  = 100 − 50 = 50 cores,           120G − 55G = 65G
//	Unallocated = 100 − max(0, 7) − 40 = 53,      120G − max(0, 12G) − 60G = 48G (prod requests: podA + podC)
//	mid         = min(0, NodeUnused) + Unallocated × 0 % = 0, present on the node
func baseResult() Result {
	return Result{
		Batch: Tier{CPU: 25000, Memory: 33e9},
		Mid:   Tier{},
		CPU: Terms{
			Capacity: 100000, ReclaimPercent: 65, SafetyMargin: 35000, SystemUsed: 7000,
			HPRequest: 40000, HPUsed: 33000, HPMaxUsedReq: 42000, MidThresholdCap: 100000,
			NodeUnused: 50000, Unallocated: 53000,
		},
		Memory: Terms{
			Capacity: 120e9, ReclaimPercent: 65, SafetyMargin: 42e9, SystemUsed: 12e9,
			HPRequest: 60e9, HPUsed: 33e9, HPMaxUsedReq: 60e9, MidThresholdCap: 120e9,
			NodeUnused: 65e9, Unallocated: 48e9,
		},
		MidPredicted: true,
		CPUPolicy:    configuration.CalculateByPodUsage,
		MemoryPolicy: configuration.CalculateByPodUsage,
		UsageKnown:   true,
		DegradeAt:    now.Add(15 * time.Minute),
	}
}
