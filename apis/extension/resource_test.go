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
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCPUToBatchCPU(t *testing.T) {
	tests := map[string]struct {
		cpu       string
		wantValue int64
	}{
		"whole cores":        {cpu: "2", wantValue: 2000},
		"zero":               {cpu: "0", wantValue: 0},
		"milli-cores":        {cpu: "500m", wantValue: 500},
		"quarter core":       {cpu: "250m", wantValue: 250},
		"fraction":           {cpu: "1.5", wantValue: 1500},
		"sub-milli":          {cpu: "0.0001", wantValue: 1},
		"sub-milli rounding": {cpu: "1.0001", wantValue: 1001},
		"micro-cores":        {cpu: "1u", wantValue: 1},
		"kilo-cores":         {cpu: "1k", wantValue: 1000000},
		"exponent":           {cpu: "2e3", wantValue: 2000000},
		"many cores":         {cpu: "128", wantValue: 128000},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := CPUToBatchCPU(resource.MustParse(tc.cpu))
			if diff := cmp.Diff(tc.wantValue, got.Value()); diff != "" {
				t.Errorf("CPUToBatchCPU(%s).Value() (-want,+got):\n%s", tc.cpu, diff)
			}
			if diff := cmp.Diff(resource.DecimalSI, got.Format); diff != "" {
				t.Errorf("CPUToBatchCPU(%s).Format (-want,+got):\n%s", tc.cpu, diff)
			}
		})
	}
}

func TestBatchCPUToCPU(t *testing.T) {
	tests := map[string]struct {
		batchCPU string
		want     resource.Quantity
	}{
		"whole cores": {batchCPU: "2000", want: resource.MustParse("2")},
		"kilo form":   {batchCPU: "2k", want: resource.MustParse("2")},
		"milli-cores": {batchCPU: "500", want: resource.MustParse("500m")},
		"one":         {batchCPU: "1", want: resource.MustParse("1m")},
		"zero":        {batchCPU: "0", want: resource.MustParse("0")},
		"fractional":  {batchCPU: "1.5", want: resource.MustParse("2m")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := BatchCPUToCPU(resource.MustParse(tc.batchCPU))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("BatchCPUToCPU(%s) (-want,+got):\n%s", tc.batchCPU, diff)
			}
		})
	}
}

func TestCPUToBatchCPURoundTrip(t *testing.T) {
	for _, cpu := range []string{"0", "1m", "250m", "1", "1.5", "64", "999999"} {
		t.Run(cpu, func(t *testing.T) {
			want := resource.MustParse(cpu)
			if diff := cmp.Diff(want, BatchCPUToCPU(CPUToBatchCPU(want))); diff != "" {
				t.Errorf("BatchCPUToCPU(CPUToBatchCPU(%s)) (-want,+got):\n%s", cpu, diff)
			}
		})
	}
}

func TestTranslateResourceNameByPriorityClass(t *testing.T) {
	tests := map[string]struct {
		class PriorityClass
		name  corev1.ResourceName
		want  corev1.ResourceName
	}{
		"prod cpu":           {class: PriorityProd, name: corev1.ResourceCPU, want: corev1.ResourceCPU},
		"prod gpu":           {class: PriorityProd, name: ResourceNvidiaGPU, want: ResourceNvidiaGPU},
		"none memory":        {class: PriorityNone, name: corev1.ResourceMemory, want: corev1.ResourceMemory},
		"batch cpu":          {class: PriorityBatch, name: corev1.ResourceCPU, want: BatchCPU},
		"batch memory":       {class: PriorityBatch, name: corev1.ResourceMemory, want: BatchMemory},
		"batch storage":      {class: PriorityBatch, name: corev1.ResourceEphemeralStorage, want: ""},
		"mid cpu":            {class: PriorityMid, name: corev1.ResourceCPU, want: MidCPU},
		"mid memory":         {class: PriorityMid, name: corev1.ResourceMemory, want: MidMemory},
		"mid pods":           {class: PriorityMid, name: corev1.ResourcePods, want: ""},
		"free cpu":           {class: PriorityFree, name: corev1.ResourceCPU, want: ""},
		"unknown class":      {class: "koord-gold", name: corev1.ResourceCPU, want: ""},
		"batch of batch-cpu": {class: PriorityBatch, name: BatchCPU, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, TranslateResourceNameByPriorityClass(tc.class, tc.name)); diff != "" {
				t.Errorf("TranslateResourceNameByPriorityClass(%q, %q) (-want,+got):\n%s", tc.class, tc.name, diff)
			}
		})
	}
}

func TestGetPriorityClassByResourceName(t *testing.T) {
	tests := map[string]struct {
		name corev1.ResourceName
		want PriorityClass
	}{
		"batch cpu":            {name: BatchCPU, want: PriorityBatch},
		"batch memory":         {name: BatchMemory, want: PriorityBatch},
		"deprecated batch cpu": {name: KoordBatchCPU, want: PriorityBatch},
		"mid cpu":              {name: MidCPU, want: PriorityMid},
		"mid memory":           {name: MidMemory, want: PriorityMid},
		"cpu":                  {name: corev1.ResourceCPU, want: PriorityNone},
		"gpu":                  {name: ResourceGPU, want: PriorityNone},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPriorityClassByResourceName(tc.name)); diff != "" {
				t.Errorf("GetPriorityClassByResourceName(%q) (-want,+got):\n%s", tc.name, diff)
			}
		})
	}
}

func TestNormalizeResourceName(t *testing.T) {
	tests := map[string]struct {
		name corev1.ResourceName
		want corev1.ResourceName
	}{
		"koordinator batch cpu":     {name: "koordinator.sh/batch-cpu", want: "kubernetes.io/batch-cpu"},
		"koordinator batch memory":  {name: "koordinator.sh/batch-memory", want: "kubernetes.io/batch-memory"},
		"kubernetes gpu":            {name: "kubernetes.io/gpu", want: "koordinator.sh/gpu"},
		"kubernetes gpu-core":       {name: "kubernetes.io/gpu-core", want: "koordinator.sh/gpu-core"},
		"kubernetes gpu-memory":     {name: "kubernetes.io/gpu-memory", want: "koordinator.sh/gpu-memory"},
		"kubernetes gpu-mem-ratio":  {name: "kubernetes.io/gpu-memory-ratio", want: "koordinator.sh/gpu-memory-ratio"},
		"kubernetes rdma":           {name: "kubernetes.io/rdma", want: "koordinator.sh/rdma"},
		"kubernetes fpga":           {name: "kubernetes.io/fpga", want: "koordinator.sh/fpga"},
		"current name is unchanged": {name: BatchCPU, want: BatchCPU},
		"cpu is unchanged":          {name: corev1.ResourceCPU, want: corev1.ResourceCPU},
		"nvidia gpu is unchanged":   {name: ResourceNvidiaGPU, want: ResourceNvidiaGPU},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NormalizeResourceName(tc.name)); diff != "" {
				t.Errorf("NormalizeResourceName(%q) (-want,+got):\n%s", tc.name, diff)
			}
		})
	}
}

func TestResourceNames(t *testing.T) {
	got := map[string]corev1.ResourceName{
		"BatchCPU":               BatchCPU,
		"BatchMemory":            BatchMemory,
		"MidCPU":                 MidCPU,
		"MidMemory":              MidMemory,
		"KoordBatchCPU":          KoordBatchCPU,
		"KoordBatchMemory":       KoordBatchMemory,
		"ResourceGPU":            ResourceGPU,
		"ResourceGPUCore":        ResourceGPUCore,
		"ResourceGPUMemory":      ResourceGPUMemory,
		"ResourceGPUMemoryRatio": ResourceGPUMemoryRatio,
		"ResourceGPUShared":      ResourceGPUShared,
		"ResourceRDMA":           ResourceRDMA,
		"ResourceFPGA":           ResourceFPGA,
		"ResourceNvidiaGPU":      ResourceNvidiaGPU,
	}
	want := map[string]corev1.ResourceName{
		"BatchCPU":               "kubernetes.io/batch-cpu",
		"BatchMemory":            "kubernetes.io/batch-memory",
		"MidCPU":                 "kubernetes.io/mid-cpu",
		"MidMemory":              "kubernetes.io/mid-memory",
		"KoordBatchCPU":          "koordinator.sh/batch-cpu",
		"KoordBatchMemory":       "koordinator.sh/batch-memory",
		"ResourceGPU":            "koordinator.sh/gpu",
		"ResourceGPUCore":        "koordinator.sh/gpu-core",
		"ResourceGPUMemory":      "koordinator.sh/gpu-memory",
		"ResourceGPUMemoryRatio": "koordinator.sh/gpu-memory-ratio",
		"ResourceGPUShared":      "koordinator.sh/gpu.shared",
		"ResourceRDMA":           "koordinator.sh/rdma",
		"ResourceFPGA":           "koordinator.sh/fpga",
		"ResourceNvidiaGPU":      "nvidia.com/gpu",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resource names (-want,+got):\n%s", diff)
	}
}

func TestTranslateResourceListByPriorityClass(t *testing.T) {
	tests := map[string]struct {
		class PriorityClass
		list  corev1.ResourceList
		want  corev1.ResourceList
	}{
		"nil list": {class: PriorityBatch, list: nil, want: nil},
		"batch": {
			class: PriorityBatch,
			list:  rl("cpu", "2", "memory", "4Gi", "nvidia.com/gpu", "1"),
			want:  rl("kubernetes.io/batch-cpu", "2000", "kubernetes.io/batch-memory", "4Gi", "nvidia.com/gpu", "1"),
		},
		"mid with fractional cpu": {
			class: PriorityMid,
			list:  rl("cpu", "1.5", "memory", "1Gi"),
			want:  rl("kubernetes.io/mid-cpu", "1500", "kubernetes.io/mid-memory", "1Gi"),
		},
		"prod is copied": {
			class: PriorityProd,
			list:  rl("cpu", "2", "memory", "4Gi"),
			want:  rl("cpu", "2", "memory", "4Gi"),
		},
		"free is copied": {
			class: PriorityFree,
			list:  rl("cpu", "2"),
			want:  rl("cpu", "2"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := TranslateResourceListByPriorityClass(tc.class, tc.list)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TranslateResourceListByPriorityClass() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestExtendedResourceSpec(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		want        *ExtendedResourceSpec
		wantErr     string
	}{
		"missing": {annotations: nil, want: nil},
		"empty":   {annotations: map[string]string{AnnotationExtendedResourceSpec: ""}, want: nil},
		"valid": {
			annotations: map[string]string{AnnotationExtendedResourceSpec: `{"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"2k"},"requests":{"kubernetes.io/batch-cpu":"1000"}}}}`},
			want: &ExtendedResourceSpec{Containers: map[string]ExtendedResourceContainerSpec{
				"main": {Limits: rl("kubernetes.io/batch-cpu", "2000"), Requests: rl("kubernetes.io/batch-cpu", "1k")},
			}},
		},
		"malformed": {
			annotations: map[string]string{AnnotationExtendedResourceSpec: `{"containers":[}`},
			wantErr:     `annotation "node.koordinator.sh/extended-resource-spec": invalid character '}' looking for beginning of value`,
		},
		"bad quantity": {
			annotations: map[string]string{AnnotationExtendedResourceSpec: `{"containers":{"main":{"limits":{"cpu":"lots"}}}}`},
			wantErr:     `annotation "node.koordinator.sh/extended-resource-spec": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetExtendedResourceSpec(tc.annotations)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetExtendedResourceSpec() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetExtendedResourceSpec() (-want,+got):\n%s", diff)
			}
			if got == nil {
				return
			}
			pod := podWith(nil, nil)
			if err := SetExtendedResourceSpec(pod, got); err != nil {
				t.Fatalf("SetExtendedResourceSpec() error: %v", err)
			}
			again, err := GetExtendedResourceSpec(pod.Annotations)
			if err != nil {
				t.Fatalf("GetExtendedResourceSpec(SetExtendedResourceSpec()) error: %v", err)
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetExtendedResourceSpec(t *testing.T) {
	pod := podWith(nil, nil)
	spec := &ExtendedResourceSpec{Containers: map[string]ExtendedResourceContainerSpec{
		"c": {Requests: rl("kubernetes.io/batch-memory", "1Gi")},
	}}
	if err := SetExtendedResourceSpec(pod, spec); err != nil {
		t.Fatalf("SetExtendedResourceSpec() error: %v", err)
	}
	want := map[string]string{AnnotationExtendedResourceSpec: `{"containers":{"c":{"requests":{"kubernetes.io/batch-memory":"1Gi"}}}}`}
	if diff := cmp.Diff(want, pod.Annotations); diff != "" {
		t.Errorf("annotations after set (-want,+got):\n%s", diff)
	}
	if err := SetExtendedResourceSpec(pod, nil); err != nil {
		t.Fatalf("SetExtendedResourceSpec(nil) error: %v", err)
	}
	if diff := cmp.Diff(map[string]string{}, pod.Annotations); diff != "" {
		t.Errorf("annotations after removal (-want,+got):\n%s", diff)
	}
}
