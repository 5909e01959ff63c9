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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadAwareSchedulingArgs configures the LoadAwareScheduling plugin. Thresholds, weights and factors are
// percentages (weights: relative). See SetDefaults_LoadAwareSchedulingArgs for the defaults.
type LoadAwareSchedulingArgs struct {
	metav1.TypeMeta `json:",inline"`

	// FilterExpiredNodeMetrics rejects nodes whose NodeMetric is older than NodeMetricExpirationSeconds,
	// unless EnableScheduleWhenNodeMetricsExpired is set. Defaults to true.
	FilterExpiredNodeMetrics *bool `json:"filterExpiredNodeMetrics,omitempty"`
	// NodeMetricExpirationSeconds is the age, in seconds, after which a NodeMetric counts as expired.
	// Defaults to 180.
	NodeMetricExpirationSeconds *int64 `json:"nodeMetricExpirationSeconds,omitempty"`
	// EnableScheduleWhenNodeMetricsExpired lets pods onto nodes whose NodeMetric expired, treating them as
	// nodes without usage information. Defaults to false.
	EnableScheduleWhenNodeMetricsExpired *bool `json:"enableScheduleWhenNodeMetricsExpired,omitempty"`
	// ResourceWeights weighs each resource in the score. Defaults to cpu 1, memory 1 when empty.
	ResourceWeights map[corev1.ResourceName]int64 `json:"resourceWeights,omitempty"`
	// DominantResourceWeight weighs the score of the node's most used resource on top of ResourceWeights.
	DominantResourceWeight int64 `json:"dominantResourceWeight,omitempty"`
	// UsageThresholds are the highest node usages, in percent by resource, a pod may push a node to; 0 turns
	// a resource's check off. Defaults to cpu 65, memory 95 when empty.
	UsageThresholds map[corev1.ResourceName]int64 `json:"usageThresholds,omitempty"`
	// ProdUsageThresholds, when set, are the thresholds of koord-prod pods, compared with the usage of
	// koord-prod pods only. Off by default.
	ProdUsageThresholds map[corev1.ResourceName]int64 `json:"prodUsageThresholds,omitempty"`
	// ProdUsageIncludeSys adds the system usage to the koord-prod usage.
	ProdUsageIncludeSys bool `json:"prodUsageIncludeSys,omitempty"`
	// ScoreAccordingProdUsage scores koord-prod pods on the usage of koord-prod pods only. Defaults to false.
	ScoreAccordingProdUsage *bool `json:"scoreAccordingProdUsage,omitempty"`
	// Estimator names the estimator of pod usage: empty or "defaultEstimator", the only one.
	Estimator string `json:"estimator,omitempty"`
	// EstimatedScalingFactors are the shares of max(request, limit), in percent by resource, a pod is
	// expected to use. cpu 85 and memory 70 are added when missing.
	EstimatedScalingFactors map[corev1.ResourceName]int64 `json:"estimatedScalingFactors,omitempty"`
	// EstimatedSecondsAfterPodScheduled keeps a pod's usage estimated for this many seconds after it was
	// scheduled, even when its NodeMetric reports it.
	EstimatedSecondsAfterPodScheduled *int64 `json:"estimatedSecondsAfterPodScheduled,omitempty"`
	// EstimatedSecondsAfterInitialized keeps a pod's usage estimated for this many seconds after it was
	// initialized, and while it is not yet.
	EstimatedSecondsAfterInitialized *int64 `json:"estimatedSecondsAfterInitialized,omitempty"`
	// AllowCustomizeEstimation lets pods override the scaling factors and estimation seconds through the
	// scheduling.koordinator.sh/load-estimated-* annotations.
	AllowCustomizeEstimation bool `json:"allowCustomizeEstimation,omitempty"`
	// Aggregated filters and scores on a statistic of usage over a window instead of the latest usage.
	Aggregated *LoadAwareSchedulingAggregatedArgs `json:"aggregated,omitempty"`
	// SupportedResources are resources, beyond cpu, memory and those named in the maps above, that the
	// scheduling.koordinator.sh/usage-thresholds node annotation may set thresholds for.
	SupportedResources []corev1.ResourceName `json:"supportedResources,omitempty"`
}

// LoadAwareSchedulingAggregatedArgs selects statistics of usage over a window (NodeMetric's
// aggregatedNodeUsages).
type LoadAwareSchedulingAggregatedArgs struct {
	// UsageThresholds are the thresholds on the statistic, in percent by resource. With UsageAggregationType
	// they replace UsageThresholds for pods that are not checked against ProdUsageThresholds.
	UsageThresholds map[corev1.ResourceName]int64 `json:"usageThresholds,omitempty"`
	// UsageAggregationType is the statistic the filter uses: avg, p50, p90, p95 or p99.
	UsageAggregationType extension.AggregationType `json:"usageAggregationType,omitempty"`
	// UsageAggregatedDuration is the window of the filter's statistic; empty means the longest window the
	// NodeMetric reports.
	UsageAggregatedDuration *metav1.Duration `json:"usageAggregatedDuration,omitempty"`
	// ScoreAggregationType, when set, is the statistic the score uses instead of the latest usage.
	ScoreAggregationType extension.AggregationType `json:"scoreAggregationType,omitempty"`
	// ScoreAggregatedDuration is the window of the score's statistic; empty means the longest window the
	// NodeMetric reports.
	ScoreAggregatedDuration *metav1.Duration `json:"scoreAggregatedDuration,omitempty"`
}
