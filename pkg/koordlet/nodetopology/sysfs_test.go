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

package nodetopology

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
)

// fakeCPU is one logical CPU of a fake sysfs.
type fakeCPU struct {
	id, socket, coreID, node int
}

// writeSysfs writes a fake /sys with the CPUs online and, when numa is set, their NUMA nodes with memKB each.
func writeSysfs(t *testing.T, cpus []fakeCPU, numa bool, memKB int64) string {
	t.Helper()
	root := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int
	nodes := map[int][]int{}
	for _, c := range cpus {
		ids = append(ids, c.id)
		nodes[c.node] = append(nodes[c.node], c.id)
		write(fmt.Sprintf("devices/system/cpu/cpu%d/topology/physical_package_id", c.id), fmt.Sprintf("%d\n", c.socket))
		write(fmt.Sprintf("devices/system/cpu/cpu%d/topology/core_id", c.id), fmt.Sprintf("%d\n", c.coreID))
	}
	write("devices/system/cpu/online", cpuset.New(ids...).String()+"\n")
	if numa {
		for n, list := range nodes {
			write(fmt.Sprintf("devices/system/node/node%d/cpulist", n), cpuset.New(list...).String()+"\n")
			write(fmt.Sprintf("devices/system/node/node%d/meminfo", n), fmt.Sprintf("Node %d MemTotal:       %d kB\nNode %d MemFree:  1 kB\n", n, memKB, n))
		}
		write("devices/system/node/possible", "0-1\n")
	}
	return root
}

// twoSockets is 2 sockets × 2 cores × 2 threads, one NUMA node per socket, with Linux's usual numbering:
// siblings are n and n+4, and core_id repeats on each socket.
func twoSockets() []fakeCPU {
	return []fakeCPU{
		{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 1, 0, 1}, {3, 1, 1, 1},
		{4, 0, 0, 0}, {5, 0, 1, 0}, {6, 1, 0, 1}, {7, 1, 1, 1},
	}
}

func TestReadTopology(t *testing.T) {
	tests := map[string]struct {
		cpus []fakeCPU
		numa bool
		want *Topology
	}{
		// Cores are numbered by their lowest CPU: (socket 0, core 0) = 0, (0,1) = 1, (1,0) = 2, (1,1) = 3.
		"2 sockets, SMT, NUMA": {
			cpus: twoSockets(), numa: true,
			want: &Topology{
				CPUs: []extension.CPUInfo{
					{ID: 0, Core: 0, Socket: 0, Node: 0}, {ID: 1, Core: 1, Socket: 0, Node: 0},
					{ID: 2, Core: 2, Socket: 1, Node: 1}, {ID: 3, Core: 3, Socket: 1, Node: 1},
					{ID: 4, Core: 0, Socket: 0, Node: 0}, {ID: 5, Core: 1, Socket: 0, Node: 0},
					{ID: 6, Core: 2, Socket: 1, Node: 1}, {ID: 7, Core: 3, Socket: 1, Node: 1},
				},
				NUMANodes: []NUMANode{
					{ID: 0, CPUs: cpuset.New(0, 1, 4, 5), MemoryBytes: 4 << 30},
					{ID: 1, CPUs: cpuset.New(2, 3, 6, 7), MemoryBytes: 4 << 30},
				},
			},
		},
		"1 socket, no SMT, no NUMA information": {
			cpus: []fakeCPU{{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 0, 2, 0}},
			want: &Topology{
				CPUs:      []extension.CPUInfo{{ID: 0, Core: 0}, {ID: 1, Core: 1}, {ID: 2, Core: 2}},
				NUMANodes: []NUMANode{{ID: 0, CPUs: cpuset.New(0, 1, 2)}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ReadTopology(writeSysfs(t, tc.cpus, tc.numa, 4<<20))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b cpuset.CPUSet) bool { return a.Equals(b) })); diff != "" {
				t.Errorf("topology (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestReadNUMACPUs(t *testing.T) {
	got, err := ReadNUMACPUs(writeSysfs(t, twoSockets(), true, 1024))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{0: "0-1,4-5", 1: "2-3,6-7"}
	gotStr := map[int]string{}
	for id, cpus := range got {
		gotStr[id] = cpus.String()
	}
	if diff := cmp.Diff(want, gotStr); diff != "" {
		t.Errorf("ReadNUMACPUs (-want,+got):\n%s", diff)
	}
	// A machine without NUMA information has none.
	got, err = ReadNUMACPUs(writeSysfs(t, twoSockets(), false, 0))
	if err != nil || len(got) != 0 {
		t.Errorf("ReadNUMACPUs without NUMA nodes = %v, %v; want none", got, err)
	}
}

func TestReadTopologyErrors(t *testing.T) {
	root := writeSysfs(t, twoSockets(), true, 1)
	if err := os.WriteFile(filepath.Join(root, "devices/system/cpu/cpu3/topology/core_id"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTopology(root); err == nil {
		t.Error("ReadTopology of a malformed core_id succeeded")
	}
	if _, err := ReadTopology(t.TempDir()); err == nil {
		t.Error("ReadTopology of an empty directory succeeded")
	}
}

// TestReadTopologyOfThisMachine reads the real /sys: every CPU the process may run on is there.
func TestReadTopologyOfThisMachine(t *testing.T) {
	got, err := ReadTopology("/sys")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.CPUs) < runtime.NumCPU() {
		t.Errorf("read %d online CPUs, the process may use %d", len(got.CPUs), runtime.NumCPU())
	}
	var inNodes int
	for _, n := range got.NUMANodes {
		inNodes += n.CPUs.Size()
	}
	if inNodes != len(got.CPUs) {
		t.Errorf("NUMA nodes hold %d CPUs, %d are online", inNodes, len(got.CPUs))
	}
}
