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
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
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

// testArgs are the plugin's default args.
func testArgs() *config.NodeNUMAResourceArgs {
	strategy := func() *config.ScoringStrategy {
		return &config.ScoringStrategy{Type: config.LeastAllocated, Resources: []config.ResourceWeight{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}}
	}
	return &config.NodeNUMAResourceArgs{DefaultCPUBindPolicy: string(extension.CPUBindPolicyFullPCPUs), ScoringStrategy: strategy(), NUMAScoringStrategy: strategy()}
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
		return &request{shape: shape{cpus: cpus, bind: extension.CPUBindPolicyFullPCPUs}, amounts: quantity.Amounts{corev1.ResourceCPU: int64(cpus) * 1000, corev1.ResourceMemory: memory}}
	}
	withPolicy := func(r *request, p extension.NUMATopologyPolicy) *request {
		r.numaPolicy, r.numaExclusive = p, extension.NUMATopologyExclusiveRequired
		return r
	}
	withExclusive := func(r *request, e extension.NUMATopologyExclusive) *request { r.numaExclusive = e; return r }
	noUsage := cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{}}
	tests := map[string]struct {
		req    *request
		usage  cache.Usage
		labels map[string]string
		// preferred are the CPUs of Reservations the pod may allocate; grant all they hold for it.
		preferred cpuset.CPUSet
		grant     grant
		// fitsNUMA is the other plugins' word on NUMA node sets (DeviceShare's devices).
		fitsNUMA func([]int) (bool, string)
		want     result
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
		// 6 CPUs need 2 NUMA nodes: socket 0 whole, then a core of socket 1; memory is split evenly.
		"Restricted: on the fewest NUMA nodes that can hold it": {
			req: withPolicy(bound(6, gi), extension.NUMATopologyPolicyRestricted), usage: noUsage,
			want: result{CPUs: "0-2,4-6", NUMA: map[int]string{0: "cpu=4,memory=512Mi", 1: "cpu=2,memory=512Mi"}},
		},
		// NUMA node 0 has 1Gi free, node 1 4Gi: node 0 gives its even share only up to what it has.
		"memory over NUMA nodes: the fuller node gives what it can, the other the rest": {
			req:   withPolicy(bound(6, 3*gi), extension.NUMATopologyPolicyRestricted),
			usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{0: {corev1.ResourceMemory: 3 * gi}}},
			want:  result{CPUs: "0-2,4-6", NUMA: map[int]string{0: "cpu=4,memory=1Gi", 1: "cpu=2,memory=2Gi"}},
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
			want: result{CPUs: "0-2,4-6", NUMA: map[int]string{0: "cpu=4,memory=512Mi", 1: "cpu=2,memory=512Mi"}},
		},
		"an unbound pod with a NUMA policy holds cpu and memory": {
			req:   &request{shape: shape{numaPolicy: extension.NUMATopologyPolicySingleNUMANode}, amounts: quantity.Amounts{corev1.ResourceCPU: 1500, corev1.ResourceMemory: gi}},
			usage: noUsage, want: result{CPUs: "", NUMA: map[int]string{0: "cpu=1500m,memory=1Gi"}},
		},
		"an unbound pod over two NUMA nodes: cpu and memory split evenly": {
			req:   &request{shape: shape{numaPolicy: extension.NUMATopologyPolicyBestEffort}, amounts: quantity.Amounts{corev1.ResourceCPU: 5000, corev1.ResourceMemory: gi}},
			usage: noUsage, want: result{CPUs: "", NUMA: map[int]string{0: "cpu=2500m,memory=512Mi", 1: "cpu=2500m,memory=512Mi"}},
		},
		// numaScoringStrategy LeastAllocated: NUMA node 0 (3Gi of 4Gi memory used) scores (50+13)/2 = 31,
		// node 1 (50+88)/2 = 69.
		"SingleNUMANode: the NUMA node numaScoringStrategy rates best": {
			req:   withPolicy(bound(2, gi/2), extension.NUMATopologyPolicySingleNUMANode),
			usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{0: {corev1.ResourceMemory: 3 * gi}}},
			want:  result{CPUs: "2,6", NUMA: map[int]string{1: "cpu=2,memory=512Mi"}},
		},
		"singleNUMANodeExclusive Required (the default): a NUMA node of pods spanning several is passed over": {
			req: withPolicy(bound(2, 0), extension.NUMATopologyPolicySingleNUMANode), usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{},
				Shared: map[int]int{0: 1}},
			want: result{CPUs: "2,6", NUMA: map[int]string{1: "cpu=2"}},
		},
		"singleNUMANodeExclusive Required: a pod spanning NUMA nodes is refused where one of them holds single-NUMA pods": {
			req: withPolicy(bound(6, 0), extension.NUMATopologyPolicyRestricted), usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{},
				Single: map[int]int{0: 1}},
			want: result{Err: "NUMA node 0: 1 pods on it alone; NUMA node 1: no NUMA-aligned pods; the NUMA nodes that have room would mix pods " +
				"on one NUMA node with pods spanning several (singleNUMANodeExclusive Required, Restricted)"},
		},
		"singleNUMANodeExclusive Preferred: mixed when nothing else holds the pod": {
			req:   withExclusive(withPolicy(bound(6, 0), extension.NUMATopologyPolicyRestricted), extension.NUMATopologyExclusivePreferred),
			usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{}, Single: map[int]int{0: 1}},
			want:  result{CPUs: "0-2,4-6", NUMA: map[int]string{0: "cpu=4", 1: "cpu=2"}},
		},
		"a NUMA policy from the node's label only: no exclusivity": {
			req: bound(6, 0), labels: map[string]string{extension.LabelNUMATopologyPolicy: "Restricted"},
			usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{}, Single: map[int]int{0: 1}},
			want:  result{CPUs: "0-2,4-6", NUMA: map[int]string{0: "cpu=4", 1: "cpu=2"}},
		},
		// A Reservation holds core 0 and 2Gi on NUMA node 0, whose memory is all held: only its owner fits
		// there, and it goes there first although NUMA node 1 rates better.
		"an owner gets its Reservation's NUMA resources": {
			req:   withPolicy(bound(2, gi), extension.NUMATopologyPolicySingleNUMANode),
			usage: cache.Usage{CPUs: cpuset.New(0, 4), NUMA: map[int]quantity.Amounts{0: {corev1.ResourceCPU: 2000, corev1.ResourceMemory: 4 * gi}}},
			grant: grant{cpus: cpuset.New(0, 4), numa: map[int]quantity.Amounts{0: {corev1.ResourceCPU: 2000, corev1.ResourceMemory: 2 * gi}}},
			want:  result{CPUs: "0,4", NUMA: map[int]string{0: "cpu=2,memory=1Gi"}},
		},
		"a stranger does not get a Reservation's NUMA resources": {
			req: withPolicy(bound(2, gi), extension.NUMATopologyPolicySingleNUMANode),
			usage: cache.Usage{CPUs: cpuset.New(0, 4), NUMA: map[int]quantity.Amounts{
				0: {corev1.ResourceCPU: 2000, corev1.ResourceMemory: 4 * gi}, 1: {corev1.ResourceMemory: 4 * gi},
			}},
			want: result{Err: "NUMA node 0: 2 free CPUs (1 whole cores), 0 memory; NUMA node 1: 4 free CPUs (2 whole cores), 0 memory; " +
				"the pod needs 2 CPUs and 1Gi memory on one NUMA node (SingleNUMANode)"},
		},
		// SpreadByPCPUs: 6 CPUs take the first thread of every core, then the second of cores 0 and 1; with
		// DistributeEvenly 3 from each NUMA node.
		"SpreadByPCPUs over two NUMA nodes": {
			req: &request{shape: shape{cpus: 6, bind: extension.CPUBindPolicySpreadByPCPUs}}, usage: noUsage, want: result{CPUs: "0-5"},
		},
		"DistributeEvenly: CPUs that span NUMA nodes in equal shares": {
			req: &request{shape: shape{cpus: 6, bind: extension.CPUBindPolicySpreadByPCPUs}}, usage: noUsage,
			labels: map[string]string{extension.LabelNodeNUMAAllocateStrategy: "DistributeEvenly"}, want: result{CPUs: "0-4,6"},
		},
		"DistributeEvenly with a NUMA policy": {
			req: withPolicy(&request{shape: shape{cpus: 6, bind: extension.CPUBindPolicySpreadByPCPUs}}, extension.NUMATopologyPolicyRestricted), usage: noUsage,
			labels: map[string]string{extension.LabelNodeNUMAAllocateStrategy: "DistributeEvenly"},
			want:   result{CPUs: "0-4,6", NUMA: map[int]string{0: "cpu=3", 1: "cpu=3"}},
		},
		// The pod's GPU is free on NUMA node 1 only: NUMA node 0, which rates the same, is passed over.
		"the NUMA node of the pod's devices": {
			req: withPolicy(bound(2, gi), extension.NUMATopologyPolicySingleNUMANode), usage: noUsage,
			fitsNUMA: func(set []int) (bool, string) { return len(set) == 1 && set[0] == 1, "DeviceShare" },
			want:     result{CPUs: "2,6", NUMA: map[int]string{1: "cpu=2,memory=1Gi"}},
		},
		"no NUMA node holds the pod's devices": {
			req: withPolicy(bound(2, gi), extension.NUMATopologyPolicySingleNUMANode), usage: noUsage,
			fitsNUMA: func([]int) (bool, string) { return false, "DeviceShare" },
			want:     result{Err: "no NUMA node set that holds the pod's CPUs and memory (SingleNUMANode) also holds what DeviceShare gives it (its devices)"},
		},
		"FullPCPUsOnly node: a count that splits a core": {
			req: bound(3, 0), usage: noUsage, labels: map[string]string{extension.LabelNodeCPUBindPolicy: "FullPCPUsOnly"},
			want: result{Err: "node requires whole physical cores (node.koordinator.sh/cpu-bind-policy=FullPCPUsOnly): 3 CPUs are not a multiple of its 2 threads per core"},
		},
		"required FullPCPUs without whole cores free": {
			req:   &request{shape: shape{cpus: 2, bind: extension.CPUBindPolicyFullPCPUs, requiredBind: true}},
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
			g := tc.grant
			if tc.preferred.Size() > 0 {
				g.cpus = tc.preferred
			}
			if g.cpus.Size() == 0 {
				g.cpus = cpuset.New()
			}
			a, err := newRules(testArgs()).allocate(n, tc.usage, tc.req, tc.labels, g, tc.fitsNUMA)
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

// With numaScoringStrategy MostAllocated, NUMA node sets are packed and nodes without the
// numa-allocate-strategy label allocate CPUs MostAllocated, as in Koordinator.
func TestAllocateMostAllocated(t *testing.T) {
	gi := int64(1 << 30)
	args := testArgs()
	args.NUMAScoringStrategy.Type = config.MostAllocated
	tests := map[string]struct {
		req    *request
		usage  cache.Usage
		labels map[string]string
		want   result
	}{
		// NUMA node 0 (3Gi of 4Gi memory used) scores (50+87)/2 = 68, node 1 (50+12)/2 = 31.
		"SingleNUMANode: the fuller NUMA node": {
			req: &request{
				shape: shape{
					cpus:       2,
					bind:       extension.CPUBindPolicyFullPCPUs,
					numaPolicy: extension.NUMATopologyPolicySingleNUMANode,
				},
				amounts: quantity.Amounts{corev1.ResourceCPU: 2000, corev1.ResourceMemory: gi / 2},
			},
			usage: cache.Usage{CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{0: {corev1.ResourceMemory: 3 * gi}}},
			want:  result{CPUs: "0,4", NUMA: map[int]string{0: "cpu=2,memory=512Mi"}},
		},
		// CPU 2 (NUMA node 1) is bound: NUMA node 1 has fewer free CPUs.
		"no NUMA policy: CPUs from the NUMA node with the fewest free": {
			req:   &request{shape: shape{cpus: 2, bind: extension.CPUBindPolicyFullPCPUs}},
			usage: cache.Usage{CPUs: cpuset.New(2), NUMA: map[int]quantity.Amounts{}},
			want:  result{CPUs: "3,7"},
		},
		"the node's label wins over the default": {
			req:    &request{shape: shape{cpus: 2, bind: extension.CPUBindPolicyFullPCPUs}},
			usage:  cache.Usage{CPUs: cpuset.New(2), NUMA: map[int]quantity.Amounts{}},
			labels: map[string]string{extension.LabelNodeNUMAAllocateStrategy: "LeastAllocated"},
			want:   result{CPUs: "0,4"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := twoNUMANodes(t)
			tc.usage.Held = cpualloc.Exclusive{}
			tc.usage.Free = n.Topology.All().Difference(n.Unavailable).Difference(tc.usage.CPUs)
			a, err := newRules(args).allocate(n, tc.usage, tc.req, tc.labels, grant{cpus: cpuset.New()}, nil)
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

// FuzzAllocate checks allocate on random topologies, usages and requests: it never panics, never gives a CPU
// that is neither free nor granted, gives exactly the CPUs asked, places exactly the pod's NUMA-accounted
// resources within what each NUMA node has free, and keeps SingleNUMANode pods on one NUMA node.
func FuzzAllocate(f *testing.F) {
	f.Add(uint8(2), uint8(1), uint8(2), uint8(2), uint64(0b1001), uint8(4), uint8(0), uint8(1), uint8(0), uint8(1), uint8(0), uint64(0))
	f.Add(uint8(1), uint8(2), uint8(3), uint8(1), uint64(0b110), uint8(5), uint8(1), uint8(2), uint8(1), uint8(3), uint8(2), uint64(0b10))
	f.Fuzz(func(t *testing.T, sockets, nodesPerSocket, cores, threads uint8, boundMask uint64, cpus, bind, policy, exclusive, memGi, strategy uint8, grantMask uint64) {
		s, npn, c, th := int(sockets%2)+1, int(nodesPerSocket%2)+1, int(cores%4)+1, int(threads%2)+1
		nrt := &topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
		var detail []extension.CPUInfo
		numa := s * npn
		perThread := numa * c
		for t := range th {
			for core := range perThread {
				node := core / c
				detail = append(detail, extension.CPUInfo{ID: int32(t*perThread + core), Core: int32(core), Socket: int32(node / npn), Node: int32(node)})
			}
		}
		if err := extension.SetCPUTopology(nrt, &extension.CPUTopology{Detail: detail}); err != nil {
			t.Fatal(err)
		}
		for id := range numa {
			nrt.Zones = append(nrt.Zones, topologyv1alpha1.Zone{Name: fmt.Sprintf("node-%d", id), Type: "Node", Resources: topologyv1alpha1.ResourceInfoList{
				{Name: "cpu", Allocatable: *resource.NewQuantity(int64(c*th), resource.DecimalSI)},
				{Name: "memory", Allocatable: resource.MustParse("4Gi")},
			}})
		}
		n, err := cache.NodeFromTopology(nrt, nil)
		if err != nil {
			t.Fatal(err)
		}
		var bound, granted []int
		u := cache.Usage{NUMA: map[int]quantity.Amounts{}, Held: cpualloc.Exclusive{}, Single: map[int]int{}, Shared: map[int]int{}}
		for _, d := range detail {
			id := int(d.ID)
			if boundMask&(1<<uint(id%64)) == 0 {
				continue
			}
			bound = append(bound, id)
			if u.NUMA[int(d.Node)] == nil {
				u.NUMA[int(d.Node)] = quantity.Amounts{}
			}
			u.NUMA[int(d.Node)].Add(quantity.Amounts{corev1.ResourceCPU: 1000, corev1.ResourceMemory: 1 << 29})
			u.Single[int(d.Node)] = int(boundMask>>32) % 2
			u.Shared[int(d.Node)] = int(boundMask>>33) % 2
			if grantMask&(1<<uint(id%64)) != 0 {
				granted = append(granted, id)
			}
		}
		u.CPUs = cpuset.New(bound...)
		u.Free = n.Topology.All().Difference(u.CPUs)
		req := &request{
			shape: shape{
				cpus:       int(cpus % 17),
				bind:       []extension.CPUBindPolicy{extension.CPUBindPolicyFullPCPUs, extension.CPUBindPolicySpreadByPCPUs}[bind%2],
				numaPolicy: []extension.NUMATopologyPolicy{"", extension.NUMATopologyPolicyBestEffort, extension.NUMATopologyPolicyRestricted, extension.NUMATopologyPolicySingleNUMANode}[policy%4],
				numaExclusive: []extension.NUMATopologyExclusive{"", extension.NUMATopologyExclusiveRequired,
					extension.NUMATopologyExclusivePreferred}[exclusive%3],
				requiredBind: bind%4 >= 2,
			},
			amounts: quantity.Amounts{corev1.ResourceMemory: int64(memGi%9) << 30},
		}
		req.amounts[corev1.ResourceCPU] = int64(req.cpus) * 1000
		if req.cpus == 0 {
			req.amounts[corev1.ResourceCPU] = int64(memGi) * 100
		}
		labels := map[string]string{extension.LabelNodeNUMAAllocateStrategy: []string{"", "LeastAllocated", "MostAllocated", "DistributeEvenly"}[strategy%4]}
		g := grant{cpus: cpuset.New(granted...)}
		a, err := newRules(testArgs()).allocate(n, u, req, labels, g, nil)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a reason")
			}
			return
		}
		if a.cpus.Size() != req.cpus {
			t.Fatalf("gave %d CPUs (%s), the pod asked %d", a.cpus.Size(), a.cpus, req.cpus)
		}
		if !a.cpus.IsSubsetOf(u.Free.Union(g.cpus)) {
			t.Fatalf("gave %s, of which %s are neither free nor granted", a.cpus, a.cpus.Difference(u.Free.Union(g.cpus)))
		}
		if a.numa == nil {
			return
		}
		if req.numaPolicy == extension.NUMATopologyPolicySingleNUMANode && len(a.numa) > 1 {
			t.Fatalf("a SingleNUMANode pod was given %d NUMA nodes: %v", len(a.numa), a.numa)
		}
		placed := quantity.Amounts{}
		for id, amounts := range a.numa {
			placed.Add(amounts)
			free := n.Zones[id].Clone()
			free.Sub(u.NUMA[id])
			if amounts[corev1.ResourceMemory] > free[corev1.ResourceMemory] {
				t.Fatalf("NUMA node %d: placed %s, it has %s free", id, amounts, free)
			}
		}
		for _, name := range numaResources {
			if placed[name] != req.amounts[name] {
				t.Fatalf("placed %s on the NUMA nodes, the pod needs %s", placed, req.amounts)
			}
		}
	})
}
