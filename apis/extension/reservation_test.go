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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestGetReservationAffinity(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    *ReservationAffinity
		wantErr string
	}{
		"missing": {value: nil, want: nil},
		"empty":   {value: new(""), want: nil},
		"name":    {value: new(`{"name":"r1"}`), want: &ReservationAffinity{Name: "r1"}},
		"selector": {
			value: new(`{"reservationSelector":{"app":"demo"}}`),
			want:  &ReservationAffinity{ReservationSelector: map[string]string{"app": "demo"}},
		},
		"required terms and tolerations": {
			value: new(`{"requiredDuringSchedulingIgnoredDuringExecution":{"reservationSelectorTerms":[{"matchExpressions":[{"key":"app","operator":"In","values":["a","b"]}]}]},` +
				`"tolerations":[{"key":"k","operator":"Equal","value":"v","effect":"NoSchedule","tolerationSeconds":30}]}`),
			want: &ReservationAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &ReservationAffinitySelector{
					ReservationSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "app", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}},
					}},
				},
				Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](30)}},
			},
		},
		"empty object": {value: new(`{}`), want: &ReservationAffinity{}},
		"unknown operator": {
			value:   new(`{"requiredDuringSchedulingIgnoredDuringExecution":{"reservationSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"Like"}]}]}}`),
			wantErr: `annotation "scheduling.koordinator.sh/reservation-affinity": requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms[0].matchFields[0].operator: unsupported value "Like"`,
		},
		"bad toleration": {
			value: new(`{"tolerations":[{"operator":"Contains","effect":"Evict"}]}`),
			wantErr: "annotation \"scheduling.koordinator.sh/reservation-affinity\": tolerations[0].operator: unsupported value \"Contains\"\n" +
				"tolerations[0].effect: unsupported value \"Evict\"",
		},
		"wrong selector type": {
			value:   new(`{"reservationSelector":["app"]}`),
			wantErr: `annotation "scheduling.koordinator.sh/reservation-affinity": json: cannot unmarshal array into Go struct field ReservationAffinity.reservationSelector of type map[string]string`,
		},
		"malformed": {
			value:   new(`{name:"r1"}`),
			wantErr: `annotation "scheduling.koordinator.sh/reservation-affinity": invalid character 'n' looking for beginning of object key string`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationReservationAffinity] = *tc.value
			}
			got, err := GetReservationAffinity(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetReservationAffinity() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetReservationAffinity() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetReservationAffinity(t *testing.T) {
	tests := map[string]struct {
		affinity  *ReservationAffinity
		wantValue string
		wantErr   string
	}{
		"name": {affinity: &ReservationAffinity{Name: "r1"}, wantValue: `{"name":"r1"}`},
		"selector and tolerations": {
			affinity: &ReservationAffinity{
				ReservationSelector: map[string]string{"b": "2", "a": "1"},
				Tolerations:         []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			},
			wantValue: `{"reservationSelector":{"a":"1","b":"2"},"tolerations":[{"operator":"Exists"}]}`,
		},
		"invalid": {
			affinity: &ReservationAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &ReservationAffinitySelector{
				ReservationSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "a", Operator: "Has"}}}},
			}},
			wantErr: `annotation "scheduling.koordinator.sh/reservation-affinity": requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms[0].matchExpressions[0].operator: unsupported value "Has"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := podWith(nil, nil)
			err := SetReservationAffinity(pod, tc.affinity)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("SetReservationAffinity() error (-want,+got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.wantValue, pod.Annotations[AnnotationReservationAffinity]); diff != "" {
				t.Errorf("annotation value (-want,+got):\n%s", diff)
			}
			got, err := GetReservationAffinity(pod.Annotations)
			if err != nil {
				t.Fatalf("GetReservationAffinity() error: %v", err)
			}
			if diff := cmp.Diff(tc.affinity, got); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
	t.Run("nil removes", func(t *testing.T) {
		pod := annotated(AnnotationReservationAffinity, `{}`)
		if err := SetReservationAffinity(pod, nil); err != nil {
			t.Fatalf("SetReservationAffinity(nil) error: %v", err)
		}
		if diff := cmp.Diff(map[string]string{}, pod.Annotations); diff != "" {
			t.Errorf("annotations (-want,+got):\n%s", diff)
		}
	})
}

func TestIsReservationIgnored(t *testing.T) {
	tests := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"nil pod": {pod: nil, want: false},
		"missing": {pod: podWith(nil, nil), want: false},
		"true":    {pod: podWith(map[string]string{LabelReservationIgnored: "true"}, nil), want: true},
		"false":   {pod: podWith(map[string]string{LabelReservationIgnored: "false"}, nil), want: false},
		"True":    {pod: podWith(map[string]string{LabelReservationIgnored: "True"}, nil), want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, IsReservationIgnored(tc.pod)); diff != "" {
				t.Errorf("IsReservationIgnored() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestReservationAllocated(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    *ReservationAllocated
		wantErr string
	}{
		"missing": {value: nil, want: nil},
		"set":     {value: new(`{"name":"r1","uid":"u1"}`), want: &ReservationAllocated{Name: "r1", UID: "u1"}},
		"no uid": {
			value:   new(`{"name":"r1"}`),
			wantErr: `annotation "scheduling.koordinator.sh/reservation-allocated": uid is empty`,
		},
		"malformed": {
			value:   new(`{"name":`),
			wantErr: `annotation "scheduling.koordinator.sh/reservation-allocated": unexpected end of JSON input`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationReservationAllocated] = *tc.value
			}
			got, err := GetReservationAllocated(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetReservationAllocated() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetReservationAllocated() (-want,+got):\n%s", diff)
			}
			if got == nil {
				return
			}
			// What Set writes, Get reads back.
			pod := podWith(nil, nil)
			if err := SetReservationAllocated(pod, got); err != nil {
				t.Fatalf("SetReservationAllocated(%+v) = %v", got, err)
			}
			back, err := GetReservationAllocated(pod.Annotations)
			if err != nil || !cmp.Equal(got, back) {
				t.Errorf("round trip of %+v = %+v, %v", got, back, err)
			}
		})
	}
	if err := SetReservationAllocated(podWith(nil, nil), &ReservationAllocated{Name: "r1"}); err == nil {
		t.Error("SetReservationAllocated without a UID succeeded")
	}
}
