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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

func TestMergeColocationStrategy(t *testing.T) {
	tests := map[string]struct {
		base      *ColocationStrategy
		overrides []*ColocationStrategy
		want      *ColocationStrategy
	}{
		"nil base and no overrides": {want: &ColocationStrategy{}},
		"nil overrides are skipped": {
			base:      &ColocationStrategy{Enable: ptr.To(true)},
			overrides: []*ColocationStrategy{nil},
			want:      &ColocationStrategy{Enable: ptr.To(true)},
		},
		"set fields override, unset ones keep the base": {
			base: &ColocationStrategy{Enable: ptr.To(true), CPUReclaimThresholdPercent: ptr.To[int64](60), DegradeTimeMinutes: ptr.To[int64](15)},
			overrides: []*ColocationStrategy{
				{CPUReclaimThresholdPercent: ptr.To[int64](70)},
			},
			want: &ColocationStrategy{Enable: ptr.To(true), CPUReclaimThresholdPercent: ptr.To[int64](70), DegradeTimeMinutes: ptr.To[int64](15)},
		},
		"explicit false and zero override": {
			base:      &ColocationStrategy{Enable: ptr.To(true), MidUnallocatedPercent: ptr.To[int64](20)},
			overrides: []*ColocationStrategy{{Enable: ptr.To(false), MidUnallocatedPercent: ptr.To[int64](0)}},
			want:      &ColocationStrategy{Enable: ptr.To(false), MidUnallocatedPercent: ptr.To[int64](0)},
		},
		"later overrides win": {
			base: &ColocationStrategy{CPUReclaimThresholdPercent: ptr.To[int64](60)},
			overrides: []*ColocationStrategy{
				{CPUReclaimThresholdPercent: ptr.To[int64](70), DegradeTimeMinutes: ptr.To[int64](5)},
				{CPUReclaimThresholdPercent: ptr.To[int64](80)},
			},
			want: &ColocationStrategy{CPUReclaimThresholdPercent: ptr.To[int64](80), DegradeTimeMinutes: ptr.To[int64](5)},
		},
		"lists are replaced, not merged": {
			base: &ColocationStrategy{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{{Duration: time.Minute}, {Duration: time.Hour}}}},
			overrides: []*ColocationStrategy{
				{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{{Duration: 2 * time.Minute}}}},
			},
			want: &ColocationStrategy{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{{Duration: 2 * time.Minute}}}},
		},
		"an empty struct pointer changes nothing": {
			base:      &ColocationStrategy{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{{Duration: time.Minute}}}},
			overrides: []*ColocationStrategy{{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{}}},
			want:      &ColocationStrategy{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{{Duration: time.Minute}}}},
		},
		"an explicitly empty list replaces": {
			base:      &ColocationStrategy{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{{Duration: time.Minute}}}},
			overrides: []*ColocationStrategy{{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{}}}},
			want:      &ColocationStrategy{MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{}}},
		},
		"extensions are replaced as a whole": {
			base:      &ColocationStrategy{Extensions: &slov1alpha1.ExtensionsMap{Object: map[string]any{"a": "1", "b": "2"}}},
			overrides: []*ColocationStrategy{{Extensions: &slov1alpha1.ExtensionsMap{Object: map[string]any{"a": "3"}}}},
			want:      &ColocationStrategy{Extensions: &slov1alpha1.ExtensionsMap{Object: map[string]any{"a": "3"}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			baseBefore := tc.base.DeepCopy()
			got := Merge(tc.base, tc.overrides...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Merge() (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(baseBefore, tc.base); diff != "" {
				t.Errorf("Merge() modified its base (-before,+after):\n%s", diff)
			}
		})
	}
}

func TestMergeNestedStrategies(t *testing.T) {
	tests := map[string]struct {
		base     *slov1alpha1.ResourceQOSStrategy
		override *slov1alpha1.ResourceQOSStrategy
		want     *slov1alpha1.ResourceQOSStrategy
	}{
		"deep merge into a class": {
			base: &slov1alpha1.ResourceQOSStrategy{BEClass: &slov1alpha1.ResourceQOS{
				CPUQOS:    &slov1alpha1.CPUQOSCfg{Enable: ptr.To(false), CPUQOS: slov1alpha1.CPUQOS{GroupIdentity: ptr.To[int64](-1)}},
				MemoryQOS: &slov1alpha1.MemoryQOSCfg{MemoryQOS: slov1alpha1.MemoryQOS{WmarkRatio: ptr.To[int64](95), WmarkMinAdj: ptr.To[int64](50)}},
			}},
			override: &slov1alpha1.ResourceQOSStrategy{BEClass: &slov1alpha1.ResourceQOS{
				CPUQOS:    &slov1alpha1.CPUQOSCfg{Enable: ptr.To(true)},
				MemoryQOS: &slov1alpha1.MemoryQOSCfg{MemoryQOS: slov1alpha1.MemoryQOS{WmarkRatio: ptr.To[int64](90)}},
			}},
			want: &slov1alpha1.ResourceQOSStrategy{BEClass: &slov1alpha1.ResourceQOS{
				CPUQOS:    &slov1alpha1.CPUQOSCfg{Enable: ptr.To(true), CPUQOS: slov1alpha1.CPUQOS{GroupIdentity: ptr.To[int64](-1)}},
				MemoryQOS: &slov1alpha1.MemoryQOSCfg{MemoryQOS: slov1alpha1.MemoryQOS{WmarkRatio: ptr.To[int64](90), WmarkMinAdj: ptr.To[int64](50)}},
			}},
		},
		"a class the base lacks is taken whole": {
			base: &slov1alpha1.ResourceQOSStrategy{},
			override: &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{NetworkQOS: &slov1alpha1.NetworkQOSCfg{
				NetworkQOS: slov1alpha1.NetworkQOS{IngressLimit: ptr.To(intstr.FromString("50M"))},
			}}},
			want: &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{NetworkQOS: &slov1alpha1.NetworkQOSCfg{
				NetworkQOS: slov1alpha1.NetworkQOS{IngressLimit: ptr.To(intstr.FromString("50M"))},
			}}},
		},
		"int-or-string values are replaced": {
			base: &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{NetworkQOS: &slov1alpha1.NetworkQOSCfg{
				NetworkQOS: slov1alpha1.NetworkQOS{IngressLimit: ptr.To(intstr.FromString("50M")), EgressLimit: ptr.To(intstr.FromInt32(90))},
			}}},
			override: &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{NetworkQOS: &slov1alpha1.NetworkQOSCfg{
				NetworkQOS: slov1alpha1.NetworkQOS{IngressLimit: ptr.To(intstr.FromInt32(40))},
			}}},
			want: &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{NetworkQOS: &slov1alpha1.NetworkQOSCfg{
				NetworkQOS: slov1alpha1.NetworkQOS{IngressLimit: ptr.To(intstr.FromInt32(40)), EgressLimit: ptr.To(intstr.FromInt32(90))},
			}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Merge(tc.base, tc.override)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Merge() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestMergeSystemStrategy(t *testing.T) {
	tests := map[string]struct {
		base, override, want *slov1alpha1.SystemStrategy
	}{
		"maps merge by key": {
			base:     &slov1alpha1.SystemStrategy{SchedFeatures: map[string]bool{"A": true, "B": true}},
			override: &slov1alpha1.SystemStrategy{SchedFeatures: map[string]bool{"B": false, "C": true}},
			want:     &slov1alpha1.SystemStrategy{SchedFeatures: map[string]bool{"A": true, "B": false, "C": true}},
		},
		"a zero quantity does not reset a set one": {
			base:     &slov1alpha1.SystemStrategy{TotalNetworkBandwidth: resource.MustParse("10G")},
			override: &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100)},
			want:     &slov1alpha1.SystemStrategy{TotalNetworkBandwidth: resource.MustParse("10G"), MinFreeKbytesFactor: ptr.To[int64](100)},
		},
		"a set quantity replaces": {
			base:     &slov1alpha1.SystemStrategy{TotalNetworkBandwidth: resource.MustParse("10G")},
			override: &slov1alpha1.SystemStrategy{TotalNetworkBandwidth: resource.MustParse("25G")},
			want:     &slov1alpha1.SystemStrategy{TotalNetworkBandwidth: resource.MustParse("25G")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Merge(tc.base, tc.override)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Merge() (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestMergeSharesNoMemory checks that changing a merge result leaves its inputs alone, and the other way round.
func TestMergeSharesNoMemory(t *testing.T) {
	base := &slov1alpha1.SystemStrategy{SchedFeatures: map[string]bool{"A": true}}
	override := &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](1), SchedFeatures: map[string]bool{"B": true}}
	got := Merge(base, override)
	*got.MinFreeKbytesFactor = 2
	got.SchedFeatures["C"] = true
	if diff := cmp.Diff(&slov1alpha1.SystemStrategy{SchedFeatures: map[string]bool{"A": true}}, base); diff != "" {
		t.Errorf("base changed (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(&slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](1), SchedFeatures: map[string]bool{"B": true}}, override); diff != "" {
		t.Errorf("override changed (-want,+got):\n%s", diff)
	}
}
