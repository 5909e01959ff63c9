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

// Package validation validates the arguments of koord-scheduler's plugins: one function per argument type,
// run once when the plugin is built.
package validation

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

// DefaultEstimatorName is the name of the only pod usage estimator, as Koordinator spells it.
const DefaultEstimatorName = "defaultEstimator"

// ValidateLoadAwareSchedulingArgs checks LoadAwareSchedulingArgs after defaulting: a positive metric
// expiration, percentages in [0, 100] for every threshold and scaling factor, weights in [0, 100] with at
// least one resource weight above 0, non-negative estimation seconds, known aggregation types (and one
// whenever aggregated thresholds are given), non-negative windows, the default estimator only, and valid,
// distinct resource names.
func ValidateLoadAwareSchedulingArgs(path *field.Path, args *config.LoadAwareSchedulingArgs) field.ErrorList {
	const maxWeight = 100
	var errs field.ErrorList
	if args.NodeMetricExpirationSeconds <= 0 {
		errs = append(errs, field.Invalid(path.Child("nodeMetricExpirationSeconds"), args.NodeMetricExpirationSeconds, "must be greater than 0"))
	}
	errs = append(errs, validateResourceMap(path.Child("resourceWeights"), args.ResourceWeights, maxWeight, "must be a weight in [0, 100]")...)
	if args.DominantResourceWeight < 0 || args.DominantResourceWeight > maxWeight {
		errs = append(errs, field.Invalid(path.Child("dominantResourceWeight"), args.DominantResourceWeight, "must be a weight in [0, 100]"))
	}
	var weightSum int64
	for _, w := range args.ResourceWeights {
		weightSum += w
	}
	if weightSum <= 0 && args.DominantResourceWeight == 0 {
		errs = append(errs, field.Invalid(path.Child("resourceWeights"), args.ResourceWeights, "at least one weight, or dominantResourceWeight, must be greater than 0"))
	}
	errs = append(errs, validatePercentages(path.Child("usageThresholds"), args.UsageThresholds)...)
	errs = append(errs, validatePercentages(path.Child("prodUsageThresholds"), args.ProdUsageThresholds)...)
	errs = append(errs, validatePercentages(path.Child("estimatedScalingFactors"), args.EstimatedScalingFactors)...)
	if args.EstimatedSecondsAfterPodScheduled < 0 {
		errs = append(errs, field.Invalid(path.Child("estimatedSecondsAfterPodScheduled"), args.EstimatedSecondsAfterPodScheduled, "must not be negative"))
	}
	if args.EstimatedSecondsAfterInitialized < 0 {
		errs = append(errs, field.Invalid(path.Child("estimatedSecondsAfterInitialized"), args.EstimatedSecondsAfterInitialized, "must not be negative"))
	}
	if args.Estimator != "" && args.Estimator != DefaultEstimatorName {
		errs = append(errs, field.NotSupported(path.Child("estimator"), args.Estimator, []string{DefaultEstimatorName}))
	}
	if a := args.Aggregated; a != nil {
		errs = append(errs, validateAggregated(path.Child("aggregated"), a)...)
	}
	seen := sets.New[corev1.ResourceName]()
	for i, name := range args.SupportedResources {
		p := path.Child("supportedResources").Index(i)
		if seen.Has(name) {
			errs = append(errs, field.Duplicate(p, name))
			continue
		}
		seen.Insert(name)
		errs = append(errs, validateResourceName(p, name)...)
	}
	return errs
}

// aggregationTypes are the statistics NodeMetric reports, in the order error messages list them.
var aggregationTypes = []extension.AggregationType{extension.AVG, extension.P50, extension.P90, extension.P95, extension.P99}

func validateAggregated(path *field.Path, a *config.LoadAwareSchedulingAggregatedArgs) field.ErrorList {
	errs := validatePercentages(path.Child("usageThresholds"), a.UsageThresholds)
	for _, f := range []struct {
		name string
		typ  extension.AggregationType
	}{{"usageAggregationType", a.UsageAggregationType}, {"scoreAggregationType", a.ScoreAggregationType}} {
		if f.typ != "" && !f.typ.Valid() {
			errs = append(errs, field.NotSupported(path.Child(f.name), f.typ, aggregationTypes))
		}
	}
	if len(a.UsageThresholds) > 0 && a.UsageAggregationType == "" {
		errs = append(errs, field.Required(path.Child("usageAggregationType"), "must be set when usageThresholds are"))
	}
	if a.UsageAggregatedDuration.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("usageAggregatedDuration"), a.UsageAggregatedDuration.String(), "must not be negative"))
	}
	if a.ScoreAggregatedDuration.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("scoreAggregatedDuration"), a.ScoreAggregatedDuration.String(), "must not be negative"))
	}
	return errs
}

func validatePercentages(path *field.Path, m map[corev1.ResourceName]int64) field.ErrorList {
	return validateResourceMap(path, m, 100, "must be a percentage in [0, 100]")
}

// validateResourceMap checks that every key of m is a resource name and every value is in [0, maxValue], in
// key order so that messages are stable.
func validateResourceMap(path *field.Path, m map[corev1.ResourceName]int64, maxValue int64, msg string) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(m)) {
		p := path.Key(string(name))
		errs = append(errs, validateResourceName(p, name)...)
		if v := m[name]; v < 0 || v > maxValue {
			errs = append(errs, field.Invalid(p, v, msg))
		}
	}
	return errs
}

// validateResourceName checks that name is a qualified name, as resource names are.
func validateResourceName(path *field.Path, name corev1.ResourceName) field.ErrorList {
	if msgs := validation.IsQualifiedName(string(name)); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, name, strings.Join(msgs, "; "))}
	}
	return nil
}
