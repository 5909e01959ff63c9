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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGetDeviceAllocations(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    DeviceAllocations
		wantErr string
	}{
		"missing": {value: nil, want: nil},
		"empty":   {value: new(""), want: nil},
		"null":    {value: new("null"), want: DeviceAllocations{}},
		"gpu and rdma": {
			value: new(`{"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":100,"koordinator.sh/gpu-memory":"16Gi"}}],` +
				`"rdma":[{"minor":1,"id":"0000:09:00.0","resources":{"koordinator.sh/rdma":"100"},"extension":{ "vfs" : [ {"minor":3} ] }}]}`),
			want: DeviceAllocations{
				DeviceTypeGPU: {{Minor: 0, Resources: rl("koordinator.sh/gpu-core", "100", "koordinator.sh/gpu-memory", "16Gi")}},
				DeviceTypeRDMA: {{
					Minor:     1,
					ID:        "0000:09:00.0",
					Resources: rl("koordinator.sh/rdma", "100"),
					Extension: json.RawMessage(`{"vfs":[{"minor":3}]}`),
				}},
			},
		},
		"null extension is dropped": {
			value: new(`{"fpga":[{"minor":2,"resources":null,"extension":null}]}`),
			want:  DeviceAllocations{DeviceTypeFPGA: {{Minor: 2}}},
		},
		"null allocation": {
			value:   new(`{"gpu":[{"minor":0,"resources":{}},null]}`),
			wantErr: `annotation "scheduling.koordinator.sh/device-allocated": gpu[1]: null allocation`,
		},
		"empty device type": {
			value:   new(`{"":[]}`),
			wantErr: `annotation "scheduling.koordinator.sh/device-allocated": empty device type`,
		},
		"wrong minor type": {
			value:   new(`{"gpu":[{"minor":"0"}]}`),
			wantErr: `annotation "scheduling.koordinator.sh/device-allocated": json: cannot unmarshal string into Go struct field DeviceAllocation.minor of type int32`,
		},
		"not a map": {
			value:   new(`[{"minor":0}]`),
			wantErr: `annotation "scheduling.koordinator.sh/device-allocated": json: cannot unmarshal array into Go value of type extension.DeviceAllocations`,
		},
		"malformed": {
			value:   new(`{"gpu":`),
			wantErr: `annotation "scheduling.koordinator.sh/device-allocated": unexpected end of JSON input`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationDeviceAllocated] = *tc.value
			}
			got, err := GetDeviceAllocations(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetDeviceAllocations() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetDeviceAllocations() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetDeviceAllocations(t *testing.T) {
	tests := map[string]struct {
		allocations DeviceAllocations
		wantValue   string
		wantErr     string
	}{
		"gpu": {
			allocations: DeviceAllocations{DeviceTypeGPU: {
				{Minor: 0, Resources: rl("koordinator.sh/gpu-core", "100")},
				{Minor: 1, Resources: rl("koordinator.sh/gpu-core", "50")},
			}},
			wantValue: `{"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"100"}},{"minor":1,"resources":{"koordinator.sh/gpu-core":"50"}}]}`,
		},
		"extension is compacted": {
			allocations: DeviceAllocations{DeviceTypeRDMA: {{Minor: 0, Extension: json.RawMessage(`{ "vfs": [] }`)}}},
			wantValue:   `{"rdma":[{"minor":0,"resources":null,"extension":{"vfs":[]}}]}`,
		},
		"empty": {allocations: DeviceAllocations{}, wantValue: `{}`},
		"invalid extension": {
			allocations: DeviceAllocations{DeviceTypeRDMA: {{Minor: 0, Extension: json.RawMessage(`{`)}}},
			wantErr:     `annotation "scheduling.koordinator.sh/device-allocated": rdma[0].extension: invalid JSON`,
		},
		"nil allocation": {
			allocations: DeviceAllocations{DeviceTypeGPU: {nil}},
			wantErr:     `annotation "scheduling.koordinator.sh/device-allocated": gpu[0]: null allocation`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := podWith(nil, nil)
			err := SetDeviceAllocations(pod, tc.allocations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("SetDeviceAllocations() error (-want,+got):\n%s", diff)
			}
			if err != nil {
				if diff := cmp.Diff(map[string]string(nil), pod.Annotations); diff != "" {
					t.Errorf("annotations after failed set (-want,+got):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tc.wantValue, pod.Annotations[AnnotationDeviceAllocated]); diff != "" {
				t.Errorf("annotation value (-want,+got):\n%s", diff)
			}
			got, err := GetDeviceAllocations(pod.Annotations)
			if err != nil {
				t.Fatalf("GetDeviceAllocations() error: %v", err)
			}
			if diff := cmp.Diff(tc.wantValue, mustMarshal(t, got)); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
	t.Run("nil removes", func(t *testing.T) {
		pod := annotated(AnnotationDeviceAllocated, `{}`)
		if err := SetDeviceAllocations(pod, nil); err != nil {
			t.Fatalf("SetDeviceAllocations(nil) error: %v", err)
		}
		if diff := cmp.Diff(map[string]string{}, pod.Annotations); diff != "" {
			t.Errorf("annotations (-want,+got):\n%s", diff)
		}
	})
}

// mustMarshal returns the JSON form of v.
func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal() error: %v", err)
	}
	return string(data)
}
