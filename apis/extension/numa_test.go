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
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGetResourceSpec(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    *ResourceSpec
		wantErr string
	}{
		"missing": {value: nil, want: nil},
		"empty":   {value: new(""), want: nil},
		"all fields": {
			value: new(`{"requiredCPUBindPolicy":"FullPCPUs","preferredCPUBindPolicy":"SpreadByPCPUs","preferredCPUExclusivePolicy":"PCPULevel"}`),
			want: &ResourceSpec{
				RequiredCPUBindPolicy:       CPUBindPolicyFullPCPUs,
				PreferredCPUBindPolicy:      CPUBindPolicySpreadByPCPUs,
				PreferredCPUExclusivePolicy: CPUExclusivePolicyPCPULevel,
			},
		},
		"empty object":       {value: new(`{}`), want: &ResourceSpec{}},
		"null":               {value: new(`null`), want: &ResourceSpec{}},
		"unknown field kept": {value: new(`{"preferredCPUBindPolicy":"Default","future":1}`), want: &ResourceSpec{PreferredCPUBindPolicy: CPUBindPolicyDefault}},
		"constrained burst":  {value: new(`{"preferredCPUBindPolicy":"ConstrainedBurst"}`), want: &ResourceSpec{PreferredCPUBindPolicy: CPUBindPolicyConstrainedBurst}},
		"numa exclusive":     {value: new(`{"preferredCPUExclusivePolicy":"NUMANodeLevel"}`), want: &ResourceSpec{PreferredCPUExclusivePolicy: CPUExclusivePolicyNUMANodeLevel}},
		"malformed": {
			value:   new(`x`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-spec": invalid character 'x' looking for beginning of value`,
		},
		"truncated": {
			value:   new(`{"preferredCPUBindPolicy":`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-spec": unexpected end of JSON input`,
		},
		"wrong type": {
			value:   new(`{"preferredCPUBindPolicy":1}`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-spec": json: cannot unmarshal number into Go struct field ResourceSpec.preferredCPUBindPolicy of type extension.CPUBindPolicy`,
		},
		"list": {
			value:   new(`[]`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-spec": json: cannot unmarshal array into Go value of type extension.ResourceSpec`,
		},
		"unknown policies": {
			value: new(`{"requiredCPUBindPolicy":"Pack","preferredCPUBindPolicy":"fullpcpus","preferredCPUExclusivePolicy":"Socket"}`),
			wantErr: "annotation \"scheduling.koordinator.sh/resource-spec\": requiredCPUBindPolicy: unsupported value \"Pack\"\n" +
				"preferredCPUBindPolicy: unsupported value \"fullpcpus\"\n" +
				"preferredCPUExclusivePolicy: unsupported value \"Socket\"",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{"other": "x"}
			if tc.value != nil {
				annotations[AnnotationResourceSpec] = *tc.value
			}
			got, err := GetResourceSpec(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetResourceSpec() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetResourceSpec() (-want,+got):\n%s", diff)
			}
			if err != nil && !errors.Is(err, &AnnotationError{Key: AnnotationResourceSpec}) {
				t.Errorf("error %v is not an AnnotationError for %s", err, AnnotationResourceSpec)
			}
		})
	}
}

func TestGetNUMATopologySpec(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    *NUMATopologySpec
		wantErr string
	}{
		"missing": {value: nil, want: nil},
		"policy and exclusive": {
			value: new(`{"numaTopologyPolicy":"SingleNUMANode","singleNUMANodeExclusive":"Preferred"}`),
			want:  &NUMATopologySpec{NUMATopologyPolicy: NUMATopologyPolicySingleNUMANode, SingleNUMANodeExclusive: NUMATopologyExclusivePreferred},
		},
		"policy alone": {value: new(`{"numaTopologyPolicy":"Restricted"}`), want: &NUMATopologySpec{NUMATopologyPolicy: NUMATopologyPolicyRestricted}},
		"unknown policy": {
			value:   new(`{"numaTopologyPolicy":"Single"}`),
			wantErr: `annotation "scheduling.koordinator.sh/numa-topology-spec": numaTopologyPolicy: unsupported value "Single" (BestEffort, Restricted or SingleNUMANode)`,
		},
		"unknown exclusive": {
			value:   new(`{"numaTopologyPolicy":"SingleNUMANode","singleNUMANodeExclusive":"required"}`),
			wantErr: `annotation "scheduling.koordinator.sh/numa-topology-spec": singleNUMANodeExclusive: unsupported value "required" (Required or Preferred)`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationNUMATopologySpec] = *tc.value
			}
			got, err := GetNUMATopologySpec(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetNUMATopologySpec() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetNUMATopologySpec() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetResourceSpec(t *testing.T) {
	tests := map[string]struct {
		spec            *ResourceSpec
		wantAnnotations map[string]string
		wantErr         string
	}{
		"nil removes": {spec: nil, wantAnnotations: map[string]string{"other": "x"}},
		"empty":       {spec: &ResourceSpec{}, wantAnnotations: map[string]string{"other": "x", AnnotationResourceSpec: `{}`}},
		"omits empty fields": {
			spec:            &ResourceSpec{PreferredCPUBindPolicy: CPUBindPolicyFullPCPUs},
			wantAnnotations: map[string]string{"other": "x", AnnotationResourceSpec: `{"preferredCPUBindPolicy":"FullPCPUs"}`},
		},
		"all fields": {
			spec: &ResourceSpec{
				RequiredCPUBindPolicy:       CPUBindPolicySpreadByPCPUs,
				PreferredCPUBindPolicy:      CPUBindPolicyDefault,
				PreferredCPUExclusivePolicy: CPUExclusivePolicyNone,
			},
			wantAnnotations: map[string]string{"other": "x", AnnotationResourceSpec: `{"requiredCPUBindPolicy":"SpreadByPCPUs","preferredCPUBindPolicy":"Default","preferredCPUExclusivePolicy":"None"}`},
		},
		"invalid is not written": {
			spec:            &ResourceSpec{RequiredCPUBindPolicy: "Pack"},
			wantAnnotations: map[string]string{"other": "x", AnnotationResourceSpec: "old"},
			wantErr:         `annotation "scheduling.koordinator.sh/resource-spec": requiredCPUBindPolicy: unsupported value "Pack"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := podWith(nil, map[string]string{"other": "x", AnnotationResourceSpec: "old"})
			err := SetResourceSpec(pod, tc.spec)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("SetResourceSpec() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAnnotations, pod.Annotations); diff != "" {
				t.Errorf("annotations (-want,+got):\n%s", diff)
			}
			if err != nil || tc.spec == nil {
				return
			}
			got, err := GetResourceSpec(pod.Annotations)
			if err != nil {
				t.Fatalf("GetResourceSpec() error: %v", err)
			}
			if diff := cmp.Diff(tc.spec, got); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetResourceSpecDoesNotModifySharedMap(t *testing.T) {
	shared := map[string]string{"a": "b"}
	pod := podWith(nil, shared)
	if err := SetResourceSpec(pod, &ResourceSpec{}); err != nil {
		t.Fatalf("SetResourceSpec() error: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"a": "b"}, shared); diff != "" {
		t.Errorf("shared map (-want,+got):\n%s", diff)
	}
}

func TestGetResourceStatus(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    *ResourceStatus
		wantErr string
	}{
		"missing": {value: nil, want: nil},
		"empty":   {value: new(""), want: nil},
		"cpuset":  {value: new(`{"cpuset":"0-3,8"}`), want: &ResourceStatus{CPUSet: "0-3,8"}},
		"numa nodes": {
			value: new(`{"numaNodeResources":[{"node":0,"resources":{"cpu":"4","memory":"8Gi"}},{"node":1}]}`),
			want: &ResourceStatus{NUMANodeResources: []NUMANodeResource{
				{Node: 0, Resources: rl("cpu", "4", "memory", "8Gi")},
				{Node: 1},
			}},
		},
		"bad cpuset": {
			value:   new(`{"cpuset":"3-1"}`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-status": cpuset "3-1": element "3-1": range end is before its start`,
		},
		"negative numa node": {
			value:   new(`{"numaNodeResources":[{"node":-1}]}`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-status": numaNodeResources[0].node: -1 is negative`,
		},
		"cpuset of wrong type": {
			value:   new(`{"cpuset":[0,1]}`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-status": json: cannot unmarshal array into Go struct field ResourceStatus.cpuset of type string`,
		},
		"bad quantity": {
			value:   new(`{"numaNodeResources":[{"node":0,"resources":{"cpu":"four"}}]}`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-status": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		},
		"malformed": {
			value:   new(`{"cpuset":"0-3"`),
			wantErr: `annotation "scheduling.koordinator.sh/resource-status": unexpected end of JSON input`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationResourceStatus] = *tc.value
			}
			got, err := GetResourceStatus(annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetResourceStatus() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetResourceStatus() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetResourceStatus(t *testing.T) {
	tests := map[string]struct {
		status    *ResourceStatus
		wantValue string
		wantErr   string
	}{
		"cpuset": {status: &ResourceStatus{CPUSet: "0-3"}, wantValue: `{"cpuset":"0-3"}`},
		"numa": {
			status:    &ResourceStatus{NUMANodeResources: []NUMANodeResource{{Node: 0, Resources: rl("cpu", "2")}, {Node: 1}}},
			wantValue: `{"numaNodeResources":[{"node":0,"resources":{"cpu":"2"}},{"node":1}]}`,
		},
		"empty": {status: &ResourceStatus{}, wantValue: `{}`},
		"invalid cpuset": {
			status:  &ResourceStatus{CPUSet: "x"},
			wantErr: `annotation "scheduling.koordinator.sh/resource-status": cpuset "x": element "x": "x" is not a CPU number`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := podWith(nil, nil)
			err := SetResourceStatus(pod, tc.status)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("SetResourceStatus() error (-want,+got):\n%s", diff)
			}
			if err != nil {
				if diff := cmp.Diff(map[string]string(nil), pod.Annotations); diff != "" {
					t.Errorf("annotations after failed set (-want,+got):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tc.wantValue, pod.Annotations[AnnotationResourceStatus]); diff != "" {
				t.Errorf("annotation value (-want,+got):\n%s", diff)
			}
			got, err := GetResourceStatus(pod.Annotations)
			if err != nil {
				t.Fatalf("GetResourceStatus() error: %v", err)
			}
			if diff := cmp.Diff(tc.status, got); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
	t.Run("nil removes", func(t *testing.T) {
		pod := annotated(AnnotationResourceStatus, `{}`)
		if err := SetResourceStatus(pod, nil); err != nil {
			t.Fatalf("SetResourceStatus(nil) error: %v", err)
		}
		if diff := cmp.Diff(map[string]string{}, pod.Annotations); diff != "" {
			t.Errorf("annotations (-want,+got):\n%s", diff)
		}
	})
}

func TestResourceStatusCPUs(t *testing.T) {
	status := &ResourceStatus{CPUSet: "2-3,0"}
	got, err := status.CPUs()
	if err != nil {
		t.Fatalf("CPUs() error: %v", err)
	}
	if diff := cmp.Diff([]int{0, 2, 3}, got); diff != "" {
		t.Errorf("CPUs() (-want,+got):\n%s", diff)
	}
}
