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

package validation

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

// ValidateNodeNUMAResourceArgs checks NodeNUMAResourceArgs after defaulting: defaultCPUBindPolicy FullPCPUs or
// SpreadByPCPUs, and scoring strategies of a known type over distinct resources with weights of at least 1.
func ValidateNodeNUMAResourceArgs(path *field.Path, args *config.NodeNUMAResourceArgs) field.ErrorList {
	var errs field.ErrorList
	switch extension.CPUBindPolicy(args.DefaultCPUBindPolicy) {
	case extension.CPUBindPolicyFullPCPUs, extension.CPUBindPolicySpreadByPCPUs:
	default:
		errs = append(errs, field.NotSupported(path.Child("defaultCPUBindPolicy"), args.DefaultCPUBindPolicy,
			[]string{string(extension.CPUBindPolicyFullPCPUs), string(extension.CPUBindPolicySpreadByPCPUs)}))
	}
	for _, s := range []struct {
		name     string
		strategy *config.ScoringStrategy
	}{{"scoringStrategy", args.ScoringStrategy}, {"numaScoringStrategy", args.NUMAScoringStrategy}} {
		errs = append(errs, validateScoring(path.Child(s.name), s.strategy)...)
	}
	return errs
}

// validateScoring checks a scoring strategy: present, of a known type, over distinct resources with weights in
// [1, 100].
func validateScoring(p *field.Path, s *config.ScoringStrategy) field.ErrorList {
	if s == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	switch s.Type {
	case config.LeastAllocated, config.MostAllocated:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, []string{string(config.LeastAllocated), string(config.MostAllocated)}))
	}
	seen := sets.New[string]()
	for i, r := range s.Resources {
		rp := p.Child("resources").Index(i)
		if r.Name == "" {
			errs = append(errs, field.Required(rp.Child("name"), ""))
		} else if seen.Has(r.Name) {
			errs = append(errs, field.Duplicate(rp.Child("name"), r.Name))
		}
		seen.Insert(r.Name)
		if r.Weight < 1 || r.Weight > 100 {
			errs = append(errs, field.Invalid(rp.Child("weight"), r.Weight, "must be in the range [1, 100]"))
		}
	}
	return errs
}
