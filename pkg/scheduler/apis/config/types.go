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

package config

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadAwareSchedulingArgs configures the LoadAwareScheduling plugin. Defaults are applied to the versioned
// type before conversion, so every field here holds its effective value. All thresholds and factors are
// percentages.
type LoadAwareSchedulingArgs struct {
	metav1.TypeMeta

	// FilterExpiredNodeMetrics rejects nodes whose NodeMetric is older than NodeMetricExpirationSeconds, unless
	// EnableScheduleWhenNodeMetricsExpired is set.
	FilterExpiredNodeMetrics bool
	// NodeMetricExpirationSeconds is the age after which a NodeMetric counts as expired.
	NodeMetricExpirationSeconds int64
	// EnableScheduleWhenNodeMetricsExpired lets pods onto nodes whose NodeMetric expired; such nodes are
	// treated as nodes without usage information (no threshold check, score 0).
	EnableScheduleWhenNodeMetricsExpired bool
	// ResourceWeights weighs each resource's score.
	ResourceWeights map[corev1.ResourceName]int64
	// DominantResourceWeight weighs the score of the node's most used resource on top of ResourceWeights.
	DominantResourceWeight int64
	// UsageThresholds are the highest node usages, by resource, a pod may push a node to. 0 turns the check
	// of a resource off.
	UsageThresholds map[corev1.ResourceName]int64
	// ProdUsageThresholds, when not empty, replace UsageThresholds for koord-prod pods and are compared with
	// the usage of koord-prod pods only.
	ProdUsageThresholds map[corev1.ResourceName]int64
	// ProdUsageIncludeSys adds the system usage (node usage not accounted to pods) to the koord-prod usage.
	ProdUsageIncludeSys bool
	// ScoreAccordingProdUsage scores koord-prod pods on the usage of koord-prod pods only.
	ScoreAccordingProdUsage bool
	// Estimator names the estimator of pod usage. Only the default one exists; the field is kept so that
	// Koordinator configurations load.
	Estimator string
	// EstimatedScalingFactors are the shares of max(request, limit) a pod is expected to use, by resource.
	EstimatedScalingFactors map[corev1.ResourceName]int64
	// EstimatedSecondsAfterPodScheduled keeps a pod's usage estimated, rather than taken from its NodeMetric,
	// for this many seconds after it was scheduled. 0 turns it off.
	EstimatedSecondsAfterPodScheduled int64
	// EstimatedSecondsAfterInitialized keeps a pod's usage estimated for this many seconds after it was
	// initialized (and while it is not yet). 0 turns it off.
	EstimatedSecondsAfterInitialized int64
	// AllowCustomizeEstimation lets pods override the scaling factors and the estimation seconds with
	// annotations.
	AllowCustomizeEstimation bool
	// Aggregated filters and scores on a statistic of usage over a window instead of the latest usage.
	Aggregated *LoadAwareSchedulingAggregatedArgs
	// SupportedResources are resources, beyond cpu, memory and those named above, that node annotations may
	// set thresholds for.
	SupportedResources []corev1.ResourceName
}

// LoadAwareSchedulingAggregatedArgs selects statistics of usage over a window.
type LoadAwareSchedulingAggregatedArgs struct {
	// UsageThresholds are the thresholds on the statistic; with UsageAggregationType they replace
	// UsageThresholds of non-prod pods.
	UsageThresholds map[corev1.ResourceName]int64
	// UsageAggregationType is the statistic the filter compares with UsageThresholds.
	UsageAggregationType extension.AggregationType
	// UsageAggregatedDuration is the window of that statistic; 0 means the longest window reported.
	UsageAggregatedDuration metav1.Duration
	// ScoreAggregationType, when set, is the statistic the score uses instead of the latest usage.
	ScoreAggregationType extension.AggregationType
	// ScoreAggregatedDuration is the window of the score's statistic; 0 means the longest window reported.
	ScoreAggregatedDuration metav1.Duration
}
