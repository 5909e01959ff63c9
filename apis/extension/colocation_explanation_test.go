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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// qp parses a quantity and returns a pointer to it.
func qp(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

func TestGetColocationExplanation(t *testing.T) {
	updated := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tests := map[string]struct {
		value   *string
		want    *ColocationExplanation
		wantErr string
	}{
		"missing": {value: nil, want: nil},
		"empty":   {value: new(""), want: nil},
		"full": {
			value: new(`{"updateTime":"2026-01-02T03:04:05Z","policy":{"cpu":"maxUsageRequest","memory":"request"},` +
				`"cpu":{"capacity":"100","reclaimPercent":65,"safetyMargin":"35","batch":"25","mid":"1500m"},` +
				`"memory":{"capacity":"120G","thresholdCap":"60G","batch":"33G"},"warnings":["w"]}`),
			want: &ColocationExplanation{
				UpdateTime: updated,
				Policy:     ColocationPolicy{CPU: "maxUsageRequest", Memory: "request"},
				CPU: ColocationResourceExplanation{
					Capacity: qp("100"), ReclaimPercent: new(int64(65)), SafetyMargin: qp("35"), Batch: qp("25"), Mid: qp("1500m"),
				},
				Memory:   ColocationResourceExplanation{Capacity: qp("120G"), ThresholdCap: qp("60G"), Batch: qp("33G")},
				Warnings: []string{"w"},
			},
		},
		"degraded": {
			value: new(`{"updateTime":"2026-01-02T03:04:05Z","policy":{},"cpu":{},"memory":{},"degraded":"NodeMetric is missing"}`),
			want:  &ColocationExplanation{UpdateTime: updated, Degraded: "NodeMetric is missing"},
		},
		"fractional update time is truncated": {
			value: new(`{"updateTime":"2026-01-02T03:04:05.75Z"}`),
			want:  &ColocationExplanation{UpdateTime: updated},
		},
		"negative margin is allowed": {
			value: new(`{"cpu":{"reclaimPercent":150,"safetyMargin":"-50"}}`),
			want:  &ColocationExplanation{CPU: ColocationResourceExplanation{ReclaimPercent: new(int64(150)), SafetyMargin: qp("-50")}},
		},
		"unknown policies": {
			value: new(`{"policy":{"cpu":"request","memory":"peak","cpuConfigured":"x"}}`),
			wantErr: `annotation "koord.dev/colocation-resources": policy.cpu: unsupported value "request"` + "\n" +
				`policy.memory: unsupported value "peak"` + "\n" + `policy.cpuConfigured: unsupported value "x"`,
		},
		"negative results": {
			value: new(`{"cpu":{"batch":"-1"},"memory":{"capacity":"-1Gi","mid":"-2"}}`),
			wantErr: `annotation "koord.dev/colocation-resources": cpu.batch: -1 is negative` + "\n" +
				`memory.capacity: -1Gi is negative` + "\n" + `memory.mid: -2 is negative`,
		},
		"time beyond year 9999 in UTC": {
			value:   new(`{"updateTime":"9999-12-31T23:59:59-01:00"}`),
			wantErr: `annotation "koord.dev/colocation-resources": updateTime: year 10000 is out of range`,
		},
		"malformed": {
			value:   new(`{"cpu":{"reclaimPercent":"65"}}`),
			wantErr: `annotation "koord.dev/colocation-resources": json: cannot unmarshal string into Go struct field ColocationResourceExplanation.cpu.reclaimPercent of type int64`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationColocationExplanation] = *tc.value
			}
			got, err := GetColocationExplanation(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetColocationExplanation() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetColocationExplanation() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetColocationExplanation(t *testing.T) {
	updated := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tests := map[string]struct {
		explanation *ColocationExplanation
		wantValue   string
		wantErr     string
	}{
		"quantities in canonical form": {
			explanation: &ColocationExplanation{
				UpdateTime: updated,
				Policy:     ColocationPolicy{CPU: "usage", Memory: "usage", CPUConfigured: "request"},
				CPU:        ColocationResourceExplanation{Capacity: resource.NewMilliQuantity(100000, resource.DecimalSI), Batch: resource.NewMilliQuantity(25500, resource.DecimalSI)},
				Memory:     ColocationResourceExplanation{Batch: resource.NewQuantity(33e9, resource.DecimalSI)},
			},
			wantValue: `{"updateTime":"2026-01-02T03:04:05Z","policy":{"cpu":"usage","memory":"usage","cpuConfigured":"request"},` +
				`"cpu":{"capacity":"100","batch":"25500m"},"memory":{"batch":"33G"}}`,
		},
		"invalid": {
			explanation: &ColocationExplanation{CPU: ColocationResourceExplanation{Mid: qp("-1")}},
			wantErr:     `annotation "koord.dev/colocation-resources": cpu.mid: -1 is negative`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			node := &corev1.Node{}
			err := SetColocationExplanation(node, tc.explanation)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("SetColocationExplanation() error (-want,+got):\n%s", diff)
			}
			if err != nil {
				if _, ok := node.Annotations[AnnotationColocationExplanation]; ok {
					t.Errorf("an invalid explanation was written")
				}
				return
			}
			if diff := cmp.Diff(tc.wantValue, node.Annotations[AnnotationColocationExplanation]); diff != "" {
				t.Errorf("annotation value (-want,+got):\n%s", diff)
			}
			got, err := GetColocationExplanation(node.Annotations)
			if err != nil {
				t.Fatalf("GetColocationExplanation() error: %v", err)
			}
			if diff := cmp.Diff(tc.explanation, got); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
	t.Run("nil removes", func(t *testing.T) {
		node := &corev1.Node{}
		node.Annotations = map[string]string{AnnotationColocationExplanation: `{}`, "keep": "me"}
		if err := SetColocationExplanation(node, nil); err != nil {
			t.Fatalf("SetColocationExplanation(nil) error: %v", err)
		}
		if diff := cmp.Diff(map[string]string{"keep": "me"}, node.Annotations); diff != "" {
			t.Errorf("annotations (-want,+got):\n%s", diff)
		}
	})
}

func FuzzColocationExplanation(f *testing.F) {
	for _, s := range []string{
		"", "{}", "null", `{`, `{"updateTime":"2026-01-02T03:04:05Z","policy":{"cpu":"usage","memory":"request"}}`,
		`{"cpu":{"capacity":"100","reclaimPercent":65,"safetyMargin":"35","batch":"25","mid":"0"}}`,
		`{"memory":{"hpUsed":"1.5Gi","batch":"-1"}}`, `{"updateTime":"2026-01-02T03:04:05.999999999+14:00"}`,
		`{"updateTime":"0001-01-01T00:30:00+01:00"}`, `{"warnings":[],"degraded":"x","midDegraded":"y"}`,
		`{"policy":{"cpuConfigured":"request"}}`, `{"cpu":{"reclaimPercent":1e3}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAnnotationRoundTrip(t, AnnotationColocationExplanation, s, GetColocationExplanation, SetColocationExplanation)
	})
}
