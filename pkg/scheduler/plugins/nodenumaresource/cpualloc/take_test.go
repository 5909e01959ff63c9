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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
)

// build makes a topology of sockets × nodesPerSocket NUMA nodes × coresPerNode cores × threads, numbered as
// Linux numbers them: the first thread of every core, then the second; core IDs are unique on the machine.
func build(t testing.TB, sockets, nodesPerSocket, coresPerNode, threads int) *Topology {
	t.Helper()
	cores := sockets * nodesPerSocket * coresPerNode
	var infos []extension.CPUInfo
	for th := range threads {
		for core := range cores {
			node := core / coresPerNode
			infos = append(infos, extension.CPUInfo{ID: int32(th*cores + core), Core: int32(core), Node: int32(node), Socket: int32(node / nodesPerSocket)})
		}
	}
	topo, err := NewTopology(infos)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestTake(t *testing.T) {
	// oneSocket: 4 cores × 2 threads, siblings n and n+4, one NUMA node.
	oneSocket := build(t, 1, 1, 4, 2)
	// twoSockets: 2 sockets, one NUMA node each, 2 cores × 2 threads: node 0 has cores 0,1 = CPUs (0,4),(1,5);
	// node 1 cores 2,3 = (2,6),(3,7).
	twoSockets := build(t, 2, 1, 2, 2)
	// noSMT: 2 sockets × 4 single-thread cores: node 0 = 0-3, node 1 = 4-7.
	noSMT := build(t, 2, 1, 4, 1)
	all := func(topo *Topology) cpuset.CPUSet { return topo.All() }
	full, spread := extension.CPUBindPolicyFullPCPUs, extension.CPUBindPolicySpreadByPCPUs
	tests := map[string]struct {
		topo    *Topology
		free    cpuset.CPUSet
		held    Exclusive
		req     Request
		want    string
		wantErr *ErrNotEnough
	}{
		"FullPCPUs packs whole cores": {
			topo: oneSocket, free: all(oneSocket), req: Request{Count: 4, Bind: full}, want: "0-1,4-5",
		},
		"SpreadByPCPUs takes one thread per core": {
			topo: oneSocket, free: all(oneSocket), req: Request{Count: 4, Bind: spread}, want: "0-3",
		},
		"FullPCPUs with an odd count: the last core half": {
			topo: oneSocket, free: all(oneSocket), req: Request{Count: 3, Bind: full}, want: "0-1,4",
		},
		"FullPCPUs skips a half-used core": {
			topo: oneSocket, free: all(oneSocket).Difference(cpuset.New(0)), req: Request{Count: 2, Bind: full}, want: "1,5",
		},
		// Node 0 has two whole cores free (4 CPUs), node 1 one (cpu 3 is used): LeastAllocated picks node 0.
		"LeastAllocated: the node with the most free": {
			topo: twoSockets, free: all(twoSockets).Difference(cpuset.New(3)), req: Request{Count: 2, Bind: full}, want: "0,4",
		},
		"MostAllocated: the node with the fewest free that fits": {
			topo: twoSockets, free: all(twoSockets).Difference(cpuset.New(3)),
			req: Request{Count: 2, Bind: full, Strategy: extension.NUMAMostAllocated}, want: "2,6",
		},
		"MostAllocated: a node too small is passed over": {
			topo: twoSockets, free: all(twoSockets).Difference(cpuset.New(3)),
			req: Request{Count: 4, Bind: full, Strategy: extension.NUMAMostAllocated}, want: "0-1,4-5",
		},
		// 6 CPUs fit in no node or socket (4 each): socket 0 whole, then one core of socket 1.
		"FullPCPUs across sockets: a whole socket, then cores": {
			topo: twoSockets, free: all(twoSockets), req: Request{Count: 6, Bind: full}, want: "0-2,4-6",
		},
		"FullPCPUs across sockets from scattered whole cores": {
			topo: twoSockets, free: cpuset.New(0, 2, 4, 6), req: Request{Count: 4, Bind: full}, want: "0,2,4,6",
		},
		"SpreadByPCPUs in one NUMA node": {
			topo: twoSockets, free: all(twoSockets), req: Request{Count: 2, Bind: spread}, want: "0-1",
		},
		"SpreadByPCPUs larger than a node: one per core over the machine": {
			topo: twoSockets, free: all(twoSockets), req: Request{Count: 5, Bind: spread}, want: "0-4",
		},
		"cores of one thread: packed in a node": {
			topo: noSMT, free: all(noSMT), req: Request{Count: 2, Bind: spread}, want: "0-1",
		},
		"cores of one thread: LeastAllocated node": {
			topo: noSMT, free: all(noSMT).Difference(cpuset.New(0)), req: Request{Count: 3, Bind: full}, want: "4-6",
		},
		"NUMANodeLevel keeps off another exclusive pod's node": {
			topo: twoSockets, free: all(twoSockets), held: Exclusive{Nodes: map[int]bool{0: true}},
			req: Request{Count: 2, Bind: full, Exclusive: extension.CPUExclusivePolicyNUMANodeLevel}, want: "2,6",
		},
		"NUMANodeLevel shares when nothing else fits": {
			topo: twoSockets, free: all(twoSockets).Difference(cpuset.New(2, 3, 6, 7)), held: Exclusive{Nodes: map[int]bool{0: true}},
			req: Request{Count: 2, Bind: full, Exclusive: extension.CPUExclusivePolicyNUMANodeLevel}, want: "0,4",
		},
		"PCPULevel keeps off another exclusive pod's core": {
			topo: oneSocket, free: all(oneSocket).Difference(cpuset.New(0)), held: Exclusive{Cores: map[int]bool{0: true}},
			req: Request{Count: 2, Bind: spread, Exclusive: extension.CPUExclusivePolicyPCPULevel}, want: "1-2",
		},
		"PCPULevel shares a core when it must": {
			topo: oneSocket, free: cpuset.New(4, 5), held: Exclusive{Cores: map[int]bool{0: true}},
			req: Request{Count: 2, Bind: spread, Exclusive: extension.CPUExclusivePolicyPCPULevel}, want: "4-5",
		},
		"not enough free CPUs": {
			topo: oneSocket, free: cpuset.New(1, 2), req: Request{Count: 3, Bind: full}, wantErr: &ErrNotEnough{Needed: 3, Free: 2},
		},
		"CPUs outside the topology are not free": {
			topo: oneSocket, free: cpuset.New(7, 8, 9), req: Request{Count: 2, Bind: full}, wantErr: &ErrNotEnough{Needed: 2, Free: 1},
		},
		"nothing asked": {topo: oneSocket, free: all(oneSocket), req: Request{Count: 0}, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Take(tc.topo, tc.free, tc.held, tc.req)
			if tc.wantErr != nil {
				var e *ErrNotEnough
				if !errors.As(err, &e) || *e != *tc.wantErr {
					t.Fatalf("Take = %v, %v; want error %v", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.String()); diff != "" {
				t.Errorf("CPUs (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNewTopologyRejects(t *testing.T) {
	for name, infos := range map[string][]extension.CPUInfo{
		"empty":             nil,
		"negative":          {{ID: -1}},
		"twice":             {{ID: 1}, {ID: 1}},
		"core over sockets": {{ID: 0, Core: 0, Socket: 0}, {ID: 1, Core: 0, Socket: 1}},
	} {
		if _, err := NewTopology(infos); err == nil {
			t.Errorf("%s: NewTopology accepted %v", name, infos)
		}
	}
}

// FuzzTake draws topologies, free CPUs and requests: Take never panics, gives exactly the count asked from the
// free CPUs, never a CPU twice, and fails only when fewer CPUs are free than asked.
func FuzzTake(f *testing.F) {
	f.Add(uint8(2), uint8(2), uint8(4), uint8(2), uint64(0xffff), uint8(5), uint8(0), uint8(0), uint8(0))
	f.Add(uint8(1), uint8(1), uint8(3), uint8(1), uint64(0b101), uint8(2), uint8(1), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, sockets, nodes, cores, threads uint8, freeMask uint64, count, bind, exclusive, strategy uint8) {
		topo := build(t, int(sockets%2)+1, int(nodes%2)+1, int(cores%4)+1, int(threads%2)+1)
		var free []int
		for _, id := range topo.ids {
			if freeMask&(1<<uint(id%64)) != 0 {
				free = append(free, id)
			}
		}
		req := Request{
			Count:     int(count % 40),
			Bind:      []extension.CPUBindPolicy{extension.CPUBindPolicyFullPCPUs, extension.CPUBindPolicySpreadByPCPUs}[bind%2],
			Exclusive: []extension.CPUExclusivePolicy{"", extension.CPUExclusivePolicyPCPULevel, extension.CPUExclusivePolicyNUMANodeLevel}[exclusive%3],
			Strategy:  []extension.NUMAAllocateStrategy{extension.NUMALeastAllocated, extension.NUMAMostAllocated}[strategy%2],
		}
		held := Exclusive{Cores: map[int]bool{0: true}, Nodes: map[int]bool{1: true}}
		freeSet := cpuset.New(free...)
		got, err := Take(topo, freeSet, held, req)
		if req.Count > len(free) {
			if err == nil {
				t.Fatalf("Take of %d from %d free CPUs succeeded: %s", req.Count, len(free), got)
			}
			return
		}
		if err != nil {
			t.Fatalf("Take of %d from %s: %v", req.Count, freeSet, err)
		}
		if got.Size() != req.Count || !got.IsSubsetOf(freeSet) {
			t.Fatalf("Take of %d from %s gave %s", req.Count, freeSet, got)
		}
	})
}
