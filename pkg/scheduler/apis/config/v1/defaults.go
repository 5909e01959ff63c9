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
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Defaults of LoadAwareSchedulingArgs (Koordinator's code defaults).
const (
	// DefaultNodeMetricExpirationSeconds is the default NodeMetricExpirationSeconds.
	DefaultNodeMetricExpirationSeconds int64 = 180
)

// defaultResourceWeights, defaultUsageThresholds and defaultEstimatedScalingFactors are copied, never shared,
// into args.
var (
	defaultResourceWeights = map[corev1.ResourceName]int64{
		corev1.ResourceCPU:    1,
		corev1.ResourceMemory: 1,
	}
	defaultUsageThresholds = map[corev1.ResourceName]int64{
		corev1.ResourceCPU:    65,
		corev1.ResourceMemory: 95,
	}
	defaultEstimatedScalingFactors = map[corev1.ResourceName]int64{
		corev1.ResourceCPU:    85,
		corev1.ResourceMemory: 70,
	}
)

// SetDefaults_LoadAwareSchedulingArgs fills in the defaults of LoadAwareSchedulingArgs: metrics expire after
// 180 s and then reject the node, resource weights cpu 1 and memory 1 and usage thresholds cpu 65% and memory
// 95% when none are given, and scaling factors cpu 85% and memory 70% for whichever of the two is missing.
func SetDefaults_LoadAwareSchedulingArgs(obj *LoadAwareSchedulingArgs) {
	if obj.FilterExpiredNodeMetrics == nil {
		obj.FilterExpiredNodeMetrics = ptr.To(true)
	}
	if obj.NodeMetricExpirationSeconds == nil {
		obj.NodeMetricExpirationSeconds = ptr.To(DefaultNodeMetricExpirationSeconds)
	}
	if obj.EnableScheduleWhenNodeMetricsExpired == nil {
		obj.EnableScheduleWhenNodeMetricsExpired = ptr.To(false)
	}
	if obj.ScoreAccordingProdUsage == nil {
		obj.ScoreAccordingProdUsage = ptr.To(false)
	}
	// As Koordinator's: with a dominant resource weight and no weights, the score is the dominant one alone.
	if len(obj.ResourceWeights) == 0 && obj.DominantResourceWeight == 0 {
		obj.ResourceWeights = maps.Clone(defaultResourceWeights)
	}
	if len(obj.UsageThresholds) == 0 {
		obj.UsageThresholds = maps.Clone(defaultUsageThresholds)
	}
	if obj.EstimatedScalingFactors == nil {
		obj.EstimatedScalingFactors = make(map[corev1.ResourceName]int64, len(defaultEstimatedScalingFactors))
	}
	for name, factor := range defaultEstimatedScalingFactors {
		if _, ok := obj.EstimatedScalingFactors[name]; !ok {
			obj.EstimatedScalingFactors[name] = factor
		}
	}
}
