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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestSetDefaultsLoadAwareSchedulingArgs(t *testing.T) {
	defaulted := func(edit func(*LoadAwareSchedulingArgs)) *LoadAwareSchedulingArgs {
		a := &LoadAwareSchedulingArgs{
			FilterExpiredNodeMetrics:             ptr.To(true),
			NodeMetricExpirationSeconds:          ptr.To[int64](180),
			EnableScheduleWhenNodeMetricsExpired: ptr.To(false),
			ScoreAccordingProdUsage:              ptr.To(false),
			ResourceWeights:                      map[corev1.ResourceName]int64{corev1.ResourceCPU: 1, corev1.ResourceMemory: 1},
			UsageThresholds:                      map[corev1.ResourceName]int64{corev1.ResourceCPU: 65, corev1.ResourceMemory: 95},
			EstimatedScalingFactors:              map[corev1.ResourceName]int64{corev1.ResourceCPU: 85, corev1.ResourceMemory: 70},
		}
		if edit != nil {
			edit(a)
		}
		return a
	}
	tests := map[string]struct {
		in   *LoadAwareSchedulingArgs
		want *LoadAwareSchedulingArgs
	}{
		"empty": {
			in:   &LoadAwareSchedulingArgs{},
			want: defaulted(nil),
		},
		"given values stay": {
			in: &LoadAwareSchedulingArgs{
				FilterExpiredNodeMetrics:             ptr.To(false),
				NodeMetricExpirationSeconds:          ptr.To[int64](300),
				EnableScheduleWhenNodeMetricsExpired: ptr.To(true),
				ScoreAccordingProdUsage:              ptr.To(true),
				ResourceWeights:                      map[corev1.ResourceName]int64{corev1.ResourceCPU: 3},
				UsageThresholds:                      map[corev1.ResourceName]int64{corev1.ResourceCPU: 0, corev1.ResourceMemory: 0},
				EstimatedScalingFactors:              map[corev1.ResourceName]int64{corev1.ResourceCPU: 100, corev1.ResourceMemory: 100},
			},
			want: defaulted(func(a *LoadAwareSchedulingArgs) {
				a.FilterExpiredNodeMetrics = ptr.To(false)
				a.NodeMetricExpirationSeconds = ptr.To[int64](300)
				a.EnableScheduleWhenNodeMetricsExpired = ptr.To(true)
				a.ScoreAccordingProdUsage = ptr.To(true)
				a.ResourceWeights = map[corev1.ResourceName]int64{corev1.ResourceCPU: 3}
				a.UsageThresholds = map[corev1.ResourceName]int64{corev1.ResourceCPU: 0, corev1.ResourceMemory: 0}
				a.EstimatedScalingFactors = map[corev1.ResourceName]int64{corev1.ResourceCPU: 100, corev1.ResourceMemory: 100}
			}),
		},
		"missing scaling factors are added one by one": {
			in: &LoadAwareSchedulingArgs{EstimatedScalingFactors: map[corev1.ResourceName]int64{corev1.ResourceCPU: 50, "nvidia.com/gpu": 100}},
			want: defaulted(func(a *LoadAwareSchedulingArgs) {
				a.EstimatedScalingFactors = map[corev1.ResourceName]int64{corev1.ResourceCPU: 50, corev1.ResourceMemory: 70, "nvidia.com/gpu": 100}
			}),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			SetObjectDefaults_LoadAwareSchedulingArgs(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("defaults (-want,+got):\n%s", diff)
			}
		})
	}

	// Defaulting must not hand out the package's maps: editing one configuration must not change the next.
	a := &LoadAwareSchedulingArgs{}
	SetObjectDefaults_LoadAwareSchedulingArgs(a)
	a.UsageThresholds[corev1.ResourceCPU] = 1
	a.ResourceWeights[corev1.ResourceCPU] = 9
	a.EstimatedScalingFactors[corev1.ResourceCPU] = 1
	b := &LoadAwareSchedulingArgs{}
	SetObjectDefaults_LoadAwareSchedulingArgs(b)
	if diff := cmp.Diff(defaulted(nil), b); diff != "" {
		t.Errorf("defaults after editing earlier defaults (-want,+got):\n%s", diff)
	}
}
