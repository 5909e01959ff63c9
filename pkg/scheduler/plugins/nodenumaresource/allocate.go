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
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cpualloc"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// request is what a pod asks of the plugin, read once at PreFilter.
type request struct {
	// cpus is the number of CPUs to bind (LSE and LSR pods with an integer CPU request); 0 binds none.
	cpus int
	// bind is the bind policy, required when requiredBind.
	bind         extension.CPUBindPolicy
	requiredBind bool
	exclusive    extension.CPUExclusivePolicy
	// numaPolicy is the pod's numa-topology-spec policy; the node's label applies when it is empty.
	numaPolicy extension.NUMATopologyPolicy
	// amounts are the pod's cpu (milli) and memory requests.
	amounts quantity.Amounts
}

// allocation is what a node gives the pod.
type allocation struct {
	cpus cpuset.CPUSet
	// numa are the resources held on each NUMA node; nil without a NUMA policy.
	numa map[int]quantity.Amounts
}

// numaResources are the resources accounted per NUMA node.
var numaResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// allocate decides what node gives the pod, or returns the reason it cannot, with the numbers a person can act
// on. labels are the node's (its required bind policy, NUMA topology policy and allocate strategy); preferred
// are the CPUs of the Reservations the pod may allocate, which it takes first (they count as free for it).
func allocate(n *cache.Node, u cache.Usage, req *request, labels map[string]string, preferred cpuset.CPUSet) (*allocation, error) {
	creq := cpualloc.Request{Count: req.cpus, Bind: req.bind, Exclusive: req.exclusive,
		Strategy: extension.NUMAAllocateStrategy(labels[extension.LabelNodeNUMAAllocateStrategy])}
	switch p := extension.NodeCPUBindPolicy(labels[extension.LabelNodeCPUBindPolicy]); {
	case req.cpus == 0:
	case p == extension.NodeCPUBindPolicyFullPCPUsOnly:
		if req.requiredBind && req.bind != extension.CPUBindPolicyFullPCPUs {
			return nil, fmt.Errorf("node requires whole physical cores (%s=%s), the pod requires %s", extension.LabelNodeCPUBindPolicy, p, req.bind)
		}
		if per := n.Topology.CPUsPerCore; req.cpus%per != 0 {
			return nil, fmt.Errorf("node requires whole physical cores (%s=%s): %d CPUs are not a multiple of its %d threads per core", extension.LabelNodeCPUBindPolicy, p, req.cpus, per)
		}
		creq.Bind, req = extension.CPUBindPolicyFullPCPUs, withRequiredBind(req, extension.CPUBindPolicyFullPCPUs)
	case p == extension.NodeCPUBindPolicySpreadByPCPUs:
		if req.requiredBind && req.bind != extension.CPUBindPolicySpreadByPCPUs {
			return nil, fmt.Errorf("node requires CPUs spread over physical cores (%s=%s), the pod requires %s", extension.LabelNodeCPUBindPolicy, p, req.bind)
		}
		creq.Bind = extension.CPUBindPolicySpreadByPCPUs
	}
	policy := req.numaPolicy
	if policy == extension.NUMATopologyPolicyNone {
		policy = extension.NUMATopologyPolicy(labels[extension.LabelNUMATopologyPolicy])
	}
	if policy == extension.NUMATopologyPolicyNone {
		policy = n.Policy
	}
	free := u.Free.Union(preferred)

	if policy == extension.NUMATopologyPolicyNone || len(n.Zones) == 0 {
		cpus, err := take(n, free, preferred, u, creq, req)
		if err != nil {
			return nil, err
		}
		return &allocation{cpus: cpus}, nil
	}

	ids := make([]int, 0, len(n.Zones))
	for id := range n.Zones {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	zoneFree := map[int]quantity.Amounts{}
	for _, id := range ids {
		f := n.Zones[id].Clone()
		f.Sub(u.NUMA[id])
		zoneFree[id] = f
	}
	need := req.amounts.Clone()
	if req.cpus > 0 {
		need[corev1.ResourceCPU] = int64(req.cpus) * 1000
	}
	mostAllocated := creq.Strategy == extension.NUMAMostAllocated
	sizes := []int{}
	switch policy {
	case extension.NUMATopologyPolicySingleNUMANode:
		sizes = []int{1}
	case extension.NUMATopologyPolicyRestricted:
		// The fewest NUMA nodes that could ever hold the pod, as kubelet's topology manager prefers them.
		for k := 1; k <= len(ids); k++ {
			if anySubset(ids, k, func(set []int) bool { return fits(sum(n.Zones, set), need) }) {
				sizes = []int{k}
				break
			}
		}
	default:
		for k := 1; k <= len(ids); k++ {
			sizes = append(sizes, k)
		}
	}
	for _, k := range sizes {
		sets := subsets(ids, k)
		slices.SortStableFunc(sets, func(a, b []int) int {
			fa, fb := sum(zoneFree, a)[corev1.ResourceCPU], sum(zoneFree, b)[corev1.ResourceCPU]
			if mostAllocated {
				return cmp.Compare(fa, fb)
			}
			return cmp.Compare(fb, fa)
		})
		for _, set := range sets {
			if !fits(sum(zoneFree, set), need) {
				continue
			}
			cpus := cpuset.New()
			if req.cpus > 0 {
				inSet := cpuset.New()
				for _, id := range set {
					inSet = inSet.Union(n.Topology.CPUsOfNode(id))
				}
				var err error
				if cpus, err = take(n, free.Intersection(inSet), preferred.Intersection(inSet), u, creq, req); err != nil {
					continue
				}
			}
			return &allocation{cpus: cpus, numa: spreadOver(n, set, zoneFree, need, cpus)}, nil
		}
	}
	if policy == extension.NUMATopologyPolicyBestEffort {
		cpus, err := take(n, free, preferred, u, creq, req)
		if err != nil {
			return nil, err
		}
		return &allocation{cpus: cpus}, nil
	}
	return nil, numaMisfit(n, ids, zoneFree, free, need, req, policy, sizes)
}

// withRequiredBind returns a copy of req requiring bind.
func withRequiredBind(req *request, bind extension.CPUBindPolicy) *request {
	r := *req
	r.bind, r.requiredBind = bind, true
	return &r
}

// take picks the CPUs (from preferred alone when they suffice), and checks that a required FullPCPUs
// allocation is made of whole cores.
func take(n *cache.Node, free, preferred cpuset.CPUSet, u cache.Usage, creq cpualloc.Request, req *request) (cpuset.CPUSet, error) {
	if creq.Count == 0 {
		return cpuset.New(), nil
	}
	if preferred.Size() >= creq.Count {
		if cpus, err := cpualloc.Take(n.Topology, preferred, u.Held, creq); err == nil {
			return cpus, nil
		}
	}
	cpus, err := cpualloc.Take(n.Topology, free, u.Held, creq)
	if e, ok := errors.AsType[*cpualloc.ErrNotEnough](err); ok {
		return cpus, fmt.Errorf("node has %d free CPUs (%d whole cores), the pod needs %d", e.Free, n.Topology.FullCores(free), e.Needed)
	}
	if err != nil {
		return cpus, err
	}
	if req.requiredBind && req.bind == extension.CPUBindPolicyFullPCPUs {
		if whole := n.Topology.FullCores(cpus); whole*n.Topology.CPUsPerCore != cpus.Size() {
			return cpus, fmt.Errorf("node has %d free whole cores, the pod needs %d CPUs on whole cores (FullPCPUs required)", n.Topology.FullCores(free), req.cpus)
		}
	}
	return cpus, nil
}

// numaMisfit explains why no set of NUMA nodes of the allowed sizes holds the pod.
func numaMisfit(n *cache.Node, ids []int, zoneFree map[int]quantity.Amounts, free cpuset.CPUSet, need quantity.Amounts, req *request, policy extension.NUMATopologyPolicy, sizes []int) error {
	var parts []string
	for _, id := range ids {
		inNode := free.Intersection(n.Topology.CPUsOfNode(id))
		parts = append(parts, fmt.Sprintf("NUMA node %d: %d free CPUs (%d whole cores), %s memory", id, inNode.Size(),
			n.Topology.FullCores(inNode), quantity.Format(corev1.ResourceMemory, max(zoneFree[id][corev1.ResourceMemory], 0))))
	}
	what := fmt.Sprintf("%s cpu", quantity.Format(corev1.ResourceCPU, need[corev1.ResourceCPU]))
	if req.cpus > 0 {
		what = fmt.Sprintf("%d CPUs", req.cpus)
	}
	if m := need[corev1.ResourceMemory]; m > 0 {
		what += " and " + quantity.Format(corev1.ResourceMemory, m) + " memory"
	}
	where := "on one NUMA node"
	if len(sizes) == 1 && sizes[0] > 1 {
		where = fmt.Sprintf("on %d NUMA nodes", sizes[0])
	}
	if len(sizes) == 0 {
		where = "on the node's NUMA nodes together"
	}
	return fmt.Errorf("%s; the pod needs %s %s (%s)", strings.Join(parts, "; "), what, where, policy)
}

// spreadOver places the pod's resources on the NUMA nodes of set: the CPUs where they are, the rest (memory,
// an unbound pod's cpu) filling the nodes in order.
func spreadOver(n *cache.Node, set []int, zoneFree map[int]quantity.Amounts, need quantity.Amounts, cpus cpuset.CPUSet) map[int]quantity.Amounts {
	out := map[int]quantity.Amounts{}
	for _, id := range set {
		out[id] = quantity.Amounts{}
	}
	rest := need.Clone()
	if cpus.Size() > 0 {
		for _, id := range set {
			k := cpus.Intersection(n.Topology.CPUsOfNode(id)).Size()
			out[id][corev1.ResourceCPU] = int64(k) * 1000
		}
		delete(rest, corev1.ResourceCPU)
	}
	for _, name := range numaResources {
		left := rest[name]
		for _, id := range set {
			if left <= 0 {
				break
			}
			give := min(left, max(zoneFree[id][name], 0))
			if give > 0 {
				out[id][name] += give
				left -= give
			}
		}
	}
	for id, a := range out {
		for name, v := range a {
			if v == 0 {
				delete(a, name)
			}
		}
		if len(a) == 0 {
			delete(out, id)
		}
	}
	return out
}

// fits reports whether have covers need for the NUMA-accounted resources.
func fits(have, need quantity.Amounts) bool {
	for _, name := range numaResources {
		if need[name] > have[name] {
			return false
		}
	}
	return true
}

// sum adds the amounts of the NUMA nodes in set.
func sum(m map[int]quantity.Amounts, set []int) quantity.Amounts {
	out := quantity.Amounts{}
	for _, id := range set {
		out.Add(m[id])
	}
	return out
}

// subsets returns the k-element subsets of ids, in lexicographic order.
func subsets(ids []int, k int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			out = append(out, slices.Clone(cur))
			return
		}
		for i := start; i < len(ids); i++ {
			rec(i+1, append(cur, ids[i]))
		}
	}
	rec(0, nil)
	return out
}

// anySubset reports whether some k-element subset of ids satisfies ok.
func anySubset(ids []int, k int, ok func([]int) bool) bool {
	return slices.ContainsFunc(subsets(ids, k), ok)
}
