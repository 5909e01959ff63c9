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

// Package numahint lets the plugins that give a pod resources on a node's NUMA nodes agree on them within one
// scheduling cycle: a plugin whose part must be on the NUMA nodes the pod gets (DeviceShare's devices) adds a
// Provider at PreFilter; NodeNUMAResource, which chooses the NUMA nodes of pods with a NUMA topology policy,
// takes only NUMA node sets every provider fits in, and records its choice per node, which the providers then
// allocate within. It is Koordinator's topology-manager hint merging, without a framework extension: the
// CycleState carries it.
package numahint

import (
	"slices"
	"sync"

	fwk "k8s.io/kube-scheduler/framework"
)

// stateKey keys the State in the CycleState.
const stateKey fwk.StateKey = "koord.dev/numahint"

// Provider is a plugin's part of the pod on a node's NUMA nodes.
type Provider interface {
	// Name names the plugin in reasons.
	Name() string
	// FitsNUMA reports whether the plugin can give the pod its part on node within the NUMA nodes numa.
	FitsNUMA(node string, numa []int) bool
}

// State is the cycle's providers and NodeNUMAResource's choices. It is safe for concurrent use.
type State struct {
	mu        sync.Mutex
	providers []Provider
	chosen    sync.Map // node name → []int
}

// Clone returns the state itself: the providers are fixed after PreFilter and the choices are per node.
func (s *State) Clone() fwk.StateData { return s }

// Of returns the cycle's State, creating it (at PreFilter, which runs one plugin at a time) when missing.
func Of(cs fwk.CycleState) *State {
	if data, err := cs.Read(stateKey); err == nil {
		if s, ok := data.(*State); ok {
			return s
		}
	}
	s := &State{}
	cs.Write(stateKey, s)
	return s
}

// Get returns the cycle's State, nil when no plugin made one.
func Get(cs fwk.CycleState) *State {
	data, err := cs.Read(stateKey)
	if err != nil {
		return nil
	}
	s, _ := data.(*State)
	return s
}

// Add adds a provider.
func (s *State) Add(p Provider) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.providers = append(s.providers, p)
}

// Fits reports whether every provider fits on node within numa, and names the first that does not.
func (s *State) Fits(node string, numa []int) (bool, string) {
	if s == nil {
		return true, ""
	}
	s.mu.Lock()
	providers := slices.Clone(s.providers)
	s.mu.Unlock()
	for _, p := range providers {
		if !p.FitsNUMA(node, numa) {
			return false, p.Name()
		}
	}
	return true, ""
}

// HasProviders tells whether some plugin must be on the pod's NUMA nodes.
func (s *State) HasProviders() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.providers) > 0
}

// Choose records the NUMA nodes the pod gets on node (nil: no NUMA alignment there).
func (s *State) Choose(node string, numa []int) {
	if s == nil {
		return
	}
	if numa == nil {
		s.chosen.Delete(node)
		return
	}
	s.chosen.Store(node, slices.Clone(numa))
}

// Chosen returns the NUMA nodes the pod gets on node, and whether they were chosen.
func (s *State) Chosen(node string) ([]int, bool) {
	if s == nil {
		return nil, false
	}
	v, ok := s.chosen.Load(node)
	if !ok {
		return nil, false
	}
	return v.([]int), true
}
