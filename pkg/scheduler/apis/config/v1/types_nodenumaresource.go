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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodeNUMAResourceArgs configures the NodeNUMAResource plugin, with Koordinator's fields.
type NodeNUMAResourceArgs struct {
	metav1.TypeMeta `json:",inline"`

	// DefaultCPUBindPolicy is the bind policy of LSE and LSR pods whose resource-spec annotation names none:
	// FullPCPUs (the default) or SpreadByPCPUs.
	DefaultCPUBindPolicy *string `json:"defaultCPUBindPolicy,omitempty"`
	// ScoringStrategy scores nodes by their free resources. Defaults to LeastAllocated over cpu and memory,
	// weight 1 each.
	ScoringStrategy *ScoringStrategy `json:"scoringStrategy,omitempty"`
	// NUMAScoringStrategy scores the NUMA nodes of a node the same way. Defaults like ScoringStrategy.
	NUMAScoringStrategy *ScoringStrategy `json:"numaScoringStrategy,omitempty"`
}

// ScoringStrategy is a scoring type and the weighted resources it looks at.
type ScoringStrategy struct {
	// Type is LeastAllocated or MostAllocated.
	Type string `json:"type,omitempty"`
	// Resources are the resources and their weights (at least 1).
	Resources []ResourceWeight `json:"resources,omitempty"`
}

// ResourceWeight is a resource and its weight, as kube-scheduler's ResourceSpec.
type ResourceWeight struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}
