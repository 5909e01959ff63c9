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
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cpualloc"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// request is what a pod asks of the plugin, read once at PreFilter.
type request struct {
	shape
	// amounts are the pod's cpu (milli) and memory requests.
	amounts quantity.Amounts
}

// shape is everything of a request but its amounts; it is comparable, so that it keys memoized allocations
// (allocationKey) whatever fields it gains.
type shape struct {
	// cpus is the number of CPUs to bind (LSE and LSR pods with an integer CPU request); 0 binds none.
	cpus int
	// bind is the bind policy, required when requiredBind.
	bind         extension.CPUBindPolicy
	requiredBind bool
	exclusive    extension.CPUExclusivePolicy
	// numaPolicy is the pod's numa-topology-spec policy; the node's label applies when it is empty.
	numaPolicy extension.NUMATopologyPolicy
	// numaExclusive is the pod's singleNUMANodeExclusive: Required when it names none but has a numaPolicy.
	numaExclusive extension.NUMATopologyExclusive
}

// allocation is what a node gives the pod.
type allocation struct {
	cpus cpuset.CPUSet
	// numa are the resources held on each NUMA node; nil without a NUMA policy.
	numa map[int]quantity.Amounts
}

// grant is what the Reservations a pod may allocate hold for it: it takes their CPUs first, and they and
// the Reservations' NUMA resources count as free for it.
type grant struct {
	cpus cpuset.CPUSet
	numa map[int]quantity.Amounts
}

// numaResources are the resources accounted per NUMA node.
var numaResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// rules are what the plugin's args decide about allocations.
type rules struct {
	// numaScoring rates the NUMA node sets that could hold a pod with a NUMA topology policy
	// (numaScoringStrategy); the best rated of the smallest size is taken.
	numaScoring config.ScoringStrategy
	// strategy is the NUMA allocate strategy of nodes without the numa-allocate-strategy label: MostAllocated
	// when numaScoring is, else LeastAllocated, as in Koordinator.
	strategy extension.NUMAAllocateStrategy
}

// newRules returns the rules of args.
func newRules(args *config.NodeNUMAResourceArgs) rules {
	r := rules{strategy: extension.NUMALeastAllocated}
	if args.NUMAScoringStrategy != nil {
		r.numaScoring = *args.NUMAScoringStrategy
		if r.numaScoring.Type == config.MostAllocated {
			r.strategy = extension.NUMAMostAllocated
		}
	}
	return r
}

// allocate decides what node gives the pod, or returns the reason it cannot, with the numbers a person can act
// on. labels are the node's (its required bind policy, NUMA topology policy and allocate strategy); g is what
// the Reservations the pod may allocate hold for it; fitsNUMA, when not nil, says whether the other plugins'
// parts of the pod (its devices) fit within a NUMA node set, and names the one that does not.
func (r rules) allocate(n *cache.Node, u cache.Usage, req *request, labels map[string]string, g grant, fitsNUMA func([]int) (bool, string)) (*allocation, error) {
	creq := cpualloc.Request{Count: req.cpus, Bind: req.bind, Exclusive: req.exclusive,
		Strategy: extension.NUMAAllocateStrategy(labels[extension.LabelNodeNUMAAllocateStrategy])}
	if creq.Strategy == "" {
		creq.Strategy = r.strategy
	}
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
	preferred := g.cpus
	free := u.Free.Union(preferred)

	if policy == extension.NUMATopologyPolicyNone || len(n.Zones) == 0 {
		cpus, err := takeAnywhere(n, free, preferred, u, creq, req)
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
		f.Add(g.numa[id])
		zoneFree[id] = f
	}
	need := quantity.Amounts{}
	need.Add(req.amounts)
	if req.cpus > 0 {
		need[corev1.ResourceCPU] = int64(req.cpus) * 1000
	}
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

	// singleNUMANodeExclusive: Required under SingleNUMANode and Restricted refuses the NUMA node sets that
	// would mix pods on one NUMA node with pods spanning several; Preferred (and Required under BestEffort)
	// takes them only when no other set holds the pod.
	checks := []bool{false}
	switch {
	case req.numaExclusive == extension.NUMATopologyExclusiveRequired && policy != extension.NUMATopologyPolicyBestEffort:
		checks = []bool{true}
	case req.numaExclusive != "":
		checks = []bool{true, false}
	}
	granted := n.Topology.NodesOf(g.cpus)
	for id, amounts := range g.numa {
		if !amounts.IsZero() && !slices.Contains(granted, id) {
			granted = append(granted, id)
		}
	}
	mixed, blockedBy := false, ""
	for _, exclusive := range checks {
		for _, k := range sizes {
			sets := subsets(ids, k)
			scores := make([]int64, len(sets))
			for i, set := range sets {
				scores[i] = r.scoreSet(n, zoneFree, set, need)
			}
			order := make([]int, len(sets))
			for i := range order {
				order[i] = i
			}
			// An owner uses its Reservations first: the sets with their NUMA nodes come first.
			slices.SortStableFunc(order, func(a, b int) int {
				if ga, gb := touches(sets[a], granted), touches(sets[b], granted); ga != gb {
					if ga {
						return -1
					}
					return 1
				}
				return cmp.Compare(scores[b], scores[a])
			})
			for _, i := range order {
				set := sets[i]
				if !fits(sum(zoneFree, set), need) {
					continue
				}
				if exclusive && mixes(u, set) {
					mixed = true
					continue
				}
				if fitsNUMA != nil {
					if ok, by := fitsNUMA(set); !ok {
						blockedBy = by
						continue
					}
				}
				cpus := cpuset.New()
				if req.cpus > 0 {
					inSet := cpuset.New()
					for _, id := range set {
						inSet = inSet.Union(n.Topology.CPUsOfNode(id))
					}
					var err error
					if creq.Strategy == extension.NUMADistributeEvenly && len(set) > 1 {
						cpus, err = takeEvenly(n, free.Intersection(inSet), preferred.Intersection(inSet), u, creq, req, set)
					} else {
						cpus, err = take(n, free.Intersection(inSet), preferred.Intersection(inSet), u, creq, req)
					}
					if err != nil {
						continue
					}
				}
				return &allocation{cpus: cpus, numa: spreadOver(n, set, zoneFree, need, cpus)}, nil
			}
		}
	}
	if policy == extension.NUMATopologyPolicyBestEffort {
		cpus, err := takeAnywhere(n, free, preferred, u, creq, req)
		if err != nil {
			return nil, err
		}
		return &allocation{cpus: cpus}, nil
	}
	if blockedBy != "" {
		return nil, fmt.Errorf("no NUMA node set that holds the pod's CPUs and memory (%s) also holds what %s gives it (its devices)", policy, blockedBy)
	}
	if mixed {
		return nil, exclusiveMisfit(ids, u, req, policy)
	}
	return nil, numaMisfit(n, ids, zoneFree, free, need, req, policy, sizes)
}

// scoreSet rates the NUMA node set by numaScoring over the resources it weighs, with the pod placed:
// LeastAllocated gives 100 × the weighted share left free, MostAllocated 100 × the share used.
func (r rules) scoreSet(n *cache.Node, zoneFree map[int]quantity.Amounts, set []int, need quantity.Amounts) int64 {
	total, free := sum(n.Zones, set), sum(zoneFree, set)
	var sum, weights int64
	for _, res := range r.numaScoring.Resources {
		name := corev1.ResourceName(res.Name)
		t := total[name]
		if t <= 0 {
			continue
		}
		used := min(max(t-free[name]+need[name], 0), t)
		share := used * fwk.MaxScore / t
		if r.numaScoring.Type != config.MostAllocated {
			share = fwk.MaxScore - share
		}
		sum += share * res.Weight
		weights += res.Weight
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// touches reports whether set has one of the NUMA nodes ids.
func touches(set, ids []int) bool {
	return slices.ContainsFunc(set, func(id int) bool { return slices.Contains(ids, id) })
}

// mixes reports whether placing a pod on the NUMA nodes of set would put a pod spanning several NUMA nodes
// next to one that uses a NUMA node alone: set has one NUMA node where pods spanning several are, or several
// of which one holds only single-NUMA pods (Koordinator's rule).
func mixes(u cache.Usage, set []int) bool {
	if len(set) == 1 {
		return u.Shared[set[0]] > 0
	}
	for _, id := range set {
		if u.Single[id] > 0 && u.Shared[id] == 0 {
			return true
		}
	}
	return false
}

// exclusiveMisfit explains a pod refused only by singleNUMANodeExclusive.
func exclusiveMisfit(ids []int, u cache.Usage, req *request, policy extension.NUMATopologyPolicy) error {
	var parts []string
	for _, id := range ids {
		state := "no NUMA-aligned pods"
		switch {
		case u.Shared[id] > 0 && u.Single[id] > 0:
			state = fmt.Sprintf("%d pods on it alone and %d spanning NUMA nodes", u.Single[id], u.Shared[id])
		case u.Shared[id] > 0:
			state = fmt.Sprintf("%d pods spanning NUMA nodes", u.Shared[id])
		case u.Single[id] > 0:
			state = fmt.Sprintf("%d pods on it alone", u.Single[id])
		}
		parts = append(parts, fmt.Sprintf("NUMA node %d: %s", id, state))
	}
	return fmt.Errorf("%s; the NUMA nodes that have room would mix pods on one NUMA node with pods spanning several (singleNUMANodeExclusive %s, %s)",
		strings.Join(parts, "; "), req.numaExclusive, policy)
}

// takeAnywhere takes the CPUs from the node's free ones; with DistributeEvenly, CPUs that span NUMA nodes
// are taken in equal shares from the NUMA nodes with the most free CPUs, as many as the first choice spanned.
func takeAnywhere(n *cache.Node, free, preferred cpuset.CPUSet, u cache.Usage, creq cpualloc.Request, req *request) (cpuset.CPUSet, error) {
	cpus, err := take(n, free, preferred, u, creq, req)
	if err != nil || creq.Strategy != extension.NUMADistributeEvenly {
		return cpus, err
	}
	spanned := len(n.Topology.NodesOf(cpus))
	if spanned < 2 {
		return cpus, nil
	}
	nodes := n.Topology.NodesOf(n.Topology.All())
	slices.SortStableFunc(nodes, func(a, b int) int {
		return cmp.Compare(free.Intersection(n.Topology.CPUsOfNode(b)).Size(), free.Intersection(n.Topology.CPUsOfNode(a)).Size())
	})
	set := nodes[:spanned]
	inSet := cpuset.New()
	for _, id := range set {
		inSet = inSet.Union(n.Topology.CPUsOfNode(id))
	}
	if even, err := takeEvenly(n, free.Intersection(inSet), preferred.Intersection(inSet), u, creq, req, set); err == nil {
		return even, nil
	}
	return cpus, nil
}

// takeEvenly takes the CPUs in equal shares from the NUMA nodes of set (whole cores for FullPCPUs): the
// NUMA nodes with fewer free CPUs first, so that what one cannot give falls to those after it.
func takeEvenly(n *cache.Node, free, preferred cpuset.CPUSet, u cache.Usage, creq cpualloc.Request, req *request, set []int) (cpuset.CPUSet, error) {
	order := slices.Clone(set)
	freeIn := func(id int) cpuset.CPUSet { return free.Intersection(n.Topology.CPUsOfNode(id)) }
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(freeIn(a).Size(), freeIn(b).Size()) })
	unit := 1
	if creq.Bind == extension.CPUBindPolicyFullPCPUs {
		unit = n.Topology.CPUsPerCore
	}
	got, left := cpuset.New(), creq.Count
	for i, id := range order {
		in := freeIn(id)
		room := in.Size()
		if unit > 1 {
			room = n.Topology.FullCores(in) * unit
		}
		share := min(left/(len(order)-i)/unit*unit, room)
		if share == 0 {
			continue
		}
		part := creq
		part.Count = share
		cpus, err := take(n, in, preferred.Intersection(in), u, part, req)
		if err != nil {
			return cpus, err
		}
		got, left = got.Union(cpus), left-cpus.Size()
	}
	if left > 0 {
		part := creq
		part.Count = left
		rest := free.Difference(got)
		cpus, err := take(n, rest, preferred.Intersection(rest), u, part, req)
		if err != nil {
			return cpus, err
		}
		got = got.Union(cpus)
	}
	return got, nil
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
// an unbound pod's cpu) in equal shares, the NUMA nodes with less free first so that what one cannot give
// falls to those after it (Koordinator's even distribution).
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
		order := slices.Clone(set)
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(zoneFree[a][name], zoneFree[b][name]) })
		for i, id := range order {
			if left <= 0 {
				break
			}
			give := min(left/int64(len(order)-i), max(zoneFree[id][name], 0))
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
