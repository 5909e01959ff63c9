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

// Package cache holds the NodeNUMAResource plugin's state: each node's CPU topology and NUMA zones (from its
// NodeResourceTopology) and the CPUs and NUMA resources given to pods (from their
// scheduling.koordinator.sh/resource-status, or assumed by Reserve until the pod is seen with it).
package cache

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cpualloc"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Node is what a node offers: its topology, NUMA zones and the CPUs no pod may be bound to.
type Node struct {
	Topology *cpualloc.Topology
	// Zones are the allocatable resources of each NUMA node.
	Zones map[int]quantity.Amounts
	// Unavailable are the CPUs kept from binding: kubelet's static allocations and reserved CPUs, and the
	// node's reserved CPUs.
	Unavailable cpuset.CPUSet
	// KubeletStatic is set when kubelet runs the static CPU manager policy.
	KubeletStatic bool
	// Policy is the NUMA topology policy of the node's kubelet topology manager, from topologyPolicies
	// (SingleNUMANodePodLevel and SingleNUMANodeContainerLevel are SingleNUMANode, and so on), as Koordinator
	// maps them; the node's label overrides it.
	Policy extension.NUMATopologyPolicy
}

// Allocation is what a pod was given on a node.
type Allocation struct {
	Node string
	CPUs cpuset.CPUSet
	// NUMA are the resources the pod holds on each NUMA node.
	NUMA map[int]quantity.Amounts
	// Exclusive is the pod's CPU exclusive policy.
	Exclusive extension.CPUExclusivePolicy
	// Reservation is, for an owner pod, the Reservation it allocates; Reserves is set for the allocation of a
	// Reservation itself (keyed by the Reservation's UID), whose CPUs its owners take.
	Reservation types.UID
	Reserves    bool
	// assumed is set from Reserve until the pod is seen bound with its resource-status.
	assumed bool
}

// Cache is safe for concurrent use.
type Cache struct {
	mu     sync.RWMutex
	nodes  map[string]*Node
	allocs map[types.UID]*Allocation
	// byNode indexes allocations.
	byNode map[string]map[types.UID]*Allocation
	// withPolicy counts the nodes with a NUMA topology policy.
	withPolicy int
	// usage memoizes Usage by node name (*memo) until an allocation on the node changes: Filter and Score
	// read it for hundreds of nodes per pod, in parallel.
	usage sync.Map
}

// memo is a node's Usage computed for its Node object.
type memo struct {
	node  *Node
	usage Usage
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{nodes: map[string]*Node{}, allocs: map[types.UID]*Allocation{}, byNode: map[string]map[types.UID]*Allocation{}}
}

// NodeFromTopology builds a node from its NodeResourceTopology: the CPU topology annotation, the NUMA zones
// (type Node, named node-<id>) and the CPUs kubelet and the node keep. It fails, saying what, when the CPU
// topology annotation is missing or does not parse.
func NodeFromTopology(nrt *topologyv1alpha1.NodeResourceTopology, node *corev1.Node) (*Node, error) {
	info, err := extension.GetCPUTopology(nrt.Annotations)
	if err != nil {
		return nil, err
	}
	if info == nil || len(info.Detail) == 0 {
		return nil, fmt.Errorf("annotation %s is missing", extension.AnnotationNodeCPUTopology)
	}
	topo, err := cpualloc.NewTopology(info.Detail)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %w", extension.AnnotationNodeCPUTopology, err)
	}
	n := &Node{Topology: topo, Zones: map[int]quantity.Amounts{}, Unavailable: cpuset.New()}
	for _, p := range nrt.TopologyPolicies {
		for _, known := range []extension.NUMATopologyPolicy{extension.NUMATopologyPolicySingleNUMANode, extension.NUMATopologyPolicyRestricted, extension.NUMATopologyPolicyBestEffort} {
			if strings.HasPrefix(p, string(known)) {
				n.Policy = known
			}
		}
	}
	for _, z := range nrt.Zones {
		var id int
		if z.Type != "Node" {
			continue
		}
		if _, err := fmt.Sscanf(z.Name, "node-%d", &id); err != nil {
			continue
		}
		amounts := quantity.Amounts{}
		for _, r := range z.Resources {
			amounts[corev1.ResourceName(r.Name)] = quantity.Value(corev1.ResourceName(r.Name), r.Allocatable)
		}
		n.Zones[id] = amounts
	}
	if allocs, err := extension.GetPodCPUAllocs(nrt.Annotations); err == nil {
		for _, a := range allocs {
			if ids, err := extension.ParseCPUSet(a.CPUSet); err == nil {
				n.Unavailable = n.Unavailable.Union(cpuset.New(ids...))
			}
		}
	}
	if p, err := extension.GetKubeletCPUManagerPolicy(nrt.Annotations); err == nil && p != nil {
		n.KubeletStatic = p.Policy == extension.KubeletCPUManagerPolicyStatic
		if ids, err := extension.ParseCPUSet(p.ReservedCPUs); err == nil && n.KubeletStatic {
			n.Unavailable = n.Unavailable.Union(cpuset.New(ids...))
		}
	}
	if node != nil {
		if r, err := extension.GetNodeReservation(node.Annotations); err == nil && r != nil && r.ReservedCPUs != "" {
			if ids, err := extension.ParseCPUSet(r.ReservedCPUs); err == nil {
				n.Unavailable = n.Unavailable.Union(cpuset.New(ids...))
			}
		}
	}
	return n, nil
}

// SetNode records the node name (nil forgets it).
func (c *Cache) SetNode(name string, n *Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.nodes[name]; ok && old.Policy != extension.NUMATopologyPolicyNone {
		c.withPolicy--
	}
	if n == nil {
		delete(c.nodes, name)
		return
	}
	if n.Policy != extension.NUMATopologyPolicyNone {
		c.withPolicy++
	}
	c.nodes[name] = n
}

// AnyPolicy reports whether some node's topology has a NUMA topology policy.
func (c *Cache) AnyPolicy() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.withPolicy > 0
}

// Node returns the node name, if its topology is known.
func (c *Cache) Node(name string) (*Node, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n, ok := c.nodes[name]
	return n, ok
}

// Assume records what Reserve gave the pod.
func (c *Cache) Assume(uid types.UID, a Allocation) {
	a.assumed = true
	c.set(uid, &a)
}

// SetBound records the allocation of a bound pod, as its resource-status says; it replaces an assumed one.
func (c *Cache) SetBound(uid types.UID, a Allocation) {
	c.set(uid, &a)
}

func (c *Cache) set(uid types.UID, a *Allocation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(uid)
	c.allocs[uid] = a
	c.invalidate(a.Node)
	if c.byNode[a.Node] == nil {
		c.byNode[a.Node] = map[types.UID]*Allocation{}
	}
	c.byNode[a.Node][uid] = a
}

// Forget drops the pod's allocation.
func (c *Cache) Forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(uid)
}

// ForgetAssumed drops the pod's allocation if it is still only assumed (Unreserve).
func (c *Cache) ForgetAssumed(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.allocs[uid]; ok && a.assumed {
		c.forgetLocked(uid)
	}
}

func (c *Cache) forgetLocked(uid types.UID) {
	a, ok := c.allocs[uid]
	if !ok {
		return
	}
	delete(c.allocs, uid)
	c.invalidate(a.Node)
	delete(c.byNode[a.Node], uid)
	if len(c.byNode[a.Node]) == 0 {
		delete(c.byNode, a.Node)
	}
}

// Usage is what the pods on a node hold.
type Usage struct {
	// CPUs are the CPUs bound to pods.
	CPUs cpuset.CPUSet
	// NUMA are the resources held on each NUMA node.
	NUMA map[int]quantity.Amounts
	// Held are the cores of PCPULevel pods and the NUMA nodes of NUMANodeLevel pods.
	Held cpualloc.Exclusive
	// Free are the node's CPUs no pod is bound to and that are not kept from binding.
	Free cpuset.CPUSet
	// Reserved are the CPUs each Reservation on the node holds and its owners have not taken.
	Reserved map[types.UID]cpuset.CPUSet
	// ReservedNUMA are the resources each Reservation holds on each NUMA node and its owners have not taken
	// (they are in NUMA once, as the Reservation's).
	ReservedNUMA map[types.UID]map[int]quantity.Amounts
	// Single and Shared count, per NUMA node, the pods on it that use that NUMA node alone and those that
	// span several (by their CPUs and NUMA resources), for singleNUMANodeExclusive.
	Single, Shared map[int]int
	// Derived holds what callers compute from this Usage and the node alone, under keys of their own types:
	// it lives as long as the memoized Usage, until an allocation on the node or its Node changes. It is nil
	// for a Usage computed for one pod (whose own allocation it skips), which is not memoized.
	Derived *sync.Map
}

// invalidate drops the memoized usage of node; c.mu is held.
func (c *Cache) invalidate(node string) {
	c.usage.Delete(node)
}

// Usage returns what the pods on node hold, skipping the pod skip (a pod being scheduled again), with the
// CPUs still free. It is computed once per change of the node's allocations; the result must not be changed.
func (c *Cache) Usage(node string, n *Node, skip types.UID) Usage {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if _, own := c.byNode[node][skip]; !own {
		if v, ok := c.usage.Load(node); ok && v.(*memo).node == n {
			return v.(*memo).usage
		}
		u := c.usageLocked(node, n, skip)
		u.Derived = &sync.Map{}
		c.usage.Store(node, &memo{node: n, usage: u})
		return u
	}
	return c.usageLocked(node, n, skip)
}

// usageLocked computes Usage; c.mu is held.
func (c *Cache) usageLocked(node string, n *Node, skip types.UID) Usage {
	u := Usage{NUMA: map[int]quantity.Amounts{}, Held: cpualloc.Exclusive{Cores: map[int]bool{}, Nodes: map[int]bool{}},
		Single: map[int]int{}, Shared: map[int]int{}}
	var ids []int
	taken := map[types.UID][]int{}
	owners := map[types.UID][]*Allocation{}
	for uid, a := range c.byNode[node] {
		if uid == skip {
			continue
		}
		if a.Reserves {
			if u.Reserved == nil {
				u.Reserved = map[types.UID]cpuset.CPUSet{}
			}
			u.Reserved[uid] = a.CPUs
		}
		if a.Reservation != "" {
			taken[a.Reservation] = append(taken[a.Reservation], a.CPUs.UnsortedList()...)
			owners[a.Reservation] = append(owners[a.Reservation], a)
		}
		ids = append(ids, a.CPUs.UnsortedList()...)
		for id, amounts := range a.NUMA {
			if u.NUMA[id] == nil {
				u.NUMA[id] = quantity.Amounts{}
			}
			u.NUMA[id].Add(amounts)
		}
		if used := numaNodesOf(n, a); len(used) == 1 {
			u.Single[used[0]]++
		} else {
			for _, id := range used {
				u.Shared[id]++
			}
		}
		for _, cpu := range a.CPUs.UnsortedList() {
			info, ok := n.Topology.CPU(cpu)
			if !ok {
				continue
			}
			switch a.Exclusive {
			case extension.CPUExclusivePolicyPCPULevel:
				u.Held.Cores[info.Core] = true
			case extension.CPUExclusivePolicyNUMANodeLevel:
				u.Held.Nodes[info.Node] = true
			}
		}
	}
	u.CPUs = cpuset.New(ids...)
	u.Free = n.Topology.All().Difference(n.Unavailable).Difference(u.CPUs)
	for uid, cpus := range u.Reserved {
		u.Reserved[uid] = cpus.Difference(cpuset.New(taken[uid]...))
		resv := c.byNode[node][uid]
		if len(resv.NUMA) == 0 {
			continue
		}
		// What owners hold on a NUMA node comes out of the Reservation's resources there, up to them: it is
		// counted once, and the rest stays the Reservation's.
		left := map[int]quantity.Amounts{}
		for id, amounts := range resv.NUMA {
			left[id] = amounts.Clone()
		}
		for _, o := range owners[uid] {
			for id, amounts := range o.NUMA {
				for name, v := range amounts {
					inside := min(v, max(left[id][name], 0))
					if inside <= 0 {
						continue
					}
					left[id][name] -= inside
					u.NUMA[id][name] -= inside
				}
			}
		}
		if u.ReservedNUMA == nil {
			u.ReservedNUMA = map[types.UID]map[int]quantity.Amounts{}
		}
		u.ReservedNUMA[uid] = left
	}
	return u
}

// numaNodesOf returns the NUMA nodes a holds resources or CPUs on, in order.
func numaNodesOf(n *Node, a *Allocation) []int {
	ids := n.Topology.NodesOf(a.CPUs)
	for id, amounts := range a.NUMA {
		if !amounts.IsZero() && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
