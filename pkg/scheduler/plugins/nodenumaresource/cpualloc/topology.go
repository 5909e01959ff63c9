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

// Package cpualloc is the CPU accumulator of the NodeNUMAResource plugin: given a node's CPU topology, the
// CPUs still free and what exclusive pods hold, it picks the logical CPUs for a pod the way Koordinator's
// koord-scheduler does (FullPCPUs packs whole physical cores, SpreadByPCPUs one logical CPU per core first;
// one NUMA node if possible, chosen by the NUMA allocate strategy, else one socket, else the sockets with the
// most free cores), and explains a failure in numbers.
package cpualloc

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
)

// CPU places one logical CPU.
type CPU struct {
	ID, Core, Socket, Node int
}

// Topology is a node's CPU topology.
type Topology struct {
	cpus map[int]CPU
	// ids are the CPU IDs, sorted.
	ids []int
	// CPUsPerCore, CPUsPerNode and CPUsPerSocket are the largest number of logical CPUs of a core, a NUMA node
	// and a socket.
	CPUsPerCore, CPUsPerNode, CPUsPerSocket int
	// Nodes and Sockets are the NUMA node and socket IDs, sorted.
	Nodes, Sockets []int

	// all, byNode and coreSize are computed once: every CPU, the CPUs of each NUMA node, the CPUs of each core.
	all      cpuset.CPUSet
	byNode   map[int]cpuset.CPUSet
	coreSize map[int]int
}

// NewTopology builds the topology of the CPUs koordlet reported. It fails on a negative or repeated CPU ID,
// and on a core split over sockets or NUMA nodes.
func NewTopology(infos []extension.CPUInfo) (*Topology, error) {
	t := &Topology{cpus: make(map[int]CPU, len(infos))}
	coreAt := map[int]CPU{}
	perCore, perNode, perSocket := map[int]int{}, map[int]int{}, map[int]int{}
	var errs []error
	for _, in := range infos {
		c := CPU{ID: int(in.ID), Core: int(in.Core), Socket: int(in.Socket), Node: int(in.Node)}
		if c.ID < 0 || c.Core < 0 || c.Socket < 0 || c.Node < 0 {
			errs = append(errs, fmt.Errorf("cpu %d: negative id, core, socket or node", c.ID))
			continue
		}
		if _, dup := t.cpus[c.ID]; dup {
			errs = append(errs, fmt.Errorf("cpu %d is listed twice", c.ID))
			continue
		}
		if first, ok := coreAt[c.Core]; ok && (first.Socket != c.Socket || first.Node != c.Node) {
			errs = append(errs, fmt.Errorf("core %d spans CPUs %d and %d on different sockets or NUMA nodes", c.Core, first.ID, c.ID))
			continue
		}
		coreAt[c.Core] = c
		t.cpus[c.ID] = c
		t.ids = append(t.ids, c.ID)
		perCore[c.Core]++
		perNode[c.Node]++
		perSocket[c.Socket]++
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(t.cpus) == 0 {
		return nil, errors.New("the topology has no CPU")
	}
	slices.Sort(t.ids)
	t.CPUsPerCore, t.CPUsPerNode, t.CPUsPerSocket = maxValue(perCore), maxValue(perNode), maxValue(perSocket)
	t.Nodes, t.Sockets = sortedKeys(perNode), sortedKeys(perSocket)
	t.all, t.coreSize = cpuset.New(t.ids...), perCore
	nodeIDs := map[int][]int{}
	for _, id := range t.ids {
		nodeIDs[t.cpus[id].Node] = append(nodeIDs[t.cpus[id].Node], id)
	}
	t.byNode = make(map[int]cpuset.CPUSet, len(nodeIDs))
	for n, ids := range nodeIDs {
		t.byNode[n] = cpuset.New(ids...)
	}
	return t, nil
}

// CPU returns the place of CPU id.
func (t *Topology) CPU(id int) (CPU, bool) {
	c, ok := t.cpus[id]
	return c, ok
}

// All returns every CPU of the topology.
func (t *Topology) All() cpuset.CPUSet { return t.all }

// CPUsOfNode returns the CPUs of NUMA node node.
func (t *Topology) CPUsOfNode(node int) cpuset.CPUSet {
	if s, ok := t.byNode[node]; ok {
		return s
	}
	return cpuset.New()
}

// NodesOf returns the NUMA nodes of cpus, sorted.
func (t *Topology) NodesOf(cpus cpuset.CPUSet) []int {
	seen := map[int]bool{}
	for _, id := range cpus.UnsortedList() {
		if c, ok := t.cpus[id]; ok {
			seen[c.Node] = true
		}
	}
	return sortedKeys(seen)
}

// FullCores returns how many physical cores are wholly within cpus.
func (t *Topology) FullCores(cpus cpuset.CPUSet) int {
	free := map[int]int{}
	size := t.coreSize
	for _, id := range cpus.UnsortedList() {
		if c, ok := t.cpus[id]; ok {
			free[c.Core]++
		}
	}
	n := 0
	for core, k := range free {
		if k == size[core] {
			n++
		}
	}
	return n
}

func maxValue(m map[int]int) int {
	v := 0
	for _, n := range m {
		v = max(v, n)
	}
	return v
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare[int])
	return keys
}
