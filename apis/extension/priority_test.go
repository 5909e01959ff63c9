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
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestGetPriorityClassByValue(t *testing.T) {
	tests := map[string]struct {
		priority int32
		want     PriorityClass
	}{
		"zero":               {priority: 0, want: PriorityNone},
		"negative":           {priority: -1, want: PriorityNone},
		"min int32":          {priority: math.MinInt32, want: PriorityNone},
		"max int32":          {priority: math.MaxInt32, want: PriorityNone},
		"below free":         {priority: 2999, want: PriorityNone},
		"free min":           {priority: 3000, want: PriorityFree},
		"free default":       {priority: 3500, want: PriorityFree},
		"free max":           {priority: 3999, want: PriorityFree},
		"between free/batch": {priority: 4500, want: PriorityNone},
		"above free":         {priority: 4000, want: PriorityNone},
		"below batch":        {priority: 4999, want: PriorityNone},
		"batch min":          {priority: 5000, want: PriorityBatch},
		"batch max":          {priority: 5999, want: PriorityBatch},
		"above batch":        {priority: 6000, want: PriorityNone},
		"mid min":            {priority: 7000, want: PriorityMid},
		"mid max":            {priority: 7999, want: PriorityMid},
		"above mid":          {priority: 8000, want: PriorityNone},
		"below prod":         {priority: 8999, want: PriorityNone},
		"prod min":           {priority: 9000, want: PriorityProd},
		"prod default":       {priority: 9500, want: PriorityProd},
		"prod max":           {priority: 9999, want: PriorityProd},
		"above prod":         {priority: 10000, want: PriorityNone},
		"system critical":    {priority: 2000001000, want: PriorityNone},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPriorityClassByValue(tc.priority)); diff != "" {
				t.Errorf("GetPriorityClassByValue(%d) (-want,+got):\n%s", tc.priority, diff)
			}
		})
	}
}

func TestGetPriorityClassByName(t *testing.T) {
	tests := map[string]struct {
		name string
		want PriorityClass
	}{
		"prod":       {name: "koord-prod", want: PriorityProd},
		"mid":        {name: "koord-mid", want: PriorityMid},
		"batch":      {name: "koord-batch", want: PriorityBatch},
		"free":       {name: "koord-free", want: PriorityFree},
		"empty":      {name: "", want: PriorityNone},
		"unknown":    {name: "koord-gold", want: PriorityNone},
		"wrong case": {name: "Koord-Prod", want: PriorityNone},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPriorityClassByName(tc.name)); diff != "" {
				t.Errorf("GetPriorityClassByName(%q) (-want,+got):\n%s", tc.name, diff)
			}
		})
	}
}

func TestPriorityClassRangeAndDefault(t *testing.T) {
	type band struct {
		Lo, Hi int32
		OK     bool
	}
	tests := map[string]struct {
		class       PriorityClass
		wantBand    band
		wantDefault int32
	}{
		"prod":    {class: PriorityProd, wantBand: band{9000, 9999, true}, wantDefault: 9500},
		"mid":     {class: PriorityMid, wantBand: band{7000, 7999, true}, wantDefault: 7500},
		"batch":   {class: PriorityBatch, wantBand: band{5000, 5999, true}, wantDefault: 5500},
		"free":    {class: PriorityFree, wantBand: band{3000, 3999, true}, wantDefault: 3500},
		"none":    {class: PriorityNone, wantBand: band{}, wantDefault: 0},
		"unknown": {class: "koord-gold", wantBand: band{}, wantDefault: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got band
			got.Lo, got.Hi, got.OK = tc.class.Range()
			if diff := cmp.Diff(tc.wantBand, got); diff != "" {
				t.Errorf("Range() (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDefault, tc.class.DefaultValue()); diff != "" {
				t.Errorf("DefaultValue() (-want,+got):\n%s", diff)
			}
			if tc.wantBand.OK {
				if diff := cmp.Diff(tc.class, GetPriorityClassByValue(tc.wantDefault)); diff != "" {
					t.Errorf("GetPriorityClassByValue(DefaultValue()) (-want,+got):\n%s", diff)
				}
			}
		})
	}
}

// podWithPriority returns a pod with the given labels and spec.priority.
func podWithPriority(labels map[string]string, priority *int32) *corev1.Pod {
	pod := podWith(labels, nil)
	pod.Spec.Priority = priority
	return pod
}

func TestGetPodPriorityClassRaw(t *testing.T) {
	tests := map[string]struct {
		pod  *corev1.Pod
		want PriorityClass
	}{
		"nil pod":               {pod: nil, want: PriorityNone},
		"nothing set":           {pod: podWithPriority(nil, nil), want: PriorityNone},
		"priority in prod band": {pod: podWithPriority(nil, ptr.To[int32](9100)), want: PriorityProd},
		"priority in mid band":  {pod: podWithPriority(nil, ptr.To[int32](7000)), want: PriorityMid},
		"priority outside":      {pod: podWithPriority(nil, ptr.To[int32](4500)), want: PriorityNone},
		"zero priority":         {pod: podWithPriority(nil, ptr.To[int32](0)), want: PriorityNone},
		"label wins over priority": {
			pod:  podWithPriority(map[string]string{LabelPodPriorityClass: "koord-batch"}, ptr.To[int32](9100)),
			want: PriorityBatch,
		},
		"label without priority": {
			pod:  podWithPriority(map[string]string{LabelPodPriorityClass: "koord-free"}, nil),
			want: PriorityFree,
		},
		"unknown label falls back to priority": {
			pod:  podWithPriority(map[string]string{LabelPodPriorityClass: "koord-gold"}, ptr.To[int32](5500)),
			want: PriorityBatch,
		},
		"unknown label without priority": {
			pod:  podWithPriority(map[string]string{LabelPodPriorityClass: "koord-gold"}, nil),
			want: PriorityNone,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPodPriorityClassRaw(tc.pod)); diff != "" {
				t.Errorf("GetPodPriorityClassRaw() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetPodPriorityClassWithDefault(t *testing.T) {
	full := rl("cpu", "1", "memory", "1Gi")
	tests := map[string]struct {
		pod  *corev1.Pod
		want PriorityClass
	}{
		"nil pod": {pod: nil, want: PriorityNone},
		"raw class wins": {
			pod:  podWithPriority(map[string]string{LabelPodQoS: "BE"}, ptr.To[int32](9000)),
			want: PriorityProd,
		},
		"BE label gives batch":     {pod: podWithPriority(map[string]string{LabelPodQoS: "BE"}, nil), want: PriorityBatch},
		"LSE label gives prod":     {pod: podWithPriority(map[string]string{LabelPodQoS: "LSE"}, nil), want: PriorityProd},
		"LSR label gives prod":     {pod: podWithPriority(map[string]string{LabelPodQoS: "LSR"}, nil), want: PriorityProd},
		"LS label gives prod":      {pod: podWithPriority(map[string]string{LabelPodQoS: "LS"}, nil), want: PriorityProd},
		"SYSTEM label gives prod":  {pod: podWithPriority(map[string]string{LabelPodQoS: "SYSTEM"}, nil), want: PriorityProd},
		"best effort pod is batch": {pod: podWithContainers(nil, containerWith(nil, nil)), want: PriorityBatch},
		"guaranteed pod is prod":   {pod: podWithContainers(nil, containerWith(full, full)), want: PriorityProd},
		"priority outside every band falls back to QoS": {
			pod:  podWithPriority(map[string]string{LabelPodQoS: "BE"}, ptr.To[int32](10000)),
			want: PriorityBatch,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPodPriorityClassWithDefault(tc.pod)); diff != "" {
				t.Errorf("GetPodPriorityClassWithDefault() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetPodPriorityClassWithQoS(t *testing.T) {
	tests := map[string]struct {
		qos  QoSClass
		want PriorityClass
	}{
		"SYSTEM":  {qos: QoSSystem, want: PriorityProd},
		"LSE":     {qos: QoSLSE, want: PriorityProd},
		"LSR":     {qos: QoSLSR, want: PriorityProd},
		"LS":      {qos: QoSLS, want: PriorityProd},
		"BE":      {qos: QoSBE, want: PriorityBatch},
		"none":    {qos: QoSNone, want: PriorityNone},
		"unknown": {qos: "GOLD", want: PriorityNone},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPodPriorityClassWithQoS(tc.qos)); diff != "" {
				t.Errorf("GetPodPriorityClassWithQoS(%q) (-want,+got):\n%s", tc.qos, diff)
			}
		})
	}
}

func TestGetPodSubPriority(t *testing.T) {
	tests := map[string]struct {
		labels  map[string]string
		want    int32
		wantErr string
		wantIs  error
	}{
		"nil labels":    {labels: nil, want: 0},
		"missing label": {labels: map[string]string{"a": "b"}, want: 0},
		"empty label":   {labels: map[string]string{LabelPodPriority: ""}, want: 0},
		"positive":      {labels: map[string]string{LabelPodPriority: "1234"}, want: 1234},
		"negative":      {labels: map[string]string{LabelPodPriority: "-5"}, want: -5},
		"max int32":     {labels: map[string]string{LabelPodPriority: "2147483647"}, want: math.MaxInt32},
		"not a number": {
			labels:  map[string]string{LabelPodPriority: "high"},
			wantErr: `label "koordinator.sh/priority": "high" is not an int32: invalid syntax`,
			wantIs:  strconv.ErrSyntax,
		},
		"out of range": {
			labels:  map[string]string{LabelPodPriority: "2147483648"},
			wantErr: `label "koordinator.sh/priority": "2147483648" is not an int32: value out of range`,
			wantIs:  strconv.ErrRange,
		},
		"hexadecimal": {
			labels:  map[string]string{LabelPodPriority: "0x10"},
			wantErr: `label "koordinator.sh/priority": "0x10" is not an int32: invalid syntax`,
			wantIs:  strconv.ErrSyntax,
		},
		"fraction": {
			labels:  map[string]string{LabelPodPriority: "1.5"},
			wantErr: `label "koordinator.sh/priority": "1.5" is not an int32: invalid syntax`,
			wantIs:  strconv.ErrSyntax,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetPodSubPriority(tc.labels)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetPodSubPriority() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetPodSubPriority() (-want,+got):\n%s", diff)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(err, %v) = false, want true", tc.wantIs)
			}
			if err != nil {
				le, ok := errors.AsType[*LabelError](err)
				if !ok {
					t.Fatalf("error %T is not a *LabelError", err)
				}
				if diff := cmp.Diff(tc.labels[LabelPodPriority], le.Value); diff != "" {
					t.Errorf("LabelError.Value (-want,+got):\n%s", diff)
				}
			}
		})
	}
}
