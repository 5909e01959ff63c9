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

package cpualloc

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
)

// Request is what a pod asks for.
type Request struct {
	// Count is the number of logical CPUs.
	Count int
	// Bind is FullPCPUs (whole physical cores first) or SpreadByPCPUs (one logical CPU per core first).
	Bind extension.CPUBindPolicy
	// Exclusive keeps the CPUs off the physical cores (PCPULevel) or NUMA nodes (NUMANodeLevel) of other pods
	// with the same exclusive policy, when there is another choice.
	Exclusive extension.CPUExclusivePolicy
	// Strategy orders the NUMA nodes and sockets that fit: MostAllocated (fewest free CPUs first) or
	// LeastAllocated (most free first, the default).
	Strategy extension.NUMAAllocateStrategy
}

// Exclusive is what other pods hold with an exclusive policy: the physical cores of PCPULevel pods and the
// NUMA nodes of NUMANodeLevel pods.
type Exclusive struct {
	Cores, Nodes map[int]bool
}

// ErrNotEnough reports that the free CPUs cannot satisfy a request.
type ErrNotEnough struct {
	Needed, Free int
}

func (e *ErrNotEnough) Error() string {
	return fmt.Sprintf("%d free CPUs, the pod needs %d", e.Free, e.Needed)
}

// Take picks req.Count of the free CPUs for a pod:
//
//  1. FullPCPUs (also when cores have one CPU): whole free cores of one NUMA node, the nodes in the order of
//     req.Strategy (then by their socket's free CPUs, then ID), nodes without other NUMANodeLevel pods first;
//     else of one socket; else from the sockets with the most free cores, whole sockets first, then core by
//     core from the fullest.
//  2. SpreadByPCPUs (and FullPCPUs left short): the free CPUs of one NUMA node (then one socket), one logical
//     CPU per core first.
//  3. Else any free CPUs, one per core first, CPUs off other PCPULevel pods' cores first.
//
// Within a node, cores with more free CPUs come first, then by core ID, so the result depends only on the
// arguments.
func Take(t *Topology, free cpuset.CPUSet, held Exclusive, req Request) (cpuset.CPUSet, error) {
	a := &accumulator{t: t, held: held, req: req, needed: req.Count, free: map[int]CPU{}}
	for _, id := range free.UnsortedList() {
		if c, ok := t.cpus[id]; ok {
			a.free[id] = c
		}
	}
	if req.Count <= 0 {
		return cpuset.New(), nil
	}
	if req.Count > len(a.free) {
		return cpuset.New(), &ErrNotEnough{Needed: req.Count, Free: len(a.free)}
	}
	if req.Bind != extension.CPUBindPolicySpreadByPCPUs || t.CPUsPerCore == 1 {
		if a.fullCores() {
			return a.result(), nil
		}
	}
	if req.Bind != extension.CPUBindPolicyFullPCPUs && a.needed == req.Count {
		if a.spreadInOneDomain() {
			return a.result(), nil
		}
	}
	for _, avoidExclusive := range []bool{true, false} {
		for _, id := range a.spread(a.freeCPUs(avoidExclusive)) {
			if a.needed == 0 {
				break
			}
			a.take(id)
		}
	}
	if a.needed > 0 {
		return cpuset.New(), &ErrNotEnough{Needed: req.Count, Free: free.Size()}
	}
	return a.result(), nil
}

// accumulator is the state of one Take.
type accumulator struct {
	t      *Topology
	held   Exclusive
	req    Request
	free   map[int]CPU
	taken  []int
	needed int
}

func (a *accumulator) take(ids ...int) {
	for _, id := range ids {
		delete(a.free, id)
		a.taken = append(a.taken, id)
	}
	a.needed -= len(ids)
}

func (a *accumulator) result() cpuset.CPUSet { return cpuset.New(a.taken...) }

// group is the free CPUs of one NUMA node or socket, in the order they are taken.
type group struct {
	id, socket int
	cpus       []int
}

// fullCores takes whole free cores (step 1 of Take); it reports whether the request is satisfied.
func (a *accumulator) fullCores() bool {
	if a.needed <= a.t.CPUsPerNode {
		for _, avoid := range []bool{true, false} {
			for _, g := range a.groups(byNode, true, avoid) {
				if len(g.cpus) >= a.needed {
					a.take(g.cpus[:a.needed]...)
					return true
				}
			}
		}
	}
	if a.needed <= a.t.CPUsPerSocket {
		for _, g := range a.groups(bySocket, true, false) {
			if len(g.cpus) >= a.needed {
				a.take(g.cpus[:a.needed]...)
				return true
			}
		}
	}
	// Across sockets: the sockets with the most free cores, whole, while they fit in what is needed; then core
	// by core from the sockets with the fewest.
	sockets := a.groups(bySocket, true, false)
	slices.SortStableFunc(sockets, func(x, y group) int { return cmp.Compare(len(y.cpus), len(x.cpus)) })
	var rest []group
	for _, g := range sockets {
		if len(g.cpus) <= a.needed {
			a.take(g.cpus...)
			if a.needed == 0 {
				return true
			}
			continue
		}
		rest = append(rest, g)
	}
	slices.SortStableFunc(rest, func(x, y group) int { return cmp.Compare(len(x.cpus), len(y.cpus)) })
	per := a.t.CPUsPerCore
	for _, g := range rest {
		for i := 0; i+per <= len(g.cpus) && a.needed >= per; i += per {
			a.take(g.cpus[i : i+per]...)
		}
		if a.needed == 0 {
			return true
		}
	}
	return false
}

// spreadInOneDomain takes the free CPUs of one NUMA node, else of one socket, one per core first (step 2).
func (a *accumulator) spreadInOneDomain() bool {
	for _, scope := range []scope{byNode, bySocket} {
		limit := a.t.CPUsPerNode
		if scope == bySocket {
			limit = a.t.CPUsPerSocket
		}
		if a.needed > limit {
			continue
		}
		for _, avoid := range []bool{true, false} {
			for _, g := range a.groups(scope, false, avoid) {
				if len(g.cpus) >= a.needed {
					a.take(a.spread(g.cpus)[:a.needed]...)
					return true
				}
			}
		}
	}
	return false
}

type scope int

const (
	byNode scope = iota
	bySocket
)

// groups returns the free CPUs by NUMA node or socket, ordered by the request's strategy (then by the free
// CPUs of their socket, then ID). With wholeCores only cores all of whose CPUs are free count; with
// avoidExclusive the NUMA nodes of NUMANodeLevel pods (for a NUMANodeLevel request) and the cores of
// PCPULevel pods (for a PCPULevel request) are left out. Within a group, cores with more free CPUs come
// first, then by core ID; a core's CPUs by ID.
func (a *accumulator) groups(s scope, wholeCores, avoidExclusive bool) []group {
	coreSize := a.t.coreSize
	byCore := map[int][]int{}
	socketFree := map[int]int{}
	for id, c := range a.free {
		if avoidExclusive && a.excluded(c) {
			continue
		}
		byCore[c.Core] = append(byCore[c.Core], id)
		socketFree[c.Socket]++
	}
	type coreEntry struct {
		core int
		cpus []int
	}
	members := map[int][]coreEntry{}
	sockets := map[int]int{}
	for core, ids := range byCore {
		if wholeCores && len(ids) != coreSize[core] {
			continue
		}
		slices.Sort(ids)
		c := a.t.cpus[ids[0]]
		key := c.Node
		if s == bySocket {
			key = c.Socket
		}
		members[key] = append(members[key], coreEntry{core, ids})
		sockets[key] = c.Socket
	}
	out := make([]group, 0, len(members))
	for key, cores := range members {
		slices.SortFunc(cores, func(x, y coreEntry) int {
			return cmp.Or(cmp.Compare(len(y.cpus), len(x.cpus)), cmp.Compare(x.core, y.core))
		})
		g := group{id: key, socket: sockets[key]}
		for _, ce := range cores {
			g.cpus = append(g.cpus, ce.cpus...)
		}
		out = append(out, g)
	}
	mostAllocated := a.req.Strategy == extension.NUMAMostAllocated
	slices.SortFunc(out, func(x, y group) int {
		order := func(i, j int) int {
			if mostAllocated {
				return cmp.Compare(i, j)
			}
			return cmp.Compare(j, i)
		}
		return cmp.Or(order(len(x.cpus), len(y.cpus)), order(socketFree[x.socket], socketFree[y.socket]), cmp.Compare(x.id, y.id))
	})
	return out
}

// excluded reports whether c is on a core or NUMA node another pod holds with the request's exclusive policy.
func (a *accumulator) excluded(c CPU) bool {
	switch a.req.Exclusive {
	case extension.CPUExclusivePolicyPCPULevel:
		return a.held.Cores[c.Core]
	case extension.CPUExclusivePolicyNUMANodeLevel:
		return a.held.Nodes[c.Node]
	}
	return false
}

// freeCPUs returns the free CPUs, with avoidExclusive those of other exclusive pods' cores and nodes left out.
func (a *accumulator) freeCPUs(avoidExclusive bool) []int {
	var ids []int
	for id, c := range a.free {
		if !avoidExclusive || !a.excluded(c) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// spread orders cpus one per physical core first: the first CPU of each core (cores in the order they come),
// then the second of each, and so on.
func (a *accumulator) spread(cpus []int) []int {
	var cores []int
	byCore := map[int][]int{}
	for _, id := range cpus {
		core := a.t.cpus[id].Core
		if _, ok := byCore[core]; !ok {
			cores = append(cores, core)
		}
		byCore[core] = append(byCore[core], id)
	}
	out := make([]int, 0, len(cpus))
	for round := 0; len(out) < len(cpus); round++ {
		for _, core := range cores {
			if ids := byCore[core]; round < len(ids) {
				out = append(out, ids[round])
			}
		}
	}
	return out
}
