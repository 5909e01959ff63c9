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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultSysCPUDir is where Linux describes its CPUs.
const DefaultSysCPUDir = "/sys/devices/system/cpu"

// ReadTopology reads the place of every CPU that has a topology directory under dir (DefaultSysCPUDir, or its
// host mount): cpu<N>/topology/core_id and physical_package_id, and the NUMA node from the cpu<N>/node<M>
// link (node 0 when there is none, as on machines without NUMA). The result is keyed by CPU ID.
func ReadTopology(dir string) (map[int]CPUInfo, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read CPU topology: %w", err)
	}
	out := map[int]CPUInfo{}
	for _, e := range entries {
		id, ok := cpuID(e.Name())
		if !ok {
			continue
		}
		cpuDir := filepath.Join(dir, e.Name())
		core, err := readInt(filepath.Join(cpuDir, "topology", "core_id"))
		if errors.Is(err, fs.ErrNotExist) {
			// Offline CPUs have no topology.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read CPU topology of cpu%d: %w", id, err)
		}
		socket, err := readInt(filepath.Join(cpuDir, "topology", "physical_package_id"))
		if err != nil {
			return nil, fmt.Errorf("read CPU topology of cpu%d: %w", id, err)
		}
		node, err := numaNode(cpuDir)
		if err != nil {
			return nil, fmt.Errorf("read CPU topology of cpu%d: %w", id, err)
		}
		out[id] = CPUInfo{ID: id, Core: core, Socket: socket, Node: node}
	}
	return out, nil
}

// cpuID parses "cpu<N>".
func cpuID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "cpu")
	if !ok || rest == "" {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	return id, err == nil && id >= 0
}

// numaNode returns M of the node<M> entry in a CPU's directory, 0 without one.
func numaNode(cpuDir string) (int, error) {
	entries, err := os.ReadDir(cpuDir)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), "node"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, nil
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
