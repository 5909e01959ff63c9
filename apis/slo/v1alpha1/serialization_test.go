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

package v1alpha1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

func TestResourceMapJSON(t *testing.T) {
	tests := map[string]struct {
		in       ResourceMap
		wantJSON string
	}{
		"empty": {
			in:       ResourceMap{},
			wantJSON: `{}`,
		},
		"resources under the resources key": {
			in: ResourceMap{ResourceList: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("138m"),
				corev1.ResourceMemory: resource.MustParse("1815637738"),
			}},
			wantJSON: `{"resources":{"cpu":"138m","memory":"1815637738"}}`,
		},
		"devices": {
			in:       ResourceMap{Devices: []schedulingv1alpha1.DeviceInfo{{Type: schedulingv1alpha1.GPU, UUID: "GPU-1", Health: true}}},
			wantJSON: `{"devices":[{"type":"gpu","id":"GPU-1","health":true}]}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := json.Marshal(tc.in)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if diff := cmp.Diff(tc.wantJSON, string(got)); diff != "" {
				t.Errorf("Marshal (-want,+got):\n%s", diff)
			}
			var back ResourceMap
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !back.ResourceList.Cpu().Equal(*tc.in.ResourceList.Cpu()) {
				t.Errorf("round trip cpu = %v, want %v", back.ResourceList.Cpu(), tc.in.ResourceList.Cpu())
			}
		})
	}
}

func TestExtensionsMapJSON(t *testing.T) {
	tests := map[string]struct {
		json    string
		wantObj map[string]interface{}
		wantOut string
	}{
		"object": {
			json:    `{"extensions":{"a":{"b":1},"c":"d"}}`,
			wantObj: map[string]interface{}{"a": map[string]interface{}{"b": float64(1)}, "c": "d"},
			wantOut: `{"podUsage":{},"extensions":{"a":{"b":1},"c":"d"}}`,
		},
		"absent": {
			json:    `{}`,
			wantOut: `{"podUsage":{}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var pm PodMetricInfo
			if err := json.Unmarshal([]byte(tc.json), &pm); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			var gotObj map[string]interface{}
			if pm.Extensions != nil {
				gotObj = pm.Extensions.Object
			}
			if diff := cmp.Diff(tc.wantObj, gotObj); diff != "" {
				t.Errorf("Object (-want,+got):\n%s", diff)
			}
			out, err := json.Marshal(pm)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if diff := cmp.Diff(tc.wantOut, string(out)); diff != "" {
				t.Errorf("Marshal (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestExtensionsMapDeepCopy(t *testing.T) {
	type custom struct {
		N int `json:"n"`
	}
	in := &ExtensionsMap{Object: map[string]interface{}{
		"nested": map[string]interface{}{"list": []interface{}{"x", int64(1)}},
		"custom": custom{N: 3},
		"int":    7,
	}}
	out := in.DeepCopy()
	want := map[string]interface{}{
		"nested": map[string]interface{}{"list": []interface{}{"x", int64(1)}},
		"custom": map[string]interface{}{"n": float64(3)},
		"int":    int64(7),
	}
	if diff := cmp.Diff(want, out.Object); diff != "" {
		t.Errorf("DeepCopy (-want,+got):\n%s", diff)
	}
	out.Object["nested"].(map[string]interface{})["list"].([]interface{})[0] = "changed"
	if got := in.Object["nested"].(map[string]interface{})["list"].([]interface{})[0]; got != "x" {
		t.Errorf("original changed through the copy: %v", got)
	}
	if (*ExtensionsMap)(nil).DeepCopy() != nil {
		t.Error("DeepCopy of nil is not nil")
	}
}

// TestSamplesDecodeStrictly checks that the shipped samples, written as Koordinator users write them, decode
// into the Go types without unknown fields, i.e. that the JSON names match.
func TestSamplesDecodeStrictly(t *testing.T) {
	tests := map[string]struct {
		file  string
		into  interface{}
		check func(t *testing.T, obj interface{})
	}{
		"NodeMetric": {
			file: "slo_v1alpha1_nodemetric.yaml",
			into: &NodeMetric{},
			check: func(t *testing.T, obj interface{}) {
				nm := obj.(*NodeMetric)
				p := nm.Spec.CollectPolicy
				if p == nil || p.NodeMemoryCollectPolicy == nil || *p.NodeMemoryCollectPolicy != UsageWithoutPageCache {
					t.Errorf("metricCollectPolicy not decoded: %+v", p)
				}
				if p != nil && (p.NodeAggregatePolicy == nil || len(p.NodeAggregatePolicy.Durations) != 3) {
					t.Errorf("nodeAggregatePolicy not decoded: %+v", p.NodeAggregatePolicy)
				}
			},
		},
		"NodeSLO": {
			file: "slo_v1alpha1_nodeslo.yaml",
			into: &NodeSLO{},
			check: func(t *testing.T, obj interface{}) {
				s := obj.(*NodeSLO).Spec
				if s.ResourceQOSStrategy == nil || s.ResourceQOSStrategy.BEClass == nil ||
					s.ResourceQOSStrategy.BEClass.ResctrlQOS == nil ||
					s.ResourceQOSStrategy.BEClass.ResctrlQOS.CATRangeEndPercent == nil ||
					*s.ResourceQOSStrategy.BEClass.ResctrlQOS.CATRangeEndPercent != 30 {
					t.Errorf("beClass.resctrlQOS not decoded: %+v", s.ResourceQOSStrategy)
				}
				if s.CPUBurstStrategy == nil || s.CPUBurstStrategy.Policy != CPUBurstAuto {
					t.Errorf("cpuBurstStrategy not decoded: %+v", s.CPUBurstStrategy)
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "samples", tc.file))
			if err != nil {
				t.Fatalf("reading sample: %v", err)
			}
			if err := yaml.UnmarshalStrict(data, tc.into); err != nil {
				t.Fatalf("UnmarshalStrict: %v", err)
			}
			tc.check(t, tc.into)
		})
	}
}
