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
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cpualloc"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// twoNUMANodes is a node of 2 sockets, one NUMA node each, 2 cores × 2 threads per socket: NUMA node 0 has
// cores 0, 1 = CPUs (0,4), (1,5); node 1 cores 2, 3 = (2,6), (3,7). Each NUMA node has 4 CPUs and 4Gi.
func twoNUMANodes(t *testing.T) *cache.Node {
	t.Helper()
	nrt := &topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	var detail []extension.CPUInfo
	for th := range 2 {
		for core := range 4 {
			detail = append(detail, extension.CPUInfo{ID: int32(th*4 + core), Core: int32(core), Socket: int32(core / 2), Node: int32(core / 2)})
		}
	}
	if err := extension.SetCPUTopology(nrt, &extension.CPUTopology{Detail: detail}); err != nil {
		t.Fatal(err)
	}
	for id := range 2 {
		nrt.Zones = append(nrt.Zones, topologyv1alpha1.Zone{Name: fmt.Sprintf("node-%d", id), Type: "Node", Resources: topologyv1alpha1.ResourceInfoList{
			{Name: "cpu", Allocatable: resource.MustParse("4")},
			{Name: "memory", Allocatable: resource.MustParse("4Gi")},
		}})
	}
	n, err := cache.NodeFromTopology(nrt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// result is an allocation in a comparable form.
type result struct {
	CPUs string
	NUMA map[int]string
	Err  string
}

func TestAllocate(t *testing.T) {
	gi := int64(1 << 30)
	bound := func(cpus int, memory int64) *request {
		return &request{cpus: cpus, bind: extension.CPUBindPolicyFullPCPUs, amounts: quantity.Amounts{corev1.ResourceCPU: int64(cpus) * 1000, corev1.ResourceMemory: memory}}
	}
	withPolicy := func(r *request, p extension.NUMATopologyPolicy) *request { r.numaPolicy = p; return r }
	noUsage := cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{}}
	tests := map[string]struct {
		req    *request
		usage  cache.Usage
		labels map[string]string
		// preferred are the CPUs of Reservations the pod may allocate.
		preferred cpuset.CPUSet
		want      result
	}{
		// A Reservation holds core 1 (CPUs 1, 5): used for others, first choice of its owner.
		"an owner takes its Reservation's CPUs": {
			req: bound(2, 0), usage: cache.Usage{CPUs: cpuset.New(1, 5), NUMA: map[int]quantity.Amounts{}},
			preferred: cpuset.New(1, 5), want: result{CPUs: "1,5"},
		},
		// NUMA node 1 has more free CPUs than node 0, where the Reservation is.
		"a stranger does not": {
			req: bound(2, 0), usage: cache.Usage{CPUs: cpuset.New(1, 5), NUMA: map[int]quantity.Amounts{}},
			want: result{CPUs: "2,6"},
		},
		"an owner asking more than its Reservation holds takes the rest from the node": {
			req: bound(4, 0), usage: cache.Usage{CPUs: cpuset.New(1, 5), NUMA: map[int]quantity.Amounts{}},
			preferred: cpuset.New(1, 5), want: result{CPUs: "0-1,4-5"},
		},
		"no NUMA policy: whole cores, no NUMA resources": {
			req: bound(2, gi), usage: noUsage, want: result{CPUs: "0,4"},
		},
		"SingleNUMANode: CPUs and memory on one NUMA node": {
			req: withPolicy(bound(2, gi), extension.NUMATopologyPolicySingleNUMANode), usage: noUsage,
			want: result{CPUs: "0,4", NUMA: map[int]string{0: "cpu=2,memory=1Gi"}},
		},
		"SingleNUMANode: too big for one NUMA node": {
			req: withPolicy(bound(6, gi), extension.NUMATopologyPolicySingleNUMANode), usage: noUsage,
			want: result{Err: "NUMA node 0: 4 free CPUs (2 whole cores), 4Gi memory; NUMA node 1: 4 free CPUs (2 whole cores), 4Gi memory; " +
				"the pod needs 6 CPUs and 1Gi memory on one NUMA node (SingleNUMANode)"},
		},
		"the node's label gives the policy": {
			req: bound(6, gi), usage: noUsage, labels: map[string]string{extension.LabelNUMATopologyPolicy: "SingleNUMANode"},
			want: result{Err: "NUMA node 0: 4 free CPUs (2 whole cores), 4Gi memory; NUMA node 1: 4 free CPUs (2 whole cores), 4Gi memory; " +
				"the pod needs 6 CPUs and 1Gi memory on one NUMA node (SingleNUMANode)"},
		},
		// 6 CPUs need 2 NUMA nodes: socket 0 whole, then a core of socket 1; memory fills node 0 first.
		"Restricted: on the fewest NUMA nodes that can hold it": {
			req: withPolicy(bound(6, gi), extension.NUMATopologyPolicyRestricted), usage: noUsage,
			want: result{CPUs: "0-2,4-6", NUMA: map[int]string{0: "cpu=4,memory=1Gi", 1: "cpu=2"}},
		},
		"Restricted: a NUMA node without memory left is passed over": {
			req:   withPolicy(bound(2, gi), extension.NUMATopologyPolicyRestricted),
			usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{0: {corev1.ResourceMemory: 4 * gi}}},
			want:  result{CPUs: "2,6", NUMA: map[int]string{1: "cpu=2,memory=1Gi"}},
		},
		"Restricted: one NUMA node could hold it, but neither has room": {
			req: withPolicy(bound(2, 3*gi), extension.NUMATopologyPolicyRestricted),
			usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{
				0: {corev1.ResourceMemory: 2 * gi}, 1: {corev1.ResourceMemory: 2 * gi},
			}},
			want: result{Err: "NUMA node 0: 4 free CPUs (2 whole cores), 2Gi memory; NUMA node 1: 4 free CPUs (2 whole cores), 2Gi memory; " +
				"the pod needs 2 CPUs and 3Gi memory on one NUMA node (Restricted)"},
		},
		"BestEffort: spans NUMA nodes when it must": {
			req: withPolicy(bound(6, gi), extension.NUMATopologyPolicyBestEffort), usage: noUsage,
			want: result{CPUs: "0-2,4-6", NUMA: map[int]string{0: "cpu=4,memory=1Gi", 1: "cpu=2"}},
		},
		"an unbound pod with a NUMA policy holds cpu and memory": {
			req:   &request{numaPolicy: extension.NUMATopologyPolicySingleNUMANode, amounts: quantity.Amounts{corev1.ResourceCPU: 1500, corev1.ResourceMemory: gi}},
			usage: noUsage, want: result{CPUs: "", NUMA: map[int]string{0: "cpu=1500m,memory=1Gi"}},
		},
		"FullPCPUsOnly node: a count that splits a core": {
			req: bound(3, 0), usage: noUsage, labels: map[string]string{extension.LabelNodeCPUBindPolicy: "FullPCPUsOnly"},
			want: result{Err: "node requires whole physical cores (node.koordinator.sh/cpu-bind-policy=FullPCPUsOnly): 3 CPUs are not a multiple of its 2 threads per core"},
		},
		"required FullPCPUs without whole cores free": {
			req:   &request{cpus: 2, bind: extension.CPUBindPolicyFullPCPUs, requiredBind: true},
			usage: cache.Usage{CPUs: cpuset.New(0, 1, 2, 3), NUMA: map[int]quantity.Amounts{}},
			want:  result{Err: "node has 0 free whole cores, the pod needs 2 CPUs on whole cores (FullPCPUs required)"},
		},
		"not enough CPUs": {
			req:   bound(5, 0),
			usage: cache.Usage{CPUs: cpuset.New(0, 1, 2, 3), NUMA: map[int]quantity.Amounts{}},
			want:  result{Err: "node has 4 free CPUs (0 whole cores), the pod needs 5"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := twoNUMANodes(t)
			tc.usage.Held = cpualloc.Exclusive{}
			tc.usage.Free = n.Topology.All().Difference(n.Unavailable).Difference(tc.usage.CPUs)
			preferred := tc.preferred
			if preferred.Size() == 0 {
				preferred = cpuset.New()
			}
			a, err := allocate(n, tc.usage, tc.req, tc.labels, preferred)
			var got result
			if err != nil {
				got.Err = err.Error()
			} else {
				got.CPUs = a.cpus.String()
				for id, amounts := range a.numa {
					if got.NUMA == nil {
						got.NUMA = map[int]string{}
					}
					got.NUMA[id] = amounts.String()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("allocate (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNodeFromTopologyRejects(t *testing.T) {
	nrt := &topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{}}}
	if _, err := cache.NodeFromTopology(nrt, nil); err == nil {
		t.Error("a topology without the cpu-topology annotation was accepted")
	}
	nrt.Annotations[extension.AnnotationNodeCPUTopology] = `{"detail":[{"id":0},{"id":0}]}`
	if _, err := cache.NodeFromTopology(nrt, nil); err == nil {
		t.Error("a topology listing a CPU twice was accepted")
	}
}
