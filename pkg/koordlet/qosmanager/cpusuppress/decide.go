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

package cpusuppress

import (
	"cmp"
	"math"
	"slices"

	"k8s.io/utils/cpuset"
)

// Step limits of the policies (Koordinator's).
const (
	// MinCPUSetCores is the fewest CPUs the BE pods keep under the cpuset policy.
	MinCPUSetCores = 2
	// MaxIncreasePercent is how much the BE allowance may grow per round, in percent of the node's CPUs; it
	// may shrink at once.
	MaxIncreasePercent = 10
	// MinQuotaUs is the smallest CFS quota the besteffort cgroup gets under the cfsQuota policy.
	MinQuotaUs = 2000
	// SkipQuotaDeltaPercent: a new quota that differs from the current one by less than this, in percent of
	// the node's CPU, is not written.
	SkipQuotaDeltaPercent = 1
)

// Inputs are the terms of the BE allowance, CPU in cores.
type Inputs struct {
	// Capacity is the node's CPU capacity.
	Capacity float64
	// ThresholdPercent is cpuSuppressThresholdPercent.
	ThresholdPercent int64
	// MinPercent is cpuSuppressMinPercent; nil for no floor.
	MinPercent *int64
	// NonBEPodsUsage is the CPU used by the pods that are not BE.
	NonBEPodsUsage float64
	// NonBEHostAppsUsage is the CPU used by the host applications (the NodeSLO's hostApplications) that are not
	// BE.
	NonBEHostAppsUsage float64
	// SystemUsage is the CPU used outside pods.
	SystemUsage float64
	// NodeReserved is the CPU kept from pods (kubelet's and the node annotation's reservation).
	NodeReserved float64
	// PSIThresholdPercent is cpuSuppressPSIThresholdPercent; nil turns the pressure rule off.
	PSIThresholdPercent *int64
	// NonBEPressure is the largest CPU pressure (some avg10, percent) of the pods that are not BE; 0 without
	// samples.
	NonBEPressure float64
	// pressureSampled is set when some pod that is not BE had a pressure sample.
	pressureSampled bool
}

// BEAllowed returns the CPU, in cores, the BE pods may use:
//
//	Capacity × ThresholdPercent/100 − NonBEPodsUsage − NonBEHostAppsUsage − max(SystemUsage, NodeReserved)
//
// scaled by PSIThresholdPercent / NonBEPressure when the pressure is above the threshold (the pressure rule),
// then raised to Capacity × MinPercent/100 when MinPercent is set, and to 0 otherwise. The result is rounded to
// milli-cores: usage samples are kept in single precision, which would otherwise show in the quota.
func BEAllowed(in Inputs) float64 {
	allowed := in.Capacity*float64(in.ThresholdPercent)/100 - in.NonBEPodsUsage - in.NonBEHostAppsUsage - max(in.SystemUsage, in.NodeReserved)
	if t := in.PSIThresholdPercent; t != nil && *t > 0 && in.NonBEPressure > float64(*t) && allowed > 0 {
		allowed *= float64(*t) / in.NonBEPressure
	}
	floor := 0.0
	if in.MinPercent != nil {
		floor = in.Capacity * float64(*in.MinPercent) / 100
	}
	return math.Round(max(allowed, floor)*1000) / 1000
}

// CPUSetSize returns how many CPUs the BE pods get under the cpuset policy: ceil(allowed), at least
// MinCPUSetCores, at most current + ceil(total × MaxIncreasePercent/100) when growing from the current size,
// and at most available (the CPUs BE pods may use at all).
func CPUSetSize(allowed float64, current, total, available int) int {
	n := max(int(math.Ceil(allowed-1e-9)), MinCPUSetCores)
	maxIncrease := int(math.Ceil(float64(total) * MaxIncreasePercent / 100))
	if n > current+maxIncrease {
		n = current + maxIncrease
	}
	return min(n, available)
}

// CFSQuota returns the CFS quota, in µs, of the besteffort cgroup under the cfsQuota policy and whether to
// write it. The target is allowed × periodUs, at least MinQuotaUs. It is not written when it differs from
// currentUs by less than SkipQuotaDeltaPercent of the node's CPU (unless it is the minimum), and an increase is
// limited to MaxIncreasePercent of the node's CPU per round once a quota is set (currentUs != -1). A decrease
// is immediate.
func CFSQuota(allowed, capacity float64, currentUs, periodUs int64) (quotaUs int64, write bool) {
	target := max(int64(math.Round(allowed*float64(periodUs))), MinQuotaUs)
	nodeUs := capacity * float64(periodUs)
	if math.Abs(float64(target-currentUs)) < nodeUs*SkipQuotaDeltaPercent/100 && target != MinQuotaUs {
		return currentUs, false
	}
	if maxIncrease := int64(nodeUs * MaxIncreasePercent / 100); currentUs != -1 && target-currentUs > maxIncrease {
		target = currentUs + maxIncrease
	}
	return target, target != currentUs
}

// CPUInfo places a logical CPU in the machine. Without topology every CPU counts as its own core on NUMA
// node 0.
type CPUInfo struct {
	// ID is the logical CPU number.
	ID int
	// Core identifies the physical core within its socket; hyper-thread siblings share it.
	Core int
	// Socket is the physical package.
	Socket int
	// Node is the NUMA node.
	Node int
}

// Pools are the CPUs BE pods may be given: the LSR pods' CPUs (shared with BE only) and the shared pool of LS
// pods. The CPUs of LSE pods and the node's reserved CPUs are in neither.
type Pools struct {
	// LSR are the CPUs bound to LSR pods.
	LSR cpuset.CPUSet
	// LS are the other eligible CPUs.
	LS cpuset.CPUSet
}

// All returns LSR ∪ LS.
func (p Pools) All() cpuset.CPUSet { return p.LSR.Union(p.LS) }

// SelectCPUs picks n CPUs for BE pods from pools, proportionally to the sizes of the LSR and LS pools (the
// LSR share rounded down), within each pool spreading over NUMA nodes and taking hyper-thread siblings
// together (see pick). topology maps CPU IDs to their place; CPUs it lacks count as their own core on node 0.
// The choice depends only on its arguments, so the same allowance gives the same CPUs round after round.
func SelectCPUs(n int, pools Pools, topology map[int]CPUInfo) cpuset.CPUSet {
	lsr, ls := pools.LSR.Size(), pools.LS.Size()
	if n <= 0 || lsr+ls == 0 {
		return cpuset.New()
	}
	n = min(n, lsr+ls)
	fromLSR := n * lsr / (lsr + ls)
	fromLS := n - fromLSR
	if fromLS > ls {
		fromLSR, fromLS = n-ls, ls
	}
	return cpuset.New(append(pick(fromLSR, pools.LSR, topology), pick(fromLS, pools.LS, topology)...)...)
}

// pick takes n CPUs of set: NUMA nodes in turn (the node with most eligible CPUs first, ties by lowest CPU),
// each turn taking the next core of that node (cores in order of socket, core and lowest CPU) whole, or as
// many of its siblings as are still needed.
func pick(n int, set cpuset.CPUSet, topology map[int]CPUInfo) []int {
	if n <= 0 {
		return nil
	}
	type core struct {
		socket, id int
		cpus       []int
	}
	type node struct {
		cores []*core
		size  int
		first int
	}
	info := func(id int) CPUInfo {
		if ci, ok := topology[id]; ok {
			return ci
		}
		return CPUInfo{ID: id, Core: id}
	}
	byNode := map[int]*node{}
	byCore := map[[3]int]*core{}
	for _, id := range set.List() {
		ci := info(id)
		nd := byNode[ci.Node]
		if nd == nil {
			nd = &node{first: id}
			byNode[ci.Node] = nd
		}
		nd.size++
		key := [3]int{ci.Node, ci.Socket, ci.Core}
		c := byCore[key]
		if c == nil {
			c = &core{socket: ci.Socket, id: ci.Core}
			byCore[key] = c
			nd.cores = append(nd.cores, c)
		}
		c.cpus = append(c.cpus, id)
	}
	nodes := make([]*node, 0, len(byNode))
	for _, nd := range byNode {
		slices.SortFunc(nd.cores, func(a, b *core) int {
			return cmp.Or(cmp.Compare(a.socket, b.socket), cmp.Compare(a.id, b.id), cmp.Compare(a.cpus[0], b.cpus[0]))
		})
		nodes = append(nodes, nd)
	}
	slices.SortFunc(nodes, func(a, b *node) int {
		return cmp.Or(cmp.Compare(b.size, a.size), cmp.Compare(a.first, b.first))
	})

	out := make([]int, 0, n)
	next := make([]int, len(nodes))
	for len(out) < n {
		progressed := false
		for i, nd := range nodes {
			if len(out) == n {
				break
			}
			if next[i] == len(nd.cores) {
				continue
			}
			c := nd.cores[next[i]]
			next[i]++
			take := min(len(c.cpus), n-len(out))
			out = append(out, c.cpus[:take]...)
			progressed = true
		}
		if !progressed {
			break
		}
	}
	return out
}
