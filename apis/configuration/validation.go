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
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The validators follow Koordinator's rules (go-playground tags of apis/configuration and apis/slo, and the
// ConfigMap webhook) and the CRD schema of NodeSLO and NodeMetric, so that a configuration that validates always
// renders objects the API server accepts. Each takes the path of the value it checks; callers pass the ConfigMap
// key as the root, so messages read like
//
//	colocation-config.nodeConfigs[1].midCPUThresholdPercent: Invalid value: 150: must be between 0 and 100
//
// Rules that relate two fields (evict lower < upper, cache range start < end, network request sums) are checked
// on the strategy as it applies: the defaults, merged with the cluster strategy, merged with the node strategy.
// A node strategy is only blamed for a relation the cluster strategy does not already break.
//
// Where Koordinator leaves a number unbounded, a generous upper bound keeps the arithmetic of the resource
// calculation from overflowing: reclaim and batch thresholds may exceed 100 % (Koordinator allows it; reclaiming
// 150 % gives a negative safety margin) but not OverCommitPercentLimit.

// OverCommitPercentLimit is the largest reclaim or batch threshold percentage accepted, 100 times the node.
const OverCommitPercentLimit = 10000

// maxAggregateDurations is the most metric aggregation windows a NodeMetric accepts.
const maxAggregateDurations = 16

// maxVirtualNodes bounds the label sets generated per node selector when looking for overlapping node strategies.
const maxVirtualNodes = 1024

// ValidateSLOCfg checks every key of cfg. The errors of a key are rooted at path.Child(key); with a nil path they
// are rooted at the key itself, as in "colocation-config.enable".
func ValidateSLOCfg(path *field.Path, cfg *SLOCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, ValidateColocationCfg(path.Child(ColocationConfigKey), cfg.Colocation)...)
	errs = append(errs, ValidateResourceThresholdCfg(path.Child(ResourceThresholdConfigKey), cfg.ResourceThreshold)...)
	errs = append(errs, ValidateResourceQOSCfg(path.Child(ResourceQOSConfigKey), cfg.ResourceQOS)...)
	errs = append(errs, ValidateCPUBurstCfg(path.Child(CPUBurstConfigKey), cfg.CPUBurst)...)
	errs = append(errs, ValidateSystemCfg(path.Child(SystemConfigKey), cfg.System)...)
	errs = append(errs, ValidateHostApplicationCfg(path.Child(HostApplicationConfigKey), cfg.HostApplication)...)
	return errs
}

// validatePercent checks an optional percentage in [0, 100].
func validatePercent(path *field.Path, v *int64) field.ErrorList {
	return validateRange(path, v, 0, 100)
}

// validateRange checks an optional integer in [lo, hi].
func validateRange(path *field.Path, v *int64, lo, hi int64) field.ErrorList {
	if v == nil || (*v >= lo && *v <= hi) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("must be between %d and %d", lo, hi))}
}

// validateMin checks an optional integer is at least lo.
func validateMin(path *field.Path, v *int64, lo int64) field.ErrorList {
	if v == nil || *v >= lo {
		return nil
	}
	return field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("must be greater than or equal to %d", lo))}
}

// validateLess checks that lower < upper when both are set. The error is reported on lower and names upper's
// value, which may come from another layer of the configuration.
func validateLess(path *field.Path, lowerName, upperName string, lower, upper *int64) field.ErrorList {
	if lower == nil || upper == nil || *lower < *upper {
		return nil
	}
	return field.ErrorList{field.Invalid(path.Child(lowerName), *lower,
		fmt.Sprintf("must be less than %s (%d)", upperName, *upper))}
}

// validateEnum checks v is one of values, or empty when allowEmpty.
func validateEnum[T ~string](path *field.Path, v T, allowEmpty bool, values ...T) field.ErrorList {
	if (allowEmpty && v == "") || slices.Contains(values, v) {
		return nil
	}
	supported := make([]string, len(values))
	for i, s := range values {
		supported[i] = string(s)
	}
	return field.ErrorList{field.NotSupported(path, string(v), supported)}
}
