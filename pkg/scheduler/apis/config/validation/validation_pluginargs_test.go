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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

func validArgs() *config.LoadAwareSchedulingArgs {
	return &config.LoadAwareSchedulingArgs{
		FilterExpiredNodeMetrics:    true,
		NodeMetricExpirationSeconds: 180,
		ResourceWeights:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 1, corev1.ResourceMemory: 1},
		UsageThresholds:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 65, corev1.ResourceMemory: 95},
		EstimatedScalingFactors:     map[corev1.ResourceName]int64{corev1.ResourceCPU: 85, corev1.ResourceMemory: 70},
	}
}

func TestValidateLoadAwareSchedulingArgs(t *testing.T) {
	path := field.NewPath("args")
	tests := map[string]struct {
		edit func(*config.LoadAwareSchedulingArgs)
		want field.ErrorList
	}{
		"defaults are valid": {},
		"everything set and valid": {
			edit: func(a *config.LoadAwareSchedulingArgs) {
				a.DominantResourceWeight = 2
				a.ProdUsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceCPU: 0, corev1.ResourceMemory: 100}
				a.EstimatedSecondsAfterPodScheduled = 60
				a.EstimatedSecondsAfterInitialized = 30
				a.Estimator = DefaultEstimatorName
				a.Aggregated = &config.LoadAwareSchedulingAggregatedArgs{
					UsageThresholds:         map[corev1.ResourceName]int64{corev1.ResourceCPU: 70},
					UsageAggregationType:    extension.P95,
					UsageAggregatedDuration: metav1.Duration{Duration: 5 * time.Minute},
					ScoreAggregationType:    extension.AVG,
				}
				a.SupportedResources = []corev1.ResourceName{extension.ResourceNvidiaGPU}
			},
		},
		"expiration not positive": {
			edit: func(a *config.LoadAwareSchedulingArgs) { a.NodeMetricExpirationSeconds = 0 },
			want: field.ErrorList{field.Invalid(path.Child("nodeMetricExpirationSeconds"), nil, "")},
		},
		"weight out of range": {
			edit: func(a *config.LoadAwareSchedulingArgs) { a.ResourceWeights[corev1.ResourceCPU] = 101 },
			want: field.ErrorList{field.Invalid(path.Child("resourceWeights").Key("cpu"), nil, "")},
		},
		"all weights 0": {
			edit: func(a *config.LoadAwareSchedulingArgs) {
				a.ResourceWeights = map[corev1.ResourceName]int64{corev1.ResourceCPU: 0}
			},
			want: field.ErrorList{field.Invalid(path.Child("resourceWeights"), nil, "")},
		},
		"dominant weight alone": {
			edit: func(a *config.LoadAwareSchedulingArgs) {
				a.ResourceWeights = nil
				a.DominantResourceWeight = 5
			},
		},
		"dominant weight negative": {
			edit: func(a *config.LoadAwareSchedulingArgs) { a.DominantResourceWeight = -1 },
			want: field.ErrorList{field.Invalid(path.Child("dominantResourceWeight"), nil, "")},
		},
		"thresholds and factors out of range": {
			edit: func(a *config.LoadAwareSchedulingArgs) {
				a.UsageThresholds[corev1.ResourceMemory] = 101
				a.ProdUsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceCPU: -1}
				a.EstimatedScalingFactors[corev1.ResourceCPU] = 200
			},
			want: field.ErrorList{
				field.Invalid(path.Child("usageThresholds").Key("memory"), nil, ""),
				field.Invalid(path.Child("prodUsageThresholds").Key("cpu"), nil, ""),
				field.Invalid(path.Child("estimatedScalingFactors").Key("cpu"), nil, ""),
			},
		},
		"bad resource name": {
			edit: func(a *config.LoadAwareSchedulingArgs) { a.UsageThresholds["not a name!"] = 50 },
			want: field.ErrorList{field.Invalid(path.Child("usageThresholds").Key("not a name!"), nil, "")},
		},
		"negative estimation seconds": {
			edit: func(a *config.LoadAwareSchedulingArgs) {
				a.EstimatedSecondsAfterPodScheduled = -1
				a.EstimatedSecondsAfterInitialized = -1
			},
			want: field.ErrorList{
				field.Invalid(path.Child("estimatedSecondsAfterPodScheduled"), nil, ""),
				field.Invalid(path.Child("estimatedSecondsAfterInitialized"), nil, ""),
			},
		},
		"unknown estimator": {
			edit: func(a *config.LoadAwareSchedulingArgs) { a.Estimator = "magic" },
			want: field.ErrorList{field.NotSupported(path.Child("estimator"), nil, []string{DefaultEstimatorName})},
		},
		"aggregated thresholds without a statistic": {
			edit: func(a *config.LoadAwareSchedulingArgs) {
				a.Aggregated = &config.LoadAwareSchedulingAggregatedArgs{UsageThresholds: map[corev1.ResourceName]int64{corev1.ResourceCPU: 70}}
			},
			want: field.ErrorList{field.Required(path.Child("aggregated", "usageAggregationType"), "")},
		},
		"unknown statistics and negative windows": {
			edit: func(a *config.LoadAwareSchedulingArgs) {
				a.Aggregated = &config.LoadAwareSchedulingAggregatedArgs{
					UsageAggregationType:    "max",
					ScoreAggregationType:    "p42",
					UsageAggregatedDuration: metav1.Duration{Duration: -time.Second},
					ScoreAggregatedDuration: metav1.Duration{Duration: -time.Second},
					UsageThresholds:         map[corev1.ResourceName]int64{corev1.ResourceCPU: 170},
				}
			},
			want: field.ErrorList{
				field.Invalid(path.Child("aggregated", "usageThresholds").Key("cpu"), nil, ""),
				field.NotSupported(path.Child("aggregated", "usageAggregationType"), nil, []string{}),
				field.NotSupported(path.Child("aggregated", "scoreAggregationType"), nil, []string{}),
				field.Invalid(path.Child("aggregated", "usageAggregatedDuration"), nil, ""),
				field.Invalid(path.Child("aggregated", "scoreAggregatedDuration"), nil, ""),
			},
		},
		"duplicate and invalid supported resources": {
			edit: func(a *config.LoadAwareSchedulingArgs) {
				a.SupportedResources = []corev1.ResourceName{extension.ResourceNvidiaGPU, extension.ResourceNvidiaGPU, ""}
			},
			want: field.ErrorList{
				field.Duplicate(path.Child("supportedResources").Index(1), nil),
				field.Invalid(path.Child("supportedResources").Index(2), nil, ""),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := validArgs()
			if tc.edit != nil {
				tc.edit(args)
			}
			got := ValidateLoadAwareSchedulingArgs(path, args)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}
