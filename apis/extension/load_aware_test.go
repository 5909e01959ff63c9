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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGetCustomUsageThresholds(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    *CustomUsageThresholds
		wantErr string
	}{
		"missing": {value: nil, want: nil},
		"empty":   {value: new(""), want: nil},
		"usage thresholds": {
			value: new(`{"usageThresholds":{"cpu":65,"memory":95},"prodUsageThresholds":{"cpu":0}}`),
			want: &CustomUsageThresholds{
				UsageThresholds:     map[corev1.ResourceName]int64{corev1.ResourceCPU: 65, corev1.ResourceMemory: 95},
				ProdUsageThresholds: map[corev1.ResourceName]int64{corev1.ResourceCPU: 0},
			},
		},
		"aggregated": {
			value: new(`{"aggregatedUsage":{"usageThresholds":{"cpu":100},"usageAggregationType":"p95","usageAggregatedDuration":"5m"}}`),
			want: &CustomUsageThresholds{AggregatedUsage: &CustomAggregatedUsage{
				UsageThresholds:         map[corev1.ResourceName]int64{corev1.ResourceCPU: 100},
				UsageAggregationType:    P95,
				UsageAggregatedDuration: &metav1.Duration{Duration: 5 * time.Minute},
			}},
		},
		"above 100": {
			value:   new(`{"usageThresholds":{"cpu":101}}`),
			wantErr: `annotation "scheduling.koordinator.sh/usage-thresholds": usageThresholds[cpu]: 101 is not a percentage in [0, 100]`,
		},
		"negative": {
			value:   new(`{"prodUsageThresholds":{"memory":-1}}`),
			wantErr: `annotation "scheduling.koordinator.sh/usage-thresholds": prodUsageThresholds[memory]: -1 is not a percentage in [0, 100]`,
		},
		"bad aggregation": {
			value: new(`{"aggregatedUsage":{"usageThresholds":{"cpu":200},"usageAggregationType":"max","usageAggregatedDuration":"-1m"}}`),
			wantErr: "annotation \"scheduling.koordinator.sh/usage-thresholds\": aggregatedUsage.usageThresholds[cpu]: 200 is not a percentage in [0, 100]\n" +
				"aggregatedUsage.usageAggregationType: unsupported value \"max\"\n" +
				"aggregatedUsage.usageAggregatedDuration: -1m0s is negative",
		},
		"fractional threshold": {
			value:   new(`{"usageThresholds":{"cpu":65.5}}`),
			wantErr: `annotation "scheduling.koordinator.sh/usage-thresholds": json: cannot unmarshal number 65.5 into Go struct field CustomUsageThresholds.usageThresholds of type int64`,
		},
		"string threshold": {
			value:   new(`{"usageThresholds":{"cpu":"65"}}`),
			wantErr: `annotation "scheduling.koordinator.sh/usage-thresholds": json: cannot unmarshal string into Go struct field CustomUsageThresholds.usageThresholds of type int64`,
		},
		"bad duration": {
			value:   new(`{"aggregatedUsage":{"usageAggregatedDuration":"five minutes"}}`),
			wantErr: `annotation "scheduling.koordinator.sh/usage-thresholds": time: invalid duration "five minutes"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationNodeUsageThresholds] = *tc.value
			}
			got, err := GetCustomUsageThresholds(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetCustomUsageThresholds() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetCustomUsageThresholds() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetCustomUsageThresholds(t *testing.T) {
	tests := map[string]struct {
		thresholds *CustomUsageThresholds
		wantValue  string
		wantErr    string
	}{
		"usage": {
			thresholds: &CustomUsageThresholds{UsageThresholds: map[corev1.ResourceName]int64{corev1.ResourceMemory: 80, corev1.ResourceCPU: 70}},
			wantValue:  `{"usageThresholds":{"cpu":70,"memory":80}}`,
		},
		"aggregated": {
			thresholds: &CustomUsageThresholds{AggregatedUsage: &CustomAggregatedUsage{
				UsageAggregationType:    AVG,
				UsageAggregatedDuration: &metav1.Duration{Duration: 90 * time.Second},
			}},
			wantValue: `{"aggregatedUsage":{"usageAggregationType":"avg","usageAggregatedDuration":"1m30s"}}`,
		},
		"invalid": {
			thresholds: &CustomUsageThresholds{UsageThresholds: map[corev1.ResourceName]int64{corev1.ResourceCPU: 150}},
			wantErr:    `annotation "scheduling.koordinator.sh/usage-thresholds": usageThresholds[cpu]: 150 is not a percentage in [0, 100]`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			node := &corev1.Node{}
			err := SetCustomUsageThresholds(node, tc.thresholds)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("SetCustomUsageThresholds() error (-want,+got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.wantValue, node.Annotations[AnnotationNodeUsageThresholds]); diff != "" {
				t.Errorf("annotation value (-want,+got):\n%s", diff)
			}
			got, err := GetCustomUsageThresholds(node.Annotations)
			if err != nil {
				t.Fatalf("GetCustomUsageThresholds() error: %v", err)
			}
			if diff := cmp.Diff(tc.thresholds, got); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
	t.Run("nil removes", func(t *testing.T) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationNodeUsageThresholds: `{}`}}}
		if err := SetCustomUsageThresholds(node, nil); err != nil {
			t.Fatalf("SetCustomUsageThresholds(nil) error: %v", err)
		}
		if diff := cmp.Diff(map[string]string{}, node.Annotations); diff != "" {
			t.Errorf("annotations (-want,+got):\n%s", diff)
		}
	})
}

func TestAggregationTypeValid(t *testing.T) {
	tests := map[string]struct {
		t    AggregationType
		want bool
	}{
		"avg":   {t: AVG, want: true},
		"p50":   {t: P50, want: true},
		"p90":   {t: P90, want: true},
		"p95":   {t: P95, want: true},
		"p99":   {t: P99, want: true},
		"max":   {t: "max", want: false},
		"empty": {t: "", want: false},
		"upper": {t: "P99", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.t.Valid()); diff != "" {
				t.Errorf("Valid() (-want,+got):\n%s", diff)
			}
		})
	}
}
