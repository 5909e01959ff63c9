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

package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodeNUMAResourceArgs configures the NodeNUMAResource plugin.
type NodeNUMAResourceArgs struct {
	metav1.TypeMeta

	// DefaultCPUBindPolicy is the bind policy of LSE and LSR pods that name none: FullPCPUs or SpreadByPCPUs
	// (an extension.CPUBindPolicy).
	DefaultCPUBindPolicy string
	// ScoringStrategy scores nodes; NUMAScoringStrategy the NUMA nodes of a node.
	ScoringStrategy, NUMAScoringStrategy *ScoringStrategy
}

// ScoringStrategyType is how free resources score.
type ScoringStrategyType string

// Scoring strategy types.
const (
	// LeastAllocated prefers the most free resources.
	LeastAllocated ScoringStrategyType = "LeastAllocated"
	// MostAllocated prefers the fewest free resources (bin packing).
	MostAllocated ScoringStrategyType = "MostAllocated"
)

// ScoringStrategy is a scoring type and the weighted resources it looks at.
type ScoringStrategy struct {
	Type      ScoringStrategyType
	Resources []ResourceWeight
}

// ResourceWeight is a resource and its weight in a score.
type ResourceWeight struct {
	Name   string
	Weight int64
}
