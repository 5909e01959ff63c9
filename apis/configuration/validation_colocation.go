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

// ValidateColocationCfg checks colocation-config: the cluster strategy, each node strategy and its selector, and
// that no two node strategies select the same nodes.
func ValidateColocationCfg(path *field.Path, cfg *ColocationCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	errs := ValidateColocationStrategy(path, &cfg.ColocationStrategy)
	profiles := make([]NodeCfgProfile, len(cfg.NodeConfigs))
	for i := range cfg.NodeConfigs {
		errs = append(errs, ValidateColocationStrategy(path.Child("nodeConfigs").Index(i), &cfg.NodeConfigs[i].ColocationStrategy)...)
		profiles[i] = cfg.NodeConfigs[i].NodeCfgProfile
	}
	return append(errs, validateNodeProfiles(path.Child("nodeConfigs"), profiles)...)
}

// ValidateColocationStrategy checks the fields of one colocation strategy.
func ValidateColocationStrategy(path *field.Path, s *ColocationStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateMin(path.Child("metricAggregateDurationSeconds"), s.MetricAggregateDurationSeconds, 1)...)
	errs = append(errs, validateMin(path.Child("metricReportIntervalSeconds"), s.MetricReportIntervalSeconds, 1)...)
	if s.MetricAggregatePolicy != nil {
		errs = append(errs, validateAggregatePolicy(path.Child("metricAggregatePolicy"), s.MetricAggregatePolicy)...)
	}
	if s.MetricMemoryCollectPolicy != nil {
		errs = append(errs, validateEnum(path.Child("metricMemoryCollectPolicy"), *s.MetricMemoryCollectPolicy, false,
			slov1alpha1.UsageWithoutPageCache, slov1alpha1.UsageWithHotPageCache, slov1alpha1.UsageWithPageCache)...)
	}
	errs = append(errs, validateRange(path.Child("cpuReclaimThresholdPercent"), s.CPUReclaimThresholdPercent, 0, OverCommitPercentLimit)...)
	if s.CPUCalculatePolicy != nil {
		errs = append(errs, validateEnum(path.Child("cpuCalculatePolicy"), *s.CPUCalculatePolicy, false,
			CalculateByPodUsage, CalculateByPodMaxUsageRequest)...)
	}
	errs = append(errs, validateRange(path.Child("memoryReclaimThresholdPercent"), s.MemoryReclaimThresholdPercent, 0, OverCommitPercentLimit)...)
	if s.MemoryCalculatePolicy != nil {
		errs = append(errs, validateEnum(path.Child("memoryCalculatePolicy"), *s.MemoryCalculatePolicy, false,
			CalculateByPodUsage, CalculateByPodRequest, CalculateByPodMaxUsageRequest)...)
	}
	errs = append(errs, validateMin(path.Child("degradeTimeMinutes"), s.DegradeTimeMinutes, 1)...)
	errs = append(errs, validateMin(path.Child("updateTimeThresholdSeconds"), s.UpdateTimeThresholdSeconds, 1)...)
	if d := s.ResourceDiffThreshold; d != nil && !(*d > 0 && *d <= 1) {
		errs = append(errs, field.Invalid(path.Child("resourceDiffThreshold"), *d, "must be greater than 0 and at most 1"))
	}
	if s.MidReclaimMode != nil {
		errs = append(errs, validateEnum(path.Child("midReclaimMode"), *s.MidReclaimMode, false, MidReclaimModeStatic)...)
	}
	errs = append(errs, validatePercent(path.Child("midCPUThresholdPercent"), s.MidCPUThresholdPercent)...)
	errs = append(errs, validatePercent(path.Child("midMemoryThresholdPercent"), s.MidMemoryThresholdPercent)...)
	errs = append(errs, validatePercent(path.Child("midUnallocatedPercent"), s.MidUnallocatedPercent)...)
	errs = append(errs, validatePercent(path.Child("midStaticCPUReservedPercent"), s.MidStaticCPUReservedPercent)...)
	errs = append(errs, validatePercent(path.Child("midStaticMemoryReservedPercent"), s.MidStaticMemoryReservedPercent)...)
	errs = append(errs, validateRange(path.Child("batchCPUThresholdPercent"), s.BatchCPUThresholdPercent, 0, OverCommitPercentLimit)...)
	errs = append(errs, validateRange(path.Child("batchMemoryThresholdPercent"), s.BatchMemoryThresholdPercent, 0, OverCommitPercentLimit)...)
	return errs
}

// validateAggregatePolicy checks the aggregation windows against the NodeMetric schema: at most 16, each positive.
func validateAggregatePolicy(path *field.Path, p *slov1alpha1.AggregatePolicy) field.ErrorList {
	var errs field.ErrorList
	durations := path.Child("durations")
	if len(p.Durations) > maxAggregateDurations {
		errs = append(errs, field.TooMany(durations, len(p.Durations), maxAggregateDurations))
	}
	for i, d := range p.Durations {
		if d.Duration <= 0 {
			errs = append(errs, field.Invalid(durations.Index(i), d.Duration.String(), "must be positive"))
		}
	}
	return errs
}
