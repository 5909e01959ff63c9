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
)

func TestGetNodeReservation(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    *NodeReservation
		wantErr string
	}{
		"missing":   {value: nil, want: nil},
		"empty":     {value: new(""), want: nil},
		"resources": {value: new(`{"resources":{"cpu":"5"}}`), want: &NodeReservation{Resources: rl("cpu", "5")}},
		"reserved cpus": {
			value: new(`{"reservedCPUs":"0-3","applyPolicy":"ReservedCPUsOnly"}`),
			want:  &NodeReservation{ReservedCPUs: "0-3", ApplyPolicy: NodeReservationApplyPolicyReservedCPUsOnly},
		},
		"bad cpus and policy": {
			value: new(`{"reservedCPUs":"0-","applyPolicy":"Never"}`),
			wantErr: "annotation \"node.koordinator.sh/reservation\": reservedCPUs: cpuset \"0-\": element \"0-\": missing CPU number\n" +
				"applyPolicy: unsupported value \"Never\"",
		},
		"malformed": {
			value:   new(`{"reservedCPUs":0}`),
			wantErr: `annotation "node.koordinator.sh/reservation": json: cannot unmarshal number into Go struct field NodeReservation.reservedCPUs of type string`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationNodeReservation] = *tc.value
			}
			got, err := GetNodeReservation(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetNodeReservation() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetNodeReservation() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetNodeReservation(t *testing.T) {
	tests := map[string]struct {
		reservation *NodeReservation
		wantValue   string
		wantErr     string
	}{
		"resources": {
			reservation: &NodeReservation{Resources: rl("cpu", "2", "memory", "1Gi"), ApplyPolicy: NodeReservationApplyPolicyDefault},
			wantValue:   `{"resources":{"cpu":"2","memory":"1Gi"},"applyPolicy":"Default"}`,
		},
		"cpus": {reservation: &NodeReservation{ReservedCPUs: "0,2"}, wantValue: `{"reservedCPUs":"0,2"}`},
		"invalid": {
			reservation: &NodeReservation{ReservedCPUs: "two"},
			wantErr:     `annotation "node.koordinator.sh/reservation": reservedCPUs: cpuset "two": element "two": "two" is not a CPU number`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			node := &corev1.Node{}
			err := SetNodeReservation(node, tc.reservation)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("SetNodeReservation() error (-want,+got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.wantValue, node.Annotations[AnnotationNodeReservation]); diff != "" {
				t.Errorf("annotation value (-want,+got):\n%s", diff)
			}
			got, err := GetNodeReservation(node.Annotations)
			if err != nil {
				t.Fatalf("GetNodeReservation() error: %v", err)
			}
			if diff := cmp.Diff(tc.reservation, got); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
	t.Run("nil removes", func(t *testing.T) {
		node := &corev1.Node{}
		node.Annotations = map[string]string{AnnotationNodeReservation: `{}`, "keep": "me"}
		if err := SetNodeReservation(node, nil); err != nil {
			t.Fatalf("SetNodeReservation(nil) error: %v", err)
		}
		if diff := cmp.Diff(map[string]string{"keep": "me"}, node.Annotations); diff != "" {
			t.Errorf("annotations (-want,+got):\n%s", diff)
		}
	})
}
