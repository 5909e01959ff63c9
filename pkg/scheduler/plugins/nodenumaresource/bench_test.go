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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// BenchmarkAllocate is the work Filter and Score do per node for an LSR pod of 8 CPUs on a node of 2 sockets
// × 32 cores × 2 threads (128 CPUs, one NUMA node per socket) with 40 bound pods of 2 CPUs each, with and
// without a SingleNUMANode policy, and once memoized (the next pods asking the same of an unchanged node).
func BenchmarkAllocate(b *testing.B) {
	nrt := &topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	var detail []extension.CPUInfo
	for th := range 2 {
		for core := range 64 {
			detail = append(detail, extension.CPUInfo{ID: int32(th*64 + core), Core: int32(core), Socket: int32(core / 32), Node: int32(core / 32)})
		}
	}
	if err := extension.SetCPUTopology(nrt, &extension.CPUTopology{Detail: detail}); err != nil {
		b.Fatal(err)
	}
	for id := range 2 {
		nrt.Zones = append(nrt.Zones, topologyv1alpha1.Zone{Name: fmt.Sprintf("node-%d", id), Type: "Node", Resources: topologyv1alpha1.ResourceInfoList{
			{Name: "cpu", Allocatable: resource.MustParse("64")}, {Name: "memory", Allocatable: resource.MustParse("256Gi")},
		}})
	}
	n, err := cache.NodeFromTopology(nrt, nil)
	if err != nil {
		b.Fatal(err)
	}
	c := cache.New()
	c.SetNode("n1", n)
	for i := range 40 {
		c.SetBound(types.UID(fmt.Sprintf("p%d", i)), cache.Allocation{Node: "n1", CPUs: cpuset.New(i, i+64),
			NUMA: map[int]quantity.Amounts{i / 32: {corev1.ResourceCPU: 2000, corev1.ResourceMemory: 4 << 30}}})
	}
	for name, policy := range map[string]extension.NUMATopologyPolicy{"none": "", "SingleNUMANode": extension.NUMATopologyPolicySingleNUMANode} {
		b.Run(name, func(b *testing.B) {
			req := &request{
				shape: shape{
					cpus:       8,
					bind:       extension.CPUBindPolicyFullPCPUs,
					numaPolicy: policy,
				},
				amounts: quantity.Amounts{corev1.ResourceCPU: 8000, corev1.ResourceMemory: 16 << 30},
			}
			for b.Loop() {
				u := c.Usage("n1", n, "")
				if _, err := newRules(testArgs()).allocate(n, u, req, nil, grant{cpus: cpuset.New()}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The next pods asking the same of the node while its allocations stay: Filter's answer, memoized.
	b.Run("memoized", func(b *testing.B) {
		args := testArgs()
		p := &Plugin{args: args, cache: c, defaultBind: extension.CPUBindPolicy(args.DefaultCPUBindPolicy), policyNodes: sets.New[string](), rules: newRules(args)}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "lsr"}}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
		req := &request{
			shape: shape{
				cpus: 8,
				bind: extension.CPUBindPolicyFullPCPUs,
			},
			amounts: quantity.Amounts{corev1.ResourceCPU: 8000, corev1.ResourceMemory: 16 << 30},
		}
		for b.Loop() {
			if _, err := p.allocationOn(pod, req, node, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPodWithoutCPUBinding is all the plugin does for an LS pod that binds no CPUs, on a cluster without
// NUMA policies, in a scheduling cycle: PreFilter and PreScore, which both Skip, so that kube-scheduler calls
// neither Filter nor Score on any node.
func BenchmarkPodWithoutCPUBinding(b *testing.B) {
	args := testArgs()
	p := &Plugin{args: args, cache: cache.New(), defaultBind: extension.CPUBindPolicy(args.DefaultCPUBindPolicy), policyNodes: sets.New[string](), rules: newRules(args)}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{extension.LabelPodQoS: string(extension.QoSLS)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "web", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}}},
			{Name: "sidecar", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}},
		}},
	}
	ctx := b.Context()
	for b.Loop() {
		plugintest.ExpectSkipped(ctx, b, p, pod)
	}
}
