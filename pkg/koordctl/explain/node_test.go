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

package explain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
)

// TestMidTerms: the mid formula is evaluated from the explanation's terms, computed by hand, and checked
// against what koord-manager wrote and what the node offers.
func TestMidTerms(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	tests := map[string]struct {
		e           extension.ColocationResourceExplanation
		milli       bool
		allocatable corev1.ResourceList
		want        ResourceTerms
	}{
		// min(max(min(5, 50), 0) + 53 x 50%, 30) = min(31.5, 30) = 30 cores.
		"default mode, capped": {
			e: extension.ColocationResourceExplanation{ProdReclaimable: q("5"), NodeUnused: q("50"), Unallocated: q("53"),
				MidUnallocatedPercent: ptr.To[int64](50), MidThresholdCap: q("30"), Mid: q("30")},
			milli: true, allocatable: corev1.ResourceList{extension.MidCPU: resource.MustParse("30k")},
			want: ResourceTerms{Computed: "30k", Written: "30k", Allocatable: "30k", Consistent: true},
		},
		// min(max(min(8Gi, 65Gi), 0) + 48Gi x 50%, 120Gi) = 32Gi.
		"default mode, memory": {
			e: extension.ColocationResourceExplanation{ProdReclaimable: q("8Gi"), NodeUnused: q("65Gi"), Unallocated: q("48Gi"),
				MidUnallocatedPercent: ptr.To[int64](50), MidThresholdCap: q("120Gi"), Mid: q("32Gi")},
			allocatable: corev1.ResourceList{extension.MidMemory: resource.MustParse("32Gi")},
			want:        ResourceTerms{Computed: "32Gi", Written: "32Gi", Allocatable: "32Gi", Consistent: true},
		},
		// 1.5 + 3 x 33% = 1.5 + 0.99 = 2.49 cores; koord-manager wrote 2.5: the explanation does not add up.
		"default mode, inconsistent": {
			e: extension.ColocationResourceExplanation{ProdReclaimable: q("1500m"), NodeUnused: q("4"), Unallocated: q("3"),
				MidUnallocatedPercent: ptr.To[int64](33), MidThresholdCap: q("10"), Mid: q("2500m")},
			milli: true, allocatable: corev1.ResourceList{extension.MidCPU: resource.MustParse("2500")},
			want: ResourceTerms{Computed: "2490", Written: "2500", Allocatable: "2500",
				Note: "the terms give 2490, koord-manager wrote 2500: its explanation is inconsistent"},
		},
		// min(100 x 20%, 15) = 15 cores.
		"static mode": {
			e:     extension.ColocationResourceExplanation{Capacity: q("100"), MidStaticPercent: ptr.To[int64](20), MidThresholdCap: q("15"), Mid: q("15")},
			milli: true, allocatable: corev1.ResourceList{extension.MidCPU: resource.MustParse("15k")},
			want: ResourceTerms{Computed: "15k", Written: "15k", Allocatable: "15k", Consistent: true},
		},
		"an explanation without the percent is taken as written": {
			e: extension.ColocationResourceExplanation{ProdReclaimable: q("5"), NodeUnused: q("50"), Unallocated: q("53"),
				MidThresholdCap: q("30"), Mid: q("30")},
			milli: true, allocatable: corev1.ResourceList{extension.MidCPU: resource.MustParse("30k")},
			want: ResourceTerms{Written: "30k", Allocatable: "30k", Consistent: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res := extension.MidCPU
			if !tc.milli {
				res = extension.MidMemory
			}
			got := midTerms(res, &tc.e, tc.milli, tc.allocatable, "", "")
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(ResourceTerms{}, "Resource", "Formula", "Terms")); diff != "" {
				t.Errorf("midTerms (-want,+got):\n%s", diff)
			}
		})
	}
}
