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
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/test/fuzzseeds"
)

// equateEmpty treats nil and empty slices and maps as equal: the formatters
// omit empty fields, so an empty list read from JSON comes back as nil.
var equateEmpty = cmpopts.EquateEmpty()

// checkAnnotationRoundTrip checks the properties every JSON annotation parser
// must have, for one input value:
//   - a parse error is an *AnnotationError naming key;
//   - the parser returns the zero value only for an empty annotation;
//   - what it returns can be formatted, and parses back to an equal value;
//   - formatting is stable: formatting the re-parsed value gives the same
//     text.
func checkAnnotationRoundTrip[T any](t *testing.T, key, value string, get func(map[string]string) (T, error), set func(metav1.Object, T) error) {
	t.Helper()
	got, err := get(map[string]string{key: value})
	if err != nil {
		if !errors.Is(err, &AnnotationError{Key: key}) {
			t.Fatalf("parse error %v (%T) is not an *AnnotationError for %s", err, err, key)
		}
		return
	}
	var zero T
	if cmp.Equal(zero, got) {
		if value != "" {
			t.Fatalf("parse of non-empty %q returned the zero value", value)
		}
		return
	}
	obj := &metav1.ObjectMeta{}
	if err := set(obj, got); err != nil {
		t.Fatalf("format of parsed %q: %v", value, err)
	}
	formatted := obj.Annotations[key]
	again, err := get(obj.Annotations)
	if err != nil {
		t.Fatalf("parse of formatted %q (from %q): %v", formatted, value, err)
	}
	if diff := cmp.Diff(got, again, equateEmpty); diff != "" {
		t.Fatalf("round trip of %q via %q (-want,+got):\n%s", value, formatted, diff)
	}
	if err := set(obj, again); err != nil {
		t.Fatalf("format of re-parsed %q: %v", formatted, err)
	}
	if diff := cmp.Diff(formatted, obj.Annotations[key]); diff != "" {
		t.Fatalf("formatting of %q is not stable (-want,+got):\n%s", value, diff)
	}
}

func FuzzParseCPUSet(f *testing.F) {
	for _, s := range fuzzseeds.CPUSet {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUSet(s)
		if err != nil {
			return
		}
		if !slices.IsSorted(cpus) || len(slices.Compact(slices.Clone(cpus))) != len(cpus) {
			t.Fatalf("ParseCPUSet(%q) = %v, not sorted and unique", s, cpus)
		}
		if len(cpus) > 0 && (cpus[0] < 0 || cpus[len(cpus)-1] > MaxCPUID) {
			t.Fatalf("ParseCPUSet(%q) = %v, out of [0, %d]", s, cpus, MaxCPUID)
		}
		formatted := FormatCPUSet(cpus)
		again, err := ParseCPUSet(formatted)
		if err != nil {
			t.Fatalf("ParseCPUSet(FormatCPUSet(%v) = %q): %v", cpus, formatted, err)
		}
		if diff := cmp.Diff(cpus, again); diff != "" {
			t.Fatalf("round trip of %q via %q (-want,+got):\n%s", s, formatted, diff)
		}
		if diff := cmp.Diff(formatted, FormatCPUSet(again)); diff != "" {
			t.Fatalf("FormatCPUSet is not stable for %q (-want,+got):\n%s", s, diff)
		}
	})
}

func FuzzGetPodSubPriority(f *testing.F) {
	for _, s := range fuzzseeds.PodSubPriority {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := GetPodSubPriority(map[string]string{LabelPodPriority: s})
		if err != nil {
			if !errors.Is(err, &LabelError{Key: LabelPodPriority}) {
				t.Fatalf("error %v is not a *LabelError for %s", err, LabelPodPriority)
			}
			return
		}
		formatted := strconv.FormatInt(int64(got), 10)
		again, err := GetPodSubPriority(map[string]string{LabelPodPriority: formatted})
		if err != nil {
			t.Fatalf("parse of formatted %q: %v", formatted, err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("round trip of %q (-want,+got):\n%s", s, diff)
		}
	})
}

func FuzzResourceSpec(f *testing.F) {
	for _, s := range fuzzseeds.ResourceSpec {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationResourceSpec, s, GetResourceSpec, SetResourceSpec)
	})
}

func FuzzResourceStatus(f *testing.F) {
	for _, s := range fuzzseeds.ResourceStatus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationResourceStatus, s, GetResourceStatus, SetResourceStatus)
	})
}

func FuzzDeviceAllocations(f *testing.F) {
	for _, s := range fuzzseeds.DeviceAllocations {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationDeviceAllocated, s, GetDeviceAllocations, SetDeviceAllocations)
	})
}

func FuzzReservationAffinity(f *testing.F) {
	for _, s := range fuzzseeds.ReservationAffinity {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationReservationAffinity, s, GetReservationAffinity, SetReservationAffinity)
	})
}

func FuzzReservationAllocated(f *testing.F) {
	for _, s := range fuzzseeds.ReservationAllocated {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationReservationAllocated, s, GetReservationAllocated, SetReservationAllocated)
	})
}

func FuzzCustomUsageThresholds(f *testing.F) {
	for _, s := range fuzzseeds.CustomUsageThresholds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationNodeUsageThresholds, s, GetCustomUsageThresholds, SetCustomUsageThresholds)
	})
}

func FuzzNodeReservation(f *testing.F) {
	for _, s := range fuzzseeds.NodeReservation {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationNodeReservation, s, GetNodeReservation, SetNodeReservation)
	})
}

func FuzzExtendedResourceSpec(f *testing.F) {
	for _, s := range fuzzseeds.ExtendedResourceSpec {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationExtendedResourceSpec, s, GetExtendedResourceSpec, SetExtendedResourceSpec)
	})
}

// checkGangRoundTrip checks a gang annotation parser on one input: a parse
// error is an *AnnotationError naming key, and a parsed value formats to text
// that parses back to the same value.
func checkGangRoundTrip[T comparable](t *testing.T, key, value string, get func(metav1.Object) (T, error), format func(T) string) {
	t.Helper()
	got, err := get(annotated(key, value))
	if err != nil {
		if !errors.Is(err, &AnnotationError{Key: key}) {
			t.Fatalf("parse error %v (%T) is not an *AnnotationError for %s", err, err, key)
		}
		return
	}
	var zero T
	if got == zero {
		if value != "" {
			t.Fatalf("parse of non-empty %q returned the zero value", value)
		}
		return
	}
	formatted := format(got)
	again, err := get(annotated(key, formatted))
	if err != nil {
		t.Fatalf("parse of formatted %q (from %q): %v", formatted, value, err)
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Fatalf("round trip of %q via %q (-want,+got):\n%s", value, formatted, diff)
	}
}

func FuzzGangMinNum(f *testing.F) {
	for _, s := range fuzzseeds.GangMinNum {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkGangRoundTrip(t, AnnotationGangMinNum, s, GetGangMinNum, strconv.Itoa)
	})
}

func FuzzGangTotalNumber(f *testing.F) {
	for _, s := range fuzzseeds.GangTotalNumber {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkGangRoundTrip(t, AnnotationGangTotalNum, s, GetGangTotalNumber, strconv.Itoa)
	})
}

func FuzzGangWaitingTime(f *testing.F) {
	for _, s := range fuzzseeds.GangWaitingTime {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkGangRoundTrip(t, AnnotationGangWaitTime, s, GetGangWaitingTime, time.Duration.String)
	})
}

func FuzzGangMode(f *testing.F) {
	for _, s := range fuzzseeds.GangMode {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mode, err := GetGangMode(annotated(AnnotationGangMode, s))
		if err != nil {
			if !errors.Is(err, &AnnotationError{Key: AnnotationGangMode}) {
				t.Fatalf("error %v is not an *AnnotationError for %s", err, AnnotationGangMode)
			}
			return
		}
		if s != "" && string(mode) != s {
			t.Fatalf("GetGangMode(%q) = %q", s, mode)
		}
		checkGangRoundTrip(t, AnnotationGangMode, s, GetGangMode, func(m GangMode) string { return string(m) })
	})
}

func FuzzGangMatchPolicy(f *testing.F) {
	for _, s := range fuzzseeds.GangMatchPolicy {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkGangRoundTrip(t, AnnotationGangMatchPolicy, s, GetGangMatchPolicy, func(p GangMatchPolicy) string { return string(p) })
	})
}

func FuzzGangGroups(f *testing.F) {
	for _, s := range fuzzseeds.GangGroups {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		get := func(annotations map[string]string) ([]string, error) {
			return GetGangGroups(&metav1.ObjectMeta{Annotations: annotations})
		}
		checkAnnotationRoundTrip(t, AnnotationGangGroups, s, get, SetGangGroups)
	})
}

func FuzzQuotaResourceList(f *testing.F) {
	for _, s := range fuzzseeds.QuotaResourceList {
		f.Add(s)
	}
	getters := map[string]func(metav1.Object) (corev1.ResourceList, error){
		AnnotationSharedWeight:          GetSharedWeight,
		AnnotationRuntime:               GetRuntime,
		AnnotationRequest:               GetRequest,
		AnnotationChildRequest:          GetChildRequest,
		AnnotationGuaranteed:            GetGuaranteed,
		AnnotationAllocated:             GetAllocated,
		AnnotationNonPreemptibleRequest: GetNonPreemptibleRequest,
		AnnotationNonPreemptibleUsed:    GetNonPreemptibleUsed,
		AnnotationTotalResource:         GetTotalResource,
		AnnotationUnschedulableResource: GetUnschedulableResource,
	}
	f.Fuzz(func(t *testing.T, s string) {
		for key, get := range getters {
			getMap := func(annotations map[string]string) (corev1.ResourceList, error) {
				return get(&metav1.ObjectMeta{Annotations: annotations})
			}
			set := func(obj metav1.Object, list corev1.ResourceList) error {
				return SetQuotaResourceList(obj, key, list)
			}
			checkAnnotationRoundTrip(t, key, s, getMap, set)
		}
	})
}

func FuzzAnnotationQuotaNamespaces(f *testing.F) {
	for _, s := range fuzzseeds.QuotaNamespaces {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		get := func(annotations map[string]string) ([]string, error) {
			return GetAnnotationQuotaNamespaces(&metav1.ObjectMeta{Annotations: annotations})
		}
		checkAnnotationRoundTrip(t, AnnotationQuotaNamespaces, s, get, SetAnnotationQuotaNamespaces)
	})
}
