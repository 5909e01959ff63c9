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

import "k8s.io/utils/ptr"

// DefaultCPUBindPolicy is the default bind policy of LSE and LSR pods (Koordinator's).
const DefaultCPUBindPolicy = "FullPCPUs"

// defaultScoring is LeastAllocated over cpu and memory, Koordinator's default of both strategies.
func defaultScoring() *ScoringStrategy {
	return &ScoringStrategy{Type: "LeastAllocated", Resources: []ResourceWeight{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}}
}

// SetDefaults_NodeNUMAResourceArgs fills in the defaults of NodeNUMAResourceArgs.
func SetDefaults_NodeNUMAResourceArgs(obj *NodeNUMAResourceArgs) {
	if obj.DefaultCPUBindPolicy == nil || *obj.DefaultCPUBindPolicy == "" {
		obj.DefaultCPUBindPolicy = ptr.To(DefaultCPUBindPolicy)
	}
	if obj.ScoringStrategy == nil {
		obj.ScoringStrategy = defaultScoring()
	}
	if obj.NUMAScoringStrategy == nil {
		obj.NUMAScoringStrategy = defaultScoring()
	}
	for _, s := range []*ScoringStrategy{obj.ScoringStrategy, obj.NUMAScoringStrategy} {
		if s.Type == "" {
			s.Type = "LeastAllocated"
		}
		if len(s.Resources) == 0 {
			s.Resources = defaultScoring().Resources
		}
		for i := range s.Resources {
			if s.Resources[i].Weight == 0 {
				s.Resources[i].Weight = 1
			}
		}
	}
}
