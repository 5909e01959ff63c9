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
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
)

// Topology is the node's online CPUs and NUMA nodes.
type Topology struct {
	// CPUs are the online logical CPUs, by ID. Core IDs are unique on the node: the physical cores
	// numbered in the order of their lowest CPU.
	CPUs []extension.CPUInfo
	// NUMANodes are the NUMA nodes, by ID; a machine without NUMA information has one, node 0, with every
	// CPU.
	NUMANodes []NUMANode
}

// NUMANode is one NUMA node.
type NUMANode struct {
	ID   int32
	CPUs cpuset.CPUSet
	// MemoryBytes is its MemTotal; 0 when sysfs does not say.
	MemoryBytes int64
}

// ReadTopology reads the topology under sysRoot (normally /sys): the online CPUs
// (devices/system/cpu/online), each CPU's physical_package_id and core_id, and the NUMA nodes
// (devices/system/node/node<N>/cpulist and meminfo).
func ReadTopology(sysRoot string) (*Topology, error) {
	cpuDir := filepath.Join(sysRoot, "devices", "system", "cpu")
	online, err := readCPUList(filepath.Join(cpuDir, "online"))
	if err != nil {
		return nil, err
	}
	nodes, err := readNUMANodes(filepath.Join(sysRoot, "devices", "system", "node"))
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		nodes = []NUMANode{{ID: 0, CPUs: online}}
	}
	nodeOf := map[int]int32{}
	for _, n := range nodes {
		for _, c := range n.CPUs.UnsortedList() {
			nodeOf[c] = n.ID
		}
	}
	type physical struct{ socket, core int64 }
	cores := map[physical]int32{}
	t := &Topology{NUMANodes: nodes}
	for _, id := range online.List() {
		dir := filepath.Join(cpuDir, fmt.Sprintf("cpu%d", id), "topology")
		socket, err := readInt(filepath.Join(dir, "physical_package_id"))
		if err != nil {
			return nil, err
		}
		core, err := readInt(filepath.Join(dir, "core_id"))
		if err != nil {
			return nil, err
		}
		key := physical{socket, core}
		logical, ok := cores[key]
		if !ok {
			logical = int32(len(cores))
			cores[key] = logical
		}
		t.CPUs = append(t.CPUs, extension.CPUInfo{ID: int32(id), Core: logical, Socket: int32(max(socket, 0)), Node: nodeOf[id]})
	}
	return t, nil
}

// ReadNUMACPUs returns the CPUs of each NUMA node under sysRoot (devices/system/node/node<N>/cpulist): what
// koordlet needs each round to confine pods to their NUMA nodes, without the rest of the topology. A machine
// without NUMA information has none.
func ReadNUMACPUs(sysRoot string) (map[int]cpuset.CPUSet, error) {
	dir := filepath.Join(sysRoot, "devices", "system", "node")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading NUMA nodes: %w", err)
	}
	out := map[int]cpuset.CPUSet{}
	for _, e := range entries {
		id, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "node"))
		if !strings.HasPrefix(e.Name(), "node") || err != nil || id < 0 {
			continue
		}
		cpus, err := readCPUList(filepath.Join(dir, e.Name(), "cpulist"))
		if err != nil {
			return nil, err
		}
		out[id] = cpus
	}
	return out, nil
}

// readNUMANodes reads the node<N> directories of dir; none when dir does not exist.
func readNUMANodes(dir string) ([]NUMANode, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading NUMA nodes: %w", err)
	}
	var nodes []NUMANode
	for _, e := range entries {
		id, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "node"))
		if !strings.HasPrefix(e.Name(), "node") || err != nil || id < 0 {
			continue
		}
		cpus, err := readCPUList(filepath.Join(dir, e.Name(), "cpulist"))
		if err != nil {
			return nil, err
		}
		mem, err := readMemTotal(filepath.Join(dir, e.Name(), "meminfo"))
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, NUMANode{ID: int32(id), CPUs: cpus, MemoryBytes: mem})
	}
	slices.SortFunc(nodes, func(a, b NUMANode) int { return cmp.Compare(a.ID, b.ID) })
	return nodes, nil
}

// readCPUList reads a Linux CPU list file.
func readCPUList(path string) (cpuset.CPUSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return cpuset.New(), fmt.Errorf("reading CPU list: %w", err)
	}
	s, err := cpuset.Parse(string(bytes.TrimSpace(b)))
	if err != nil {
		return cpuset.New(), fmt.Errorf("parsing CPU list %s: %w", path, err)
	}
	return s, nil
}

// readInt reads a file holding one integer.
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading CPU topology: %w", err)
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing %s: %w", path, err)
	}
	return v, nil
}

// readMemTotal reads "Node <n> MemTotal: <kB> kB" from a NUMA node's meminfo; 0 when the file is missing.
func readMemTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading NUMA memory: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose on close
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// Node 0 MemTotal: 16303272 kB
		if len(fields) >= 4 && fields[2] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[3], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing %s: %w", path, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, sc.Err()
}

// Synthetic returns the topology of a machine of sockets × coresPerSocket × threads CPUs, one NUMA node per
// socket with memoryPerNode bytes, numbered as Linux numbers them: the first thread of every core, then the
// second, and so on (so CPU n and n+cores are siblings). The simulator reports it for simulated nodes.
func Synthetic(sockets, coresPerSocket, threads int, memoryPerNode int64) *Topology {
	cores := sockets * coresPerSocket
	t := &Topology{}
	nodeCPUs := make([][]int, sockets)
	for th := range threads {
		for core := range cores {
			id := th*cores + core
			s := core / coresPerSocket
			t.CPUs = append(t.CPUs, extension.CPUInfo{ID: int32(id), Core: int32(core), Socket: int32(s), Node: int32(s)})
			nodeCPUs[s] = append(nodeCPUs[s], id)
		}
	}
	slices.SortFunc(t.CPUs, func(a, b extension.CPUInfo) int { return cmp.Compare(a.ID, b.ID) })
	for s, ids := range nodeCPUs {
		t.NUMANodes = append(t.NUMANodes, NUMANode{ID: int32(s), CPUs: cpuset.New(ids...), MemoryBytes: memoryPerNode})
	}
	return t
}
