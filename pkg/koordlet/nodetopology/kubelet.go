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
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"
	"sigs.k8s.io/yaml"
)

// KubeletCPUState is what the node's kubelet says about CPUs: its CPU manager policy and options, reserved
// CPUs and topology manager policy (from its configuration file), and the static CPU manager's exclusive
// allocations (from its checkpoint, cpu_manager_state).
type KubeletCPUState struct {
	// Policy is the CPU manager policy: none (also when nothing says) or static.
	Policy string
	// Options are the CPU manager policy options.
	Options map[string]string
	// ReservedCPUs are reservedSystemCPUs.
	ReservedCPUs cpuset.CPUSet
	// TopologyPolicy and TopologyScope are the topology manager's (none, best-effort, restricted,
	// single-numa-node; container or pod).
	TopologyPolicy, TopologyScope string
	// Entries are the static policy's exclusive CPUs of containers, by pod UID and container name.
	Entries map[string]map[string]cpuset.CPUSet
}

// kubeletConfig is the part of kubelet's KubeletConfiguration this package reads.
type kubeletConfig struct {
	CPUManagerPolicy        string            `json:"cpuManagerPolicy"`
	CPUManagerPolicyOptions map[string]string `json:"cpuManagerPolicyOptions"`
	ReservedSystemCPUs      string            `json:"reservedSystemCPUs"`
	TopologyManagerPolicy   string            `json:"topologyManagerPolicy"`
	TopologyManagerScope    string            `json:"topologyManagerScope"`
}

// cpuManagerCheckpoint is kubelet's cpu_manager_state file.
type cpuManagerCheckpoint struct {
	PolicyName    string                       `json:"policyName"`
	DefaultCPUSet string                       `json:"defaultCpuSet"`
	Entries       map[string]map[string]string `json:"entries,omitempty"`
}

// ReadKubeletCPUState reads kubelet's configuration file configPath and its CPU manager checkpoint
// (<rootDir>/cpu_manager_state). Either may be missing: a node whose kubelet has no static policy has no
// checkpoint, and a kubelet configured by flags has no file; what is missing counts as kubelet's defaults
// (policy none, nothing reserved). A file that does not parse is an error naming it.
func ReadKubeletCPUState(configPath, rootDir string) (*KubeletCPUState, error) {
	s := &KubeletCPUState{Policy: "none", ReservedCPUs: cpuset.New(), Entries: map[string]map[string]cpuset.CPUSet{}}
	if configPath != "" {
		b, err := os.ReadFile(configPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("reading kubelet configuration: %w", err)
		default:
			var cfg kubeletConfig
			if err := yaml.Unmarshal(b, &cfg); err != nil {
				return nil, fmt.Errorf("parsing kubelet configuration %s: %w", configPath, err)
			}
			if cfg.CPUManagerPolicy != "" {
				s.Policy = cfg.CPUManagerPolicy
			}
			s.Options = cfg.CPUManagerPolicyOptions
			if s.ReservedCPUs, err = cpuset.Parse(cfg.ReservedSystemCPUs); err != nil {
				return nil, fmt.Errorf("parsing reservedSystemCPUs %q of %s: %w", cfg.ReservedSystemCPUs, configPath, err)
			}
			s.TopologyPolicy, s.TopologyScope = cfg.TopologyManagerPolicy, cfg.TopologyManagerScope
		}
	}
	path := rootDir + "/cpu_manager_state"
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("reading kubelet's CPU manager state: %w", err)
	}
	var cp cpuManagerCheckpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("parsing kubelet's CPU manager state %s: %w", path, err)
	}
	if cp.PolicyName != "" {
		// The checkpoint is what kubelet runs with.
		s.Policy = cp.PolicyName
	}
	for uid, containers := range cp.Entries {
		for name, list := range containers {
			cpus, err := cpuset.Parse(list)
			if err != nil {
				return nil, fmt.Errorf("parsing the CPUs %q of container %s of pod %s in %s: %w", list, name, uid, path, err)
			}
			if s.Entries[uid] == nil {
				s.Entries[uid] = map[string]cpuset.CPUSet{}
			}
			s.Entries[uid][name] = cpus
		}
	}
	return s, nil
}

// topologyPolicy is the NodeResourceTopology topologyPolicies entry for the kubelet topology manager's policy
// and scope, as the community API names them (None, BestEffortContainerLevel, RestrictedPodLevel,
// SingleNUMANodeContainerLevel, ...).
func (s *KubeletCPUState) topologyPolicy() string {
	level := "ContainerLevel"
	if s.TopologyScope == "pod" {
		level = "PodLevel"
	}
	switch s.TopologyPolicy {
	case "best-effort":
		return "BestEffort" + level
	case "restricted":
		return "Restricted" + level
	case "single-numa-node":
		return "SingleNUMANode" + level
	}
	return "None"
}

// KubeletPinned reads the CPUs kubelet's static CPU manager pinned pods to from its checkpoint
// (<rootDir>/cpu_manager_state), re-reading the file only when it changed.
type KubeletPinned struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	pinned  map[types.UID]cpuset.CPUSet
}

// NewKubeletPinned returns the reader of kubelet's checkpoint under rootDir.
func NewKubeletPinned(rootDir string) *KubeletPinned {
	return &KubeletPinned{path: rootDir + "/cpu_manager_state"}
}

// Pinned returns the union of each pod's containers' exclusive CPUs, by pod UID: none without a checkpoint
// (no static policy). A checkpoint that does not parse is an error; the last good answer is returned with it.
func (k *KubeletPinned) Pinned() (map[types.UID]cpuset.CPUSet, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	info, err := os.Stat(k.path)
	if errors.Is(err, fs.ErrNotExist) {
		k.pinned, k.modTime, k.size = nil, time.Time{}, 0
		return nil, nil
	}
	if err != nil {
		return k.pinned, fmt.Errorf("reading kubelet's CPU manager state: %w", err)
	}
	if info.ModTime().Equal(k.modTime) && info.Size() == k.size {
		return k.pinned, nil
	}
	s, err := ReadKubeletCPUState("", filepath.Dir(k.path))
	if err != nil {
		return k.pinned, err
	}
	pinned := map[types.UID]cpuset.CPUSet{}
	for uid, containers := range s.Entries {
		cpus := cpuset.New()
		for _, c := range containers {
			cpus = cpus.Union(c)
		}
		if !cpus.IsEmpty() {
			pinned[types.UID(uid)] = cpus
		}
	}
	k.pinned, k.modTime, k.size = pinned, info.ModTime(), info.Size()
	return pinned, nil
}
