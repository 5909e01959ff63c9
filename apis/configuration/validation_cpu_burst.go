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
	"k8s.io/apimachinery/pkg/util/validation/field"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// ValidateCPUBurstCfg checks cpu-burst-config: each strategy's fields, each node selector, and that no two node
// strategies select the same nodes.
func ValidateCPUBurstCfg(path *field.Path, cfg *CPUBurstCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	nodes := make([]nodeStrategy[slov1alpha1.CPUBurstStrategy], len(cfg.NodeStrategies))
	for i, n := range cfg.NodeStrategies {
		nodes[i] = nodeStrategy[slov1alpha1.CPUBurstStrategy]{profile: n.NodeCfgProfile, strategy: n.CPUBurstStrategy}
	}
	return validateLayered(path, DefaultCPUBurstStrategy(), cfg.ClusterStrategy, nodes, ValidateCPUBurstStrategy, nil)
}

// ValidateCPUBurstStrategy checks the fields of one CPU burst strategy.
func ValidateCPUBurstStrategy(path *field.Path, s *slov1alpha1.CPUBurstStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateEnum(path.Child("policy"), s.Policy, true,
		slov1alpha1.CPUBurstNone, slov1alpha1.CPUBurstOnly, slov1alpha1.CFSQuotaBurstOnly, slov1alpha1.CPUBurstAuto)...)
	errs = append(errs, validateRange(path.Child("cpuBurstPercent"), s.CPUBurstPercent, 1, 10000)...)
	errs = append(errs, validateMin(path.Child("cfsQuotaBurstPercent"), s.CFSQuotaBurstPercent, 100)...)
	errs = append(errs, validateMin(path.Child("cfsQuotaBurstPeriodSeconds"), s.CFSQuotaBurstPeriodSeconds, -1)...)
	errs = append(errs, validatePercent(path.Child("sharePoolThresholdPercent"), s.SharePoolThresholdPercent)...)
	return errs
}
