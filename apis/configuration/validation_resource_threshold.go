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

package configuration

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// ValidateResourceThresholdCfg checks resource-threshold-config: each strategy's fields, the relations between
// its fields as it applies, each node selector, and that no two node strategies select the same nodes.
func ValidateResourceThresholdCfg(path *field.Path, cfg *ResourceThresholdCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	nodes := make([]nodeStrategy[slov1alpha1.ResourceThresholdStrategy], len(cfg.NodeStrategies))
	for i, n := range cfg.NodeStrategies {
		nodes[i] = nodeStrategy[slov1alpha1.ResourceThresholdStrategy]{profile: n.NodeCfgProfile, strategy: n.ResourceThresholdStrategy}
	}
	return validateLayered(path, DefaultResourceThresholdStrategy(), cfg.ClusterStrategy, nodes,
		validateResourceThresholdFields, validateResourceThresholdRelations)
}

// ValidateResourceThresholdStrategy checks one suppression and eviction strategy on its own: its fields and the
// relations between them.
func ValidateResourceThresholdStrategy(path *field.Path, s *slov1alpha1.ResourceThresholdStrategy) field.ErrorList {
	return append(validateResourceThresholdFields(path, s), validateResourceThresholdRelations(path, s)...)
}

// maxAllocatableEvictPriority is the highest priority allocatable-based eviction may target: koord-mid and below.
const maxAllocatableEvictPriority = 7999

func validateResourceThresholdFields(path *field.Path, s *slov1alpha1.ResourceThresholdStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	for _, p := range []struct {
		name string
		v    *int64
	}{
		{"cpuSuppressThresholdPercent", s.CPUSuppressThresholdPercent},
		{"cpuSuppressMinPercent", s.CPUSuppressMinPercent},
		{"memoryEvictThresholdPercent", s.MemoryEvictThresholdPercent},
		{"memoryEvictLowerPercent", s.MemoryEvictLowerPercent},
		{"cpuEvictBESatisfactionUpperPercent", s.CPUEvictBESatisfactionUpperPercent},
		{"cpuEvictBESatisfactionLowerPercent", s.CPUEvictBESatisfactionLowerPercent},
		{"cpuEvictBEUsageThresholdPercent", s.CPUEvictBEUsageThresholdPercent},
		{"cpuEvictThresholdPercent", s.CPUEvictThresholdPercent},
		{"cpuEvictLowerPercent", s.CPUEvictLowerPercent},
	} {
		errs = append(errs, validatePercent(path.Child(p.name), p.v)...)
	}
	for _, p := range []struct {
		name string
		v    *int64
	}{
		{"cpuAllocatableEvictThresholdPercent", s.CPUAllocatableEvictThresholdPercent},
		{"cpuAllocatableEvictLowerPercent", s.CPUAllocatableEvictLowerPercent},
		{"memoryAllocatableEvictThresholdPercent", s.MemoryAllocatableEvictThresholdPercent},
		{"memoryAllocatableEvictLowerPercent", s.MemoryAllocatableEvictLowerPercent},
	} {
		errs = append(errs, validateMin(path.Child(p.name), p.v, 0)...)
	}
	errs = append(errs, validateMin(path.Child("cpuEvictTimeWindowSeconds"), s.CPUEvictTimeWindowSeconds, 1)...)
	if v := s.CPUSuppressPSIThresholdPercent; v != nil && (*v < 1 || *v > 100) {
		errs = append(errs, field.Invalid(path.Child("cpuSuppressPSIThresholdPercent"), *v, "must be between 1 and 100"))
	}
	errs = append(errs, validateEnum(path.Child("cpuSuppressPolicy"), s.CPUSuppressPolicy, true,
		slov1alpha1.CPUSetPolicy, slov1alpha1.CPUCfsQuotaPolicy)...)
	errs = append(errs, validateEnum(path.Child("cpuEvictPolicy"), s.CPUEvictPolicy, true,
		slov1alpha1.EvictByRealLimitPolicy, slov1alpha1.EvictByAllocatablePolicy)...)
	if p := s.AllocatableEvictPriorityThreshold; p != nil && *p > maxAllocatableEvictPriority {
		errs = append(errs, field.Invalid(path.Child("allocatableEvictPriorityThreshold"), *p,
			fmt.Sprintf("must be at most %d: allocatable-based eviction may not evict koord-prod pods", maxAllocatableEvictPriority)))
	}
	return errs
}

func validateResourceThresholdRelations(path *field.Path, s *slov1alpha1.ResourceThresholdStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	for _, r := range []struct {
		lowerName, upperName string
		lower, upper         *int64
	}{
		{"memoryEvictLowerPercent", "memoryEvictThresholdPercent", s.MemoryEvictLowerPercent, s.MemoryEvictThresholdPercent},
		{"cpuEvictBESatisfactionLowerPercent", "cpuEvictBESatisfactionUpperPercent", s.CPUEvictBESatisfactionLowerPercent, s.CPUEvictBESatisfactionUpperPercent},
		{"cpuEvictLowerPercent", "cpuEvictThresholdPercent", s.CPUEvictLowerPercent, s.CPUEvictThresholdPercent},
		{"cpuAllocatableEvictLowerPercent", "cpuAllocatableEvictThresholdPercent", s.CPUAllocatableEvictLowerPercent, s.CPUAllocatableEvictThresholdPercent},
		{"memoryAllocatableEvictLowerPercent", "memoryAllocatableEvictThresholdPercent", s.MemoryAllocatableEvictLowerPercent, s.MemoryAllocatableEvictThresholdPercent},
	} {
		errs = append(errs, validateLess(path, r.lowerName, r.upperName, r.lower, r.upper)...)
	}
	return errs
}
