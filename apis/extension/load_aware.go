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

package extension

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations of load-aware scheduling.
const (
	// AnnotationNodeUsageThresholds on a node overrides the LoadAwareScheduling
	// usage thresholds; see CustomUsageThresholds.
	AnnotationNodeUsageThresholds = SchedulingDomainPrefix + "usage-thresholds"
	// AnnotationCustomEstimatedScalingFactors on a pod overrides the factors,
	// in percent by resource (JSON), used to estimate its usage.
	AnnotationCustomEstimatedScalingFactors = SchedulingDomainPrefix + "load-estimated-scaling-factors"
	// AnnotationCustomEstimatedSecondsAfterPodScheduled on a pod is how many
	// seconds after scheduling its usage is estimated rather than measured.
	AnnotationCustomEstimatedSecondsAfterPodScheduled = SchedulingDomainPrefix + "load-estimated-seconds-after-pod-scheduled"
	// AnnotationCustomEstimatedSecondsAfterInitialized on a pod is how many
	// seconds after initialization its usage is estimated rather than
	// measured.
	AnnotationCustomEstimatedSecondsAfterInitialized = SchedulingDomainPrefix + "load-estimated-seconds-after-initialized"
)

// CustomUsageThresholds is the value of AnnotationNodeUsageThresholds. All
// thresholds are percentages in [0, 100].
type CustomUsageThresholds struct {
	// UsageThresholds are the usage thresholds of the whole node.
	UsageThresholds map[corev1.ResourceName]int64 `json:"usageThresholds,omitempty"`
	// ProdUsageThresholds are the thresholds of the usage of koord-prod pods
	// relative to the whole node.
	ProdUsageThresholds map[corev1.ResourceName]int64 `json:"prodUsageThresholds,omitempty"`
	// AggregatedUsage filters and scores on a percentile of usage over a
	// window instead of the latest usage.
	AggregatedUsage *CustomAggregatedUsage `json:"aggregatedUsage,omitempty"`
}

// CustomAggregatedUsage holds the thresholds on aggregated usage.
type CustomAggregatedUsage struct {
	// UsageThresholds are the thresholds on the aggregated usage of the
	// node.
	UsageThresholds map[corev1.ResourceName]int64 `json:"usageThresholds,omitempty"`
	// UsageAggregationType is the statistic compared with the thresholds.
	UsageAggregationType AggregationType `json:"usageAggregationType,omitempty"`
	// UsageAggregatedDuration is the window of the statistic.
	UsageAggregatedDuration *metav1.Duration `json:"usageAggregatedDuration,omitempty"`
}

// validate checks the thresholds, the aggregation type and the window.
func (t *CustomUsageThresholds) validate() error {
	errs := []error{
		validatePercentages("usageThresholds", t.UsageThresholds),
		validatePercentages("prodUsageThresholds", t.ProdUsageThresholds),
	}
	if a := t.AggregatedUsage; a != nil {
		errs = append(errs, validatePercentages("aggregatedUsage.usageThresholds", a.UsageThresholds))
		if a.UsageAggregationType != "" && !a.UsageAggregationType.Valid() {
			errs = append(errs, fmt.Errorf("aggregatedUsage.usageAggregationType: unsupported value %q", a.UsageAggregationType))
		}
		if d := a.UsageAggregatedDuration; d != nil && d.Duration < 0 {
			errs = append(errs, fmt.Errorf("aggregatedUsage.usageAggregatedDuration: %s is negative", d.Duration))
		}
	}
	return errors.Join(errs...)
}

// validatePercentages checks that every value of m is in [0, 100].
func validatePercentages(field string, m map[corev1.ResourceName]int64) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if v := m[name]; v < 0 || v > 100 {
			errs = append(errs, fmt.Errorf("%s[%s]: %d is not a percentage in [0, 100]", field, name, v))
		}
	}
	return errors.Join(errs...)
}

// GetCustomUsageThresholds parses AnnotationNodeUsageThresholds. It returns
// nil and no error when the annotation is missing, and an *AnnotationError
// when it is not valid JSON, a threshold is outside [0, 100], the aggregation
// type is unknown or the window is negative.
func GetCustomUsageThresholds(annotations map[string]string) (*CustomUsageThresholds, error) {
	return getJSONAnnotation[CustomUsageThresholds](annotations, AnnotationNodeUsageThresholds)
}

// SetCustomUsageThresholds stores thresholds in AnnotationNodeUsageThresholds
// on obj, or removes the annotation when thresholds is nil. It writes nothing
// and returns an *AnnotationError when thresholds is invalid.
func SetCustomUsageThresholds(obj metav1.Object, thresholds *CustomUsageThresholds) error {
	return setJSONAnnotation(obj, AnnotationNodeUsageThresholds, thresholds)
}
