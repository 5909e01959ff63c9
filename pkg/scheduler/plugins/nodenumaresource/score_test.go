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

package nodenumaresource

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// TestScore checks Score's numbers, computed by hand, on twoNUMANodes (8 CPUs; 2 NUMA nodes of 4 CPUs and
// 4Gi) with the default LeastAllocated over cpu and memory, weights 1: the mean of the shares left free.
func TestScore(t *testing.T) {
	gi := resource.MustParse("1Gi")
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}},
	}
	podOf := func(name string, qos extension.QoSClass, cpu string, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{extension.LabelPodQoS: string(qos)}, Annotations: annotations},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: gi},
			}}}},
		}
	}
	lsr := podOf("lsr", extension.QoSLSR, "2", nil)
	web := podOf("web", extension.QoSLS, "1", nil)
	singleNUMA := podOf("aligned", extension.QoSLSR, "2", map[string]string{extension.AnnotationNUMATopologySpec: `{"numaTopologyPolicy":"SingleNUMANode"}`})
	ls := podOf("ls", extension.QoSLS, "2", map[string]string{extension.AnnotationNUMATopologySpec: `{"numaTopologyPolicy":"SingleNUMANode"}`})
	tests := []struct {
		name string
		pod  *corev1.Pod
		// onNode are the pods in the node's NodeInfo (their requests); bound the CPUs the plugin gave.
		onNode []*corev1.Pod
		bound  []cache.Allocation
		want   int64
	}{
		// cpu: 2 of 8 CPUs bound → 75 free; memory 1Gi of 8Gi → 88 free.
		{name: "an LSR pod on an empty node", pod: lsr, want: (75 + 88) / 2},
		// The web pod's 1Gi counts (2Gi of 8Gi → 75 free); its cpu request does not: the CPUs bound to pods
		// stand for cpu requests.
		{name: "other pods' requests", pod: lsr, onNode: []*corev1.Pod{web}, want: (75 + 75) / 2},
		// 2 bound to another pod + 2 → 50 free.
		{name: "other pods' bound CPUs", pod: lsr, bound: []cache.Allocation{{Node: "n1", CPUs: cpuset.New(0, 4)}}, want: (50 + 88) / 2},
		// A pod that binds no CPUs, with a NUMA policy: its cpu request and memory on NUMA node 1, as above.
		{name: "an LS pod with a NUMA policy", pod: ls, onNode: []*corev1.Pod{web}, bound: []cache.Allocation{{Node: "n1", CPUs: cpuset.New(0, 4)}}, want: (50 + 75) / 2},
		// NUMA node 0 holds an aligned pod's 2 CPUs and 3Gi: the pod goes to node 1 (2 of 4 CPUs → 50, 1Gi of 4Gi
		// → 75); the other pod's NUMA resources do not count there.
		{name: "NUMA resources held on another NUMA node", pod: singleNUMA, bound: []cache.Allocation{{Node: "n1", CPUs: cpuset.New(0, 4),
			NUMA: map[int]quantity.Amounts{0: {corev1.ResourceCPU: 2000, corev1.ResourceMemory: 3 << 30}}}}, want: (50 + 75) / 2},
		// NUMA node 1 is all bound; node 0 holds an aligned pod's 2 CPUs and 1Gi: with the pod, 4 of 4 CPUs → 0
		// free, 2Gi of 4Gi → 50 free.
		{name: "NUMA resources held on the pod's NUMA node", pod: singleNUMA, bound: []cache.Allocation{
			{Node: "n1", CPUs: cpuset.New(2, 3, 6, 7)},
			{Node: "n1", CPUs: cpuset.New(0, 4), NUMA: map[int]quantity.Amounts{0: {corev1.ResourceCPU: 2000, corev1.ResourceMemory: 1 << 30}}},
		}, want: (0 + 50) / 2},
		// NUMA node 1 (node 0 holds the other pod's CPUs): 2 of its 4 CPUs → 50 free, 1Gi of 4Gi → 75 free.
		{name: "a pod with a NUMA policy, on its NUMA node", pod: singleNUMA, onNode: []*corev1.Pod{web},
			bound: []cache.Allocation{{Node: "n1", CPUs: cpuset.New(0, 4)}}, want: (50 + 75) / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := testArgs()
			p := &Plugin{args: args, cache: cache.New(), defaultBind: extension.CPUBindPolicy(args.DefaultCPUBindPolicy), policyNodes: sets.New[string](), rules: newRules(args)}
			p.cache.SetNode("n1", twoNUMANodes(t))
			for i, a := range tt.bound {
				p.cache.SetBound(types.UID(fmt.Sprintf("bound-%d", i)), a)
			}
			cs := framework.NewCycleState()
			if _, s := p.PreFilter(t.Context(), cs, tt.pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			got, s := p.Score(t.Context(), cs, tt.pod, plugintest.NodeInfo(node, tt.onNode...))
			if !s.IsSuccess() {
				t.Fatalf("Score: %v", s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		})
	}
}
