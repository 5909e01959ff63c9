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
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// clusterInputs builds the inputs of a cluster of nodes nodes with podsPerNode pods each, as the controller
// would pass them: 96-core, 384Gi nodes with a kubelet reservation, pods of every class (prod LS, LSR and LSE,
// mid, batch BE, pending and finished ones), a NodeMetric reporting every live pod plus one pod that is gone,
// host applications and a prod reclaimable prediction.
func clusterInputs(nodes, podsPerNode int) []Input {
	strategy := &configuration.ColocationStrategy{
		Enable:                ptr.To(true),
		CPUCalculatePolicy:    ptr.To(configuration.CalculateByPodMaxUsageRequest),
		MemoryCalculatePolicy: ptr.To(configuration.CalculateByPodUsage),
		MidUnallocatedPercent: ptr.To[int64](20),
	}
	inputs := make([]Input, nodes)
	for n := range nodes {
		node := testNode("96", "384Gi")
		node.Name = fmt.Sprintf("node-%d", n)
		node.Status.Allocatable = rl("94", "376Gi")
		nm := &slov1alpha1.NodeMetric{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name},
			Status: slov1alpha1.NodeMetricStatus{
				UpdateTime: &metav1.Time{Time: now},
				NodeMetric: &slov1alpha1.NodeMetricInfo{
					NodeUsage:   slov1alpha1.ResourceMap{ResourceList: rl("40", "200Gi")},
					SystemUsage: slov1alpha1.ResourceMap{ResourceList: rl("3", "12Gi")},
				},
				HostApplicationMetric: []slov1alpha1.HostApplicationMetricInfo{
					{Name: "agent", Priority: string(extension.PriorityProd), Usage: slov1alpha1.ResourceMap{ResourceList: rl("500m", "1Gi")}},
				},
				ProdReclaimableMetric: &slov1alpha1.ReclaimableMetric{Resource: slov1alpha1.ResourceMap{ResourceList: rl("20", "64Gi")}},
			},
		}
		pods := make([]*corev1.Pod, podsPerNode)
		for p := range podsPerNode {
			name := fmt.Sprintf("pod-%d-%d", n, p)
			var pod *corev1.Pod
			pc := extension.PriorityProd
			switch p % 5 {
			case 0:
				pod = testPod(name, extension.QoSLS, corev1.PodRunning, rl("2", "8Gi"), rl("500m", "1Gi"))
			case 1:
				pod = testPod(name, extension.QoSBE, corev1.PodRunning)
				pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{extension.BatchCPU: resource.MustParse("1000")}
				pc = extension.PriorityBatch
			case 2:
				pod = testPod(name, "", corev1.PodRunning, rl("4", "16Gi"))
			case 3:
				pod = testPod(name, extension.QoSLSE, corev1.PodRunning, rl("4", "8Gi"))
			case 4:
				pod = testPod(name, extension.QoSLS, corev1.PodPending, rl("1", "2Gi"))
				pod.Labels[extension.LabelPodPriorityClass] = string(extension.PriorityMid)
				pc = extension.PriorityMid
			}
			pod.Name = name
			pods[p] = pod
			if pod.Status.Phase == corev1.PodRunning {
				nm.Status.PodsMetric = append(nm.Status.PodsMetric, podMetric(name, pc, "1500m", "5Gi"))
			}
		}
		nm.Status.PodsMetric = append(nm.Status.PodsMetric, podMetric(fmt.Sprintf("gone-%d", n), extension.PriorityProd, "1", "1Gi"))
		inputs[n] = Input{Node: node, NodeMetric: nm, Pods: pods, Strategy: strategy, Now: now}
	}
	return inputs
}

// BenchmarkCalculateCluster is one full pass of the controller's calculation over a cluster: every node's
// Result, 5000 nodes and 100k pods.
func BenchmarkCalculateCluster(b *testing.B) {
	for _, size := range []struct{ nodes, pods int }{{1000, 20}, {5000, 20}} {
		b.Run(fmt.Sprintf("nodes=%d/pods=%d", size.nodes, size.nodes*size.pods), func(b *testing.B) {
			inputs := clusterInputs(size.nodes, size.pods)
			b.ReportAllocs()
			var batchCPU int64
			for b.Loop() {
				for i := range inputs {
					r := Calculate(inputs[i])
					batchCPU += r.Batch.CPU
				}
			}
			if batchCPU <= 0 {
				b.Fatalf("no batch-cpu computed")
			}
		})
	}
}

// BenchmarkCalculateNode is the calculation for one node with 20 pods.
func BenchmarkCalculateNode(b *testing.B) {
	in := clusterInputs(1, 20)[0]
	b.ReportAllocs()
	for b.Loop() {
		_ = Calculate(in)
	}
}

// TestClusterInputs pins what the benchmark computes, so that it measures the real path: for every node,
// HP pods are 12 running prod ones (4 LS, 4 unlabelled Guaranteed, 4 LSE) and 4 pending mid ones.
//
//	requests: LS 2.5/9Gi, Guaranteed 4/16Gi, LSE 4/8Gi, mid 1/2Gi → 4×(2.5+4+4+1) = 46 cores, 4×35Gi = 140Gi
//	usage:    LS and Guaranteed 1.5/5Gi, LSE cpu = request 4, memory 5Gi, mid (no metric) 1/2Gi, gone 1/1Gi
//	          → cpu 4×(1.5+1.5+4+1) + 1 = 33 cores; memory 4×(5+5+5+2) + 1 = 69Gi
//	max(request, usage): cpu 4×(2.5+4+4+1) + 1 = 47 cores; memory 4×(9+16+8+2) + 1 = 141Gi
//	reserved (kubelet) 2 cores / 8Gi; system used max(3 + 0.5, 2) = 3.5 cores, max(12Gi + 1Gi, 8Gi) = 13Gi
//	batch-cpu (maxUsageRequest) = 96 − 38.4 − 3.5 − 47 = 7.1 cores = 7100
//	batch-memory (usage) = 384Gi − 134.4Gi − 13Gi − 69Gi = 167.6Gi
//	mid-cpu = min(20, 96 − 40) + 20% × (96 − 3.5 − 42) = 20 + 10.1 = 30.1 cores
//	mid-memory = min(64Gi, 184Gi) + 20% × (384Gi − 13Gi − 132Gi) = 64Gi + 47.8Gi = 111.8Gi
func TestClusterInputs(t *testing.T) {
	r := Calculate(clusterInputs(1, 20)[0])
	const gi = 1 << 30
	got := [4]int64{r.Batch.CPU, r.Batch.Memory, r.Mid.CPU, r.Mid.Memory}
	want := [4]int64{7100, 384*gi - quantity.PercentOf(384*gi, 35) - 13*gi - 69*gi, 30100, 64*gi + quantity.PercentOf(239*gi, 20)}
	if got != want {
		t.Errorf("batch and mid [cpu, memory, cpu, memory] = %v, want %v", got, want)
	}
}
