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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Colocation extended resources. The CPU variants count integer milli-cores
// (a node allocatable of 50000 is 50 cores); the memory variants count bytes.
const (
	// BatchCPU is the reclaimed CPU that koord-batch pods request, in
	// milli-cores.
	BatchCPU corev1.ResourceName = ResourceDomainPrefix + "batch-cpu"
	// BatchMemory is the reclaimed memory that koord-batch pods request, in
	// bytes.
	BatchMemory corev1.ResourceName = ResourceDomainPrefix + "batch-memory"
	// MidCPU is the reclaimed CPU that koord-mid pods request, in
	// milli-cores.
	MidCPU corev1.ResourceName = ResourceDomainPrefix + "mid-cpu"
	// MidMemory is the reclaimed memory that koord-mid pods request, in
	// bytes.
	MidMemory corev1.ResourceName = ResourceDomainPrefix + "mid-memory"

	// KoordBatchCPU is the old name of BatchCPU.
	//
	// Deprecated: use BatchCPU; extended resources outside kubernetes.io
	// cannot be overcommitted.
	KoordBatchCPU corev1.ResourceName = DomainPrefix + "batch-cpu"
	// KoordBatchMemory is the old name of BatchMemory.
	//
	// Deprecated: use BatchMemory.
	KoordBatchMemory corev1.ResourceName = DomainPrefix + "batch-memory"
)

// Device resources.
const (
	// ResourceGPU is a share of GPUs in percent (100 is one whole GPU); it
	// expands to ResourceGPUCore and ResourceGPUMemoryRatio.
	ResourceGPU corev1.ResourceName = DomainPrefix + "gpu"
	// ResourceGPUCore is GPU compute in percent of a GPU.
	ResourceGPUCore corev1.ResourceName = DomainPrefix + "gpu-core"
	// ResourceGPUMemory is GPU memory in bytes.
	ResourceGPUMemory corev1.ResourceName = DomainPrefix + "gpu-memory"
	// ResourceGPUMemoryRatio is GPU memory in percent of a GPU.
	ResourceGPUMemoryRatio corev1.ResourceName = DomainPrefix + "gpu-memory-ratio"
	// ResourceGPUShared is the number of GPUs a pod shares with others.
	ResourceGPUShared corev1.ResourceName = DomainPrefix + "gpu.shared"
	// ResourceRDMA is an RDMA device share in percent.
	ResourceRDMA corev1.ResourceName = DomainPrefix + "rdma"
	// ResourceFPGA is an FPGA share in percent.
	ResourceFPGA corev1.ResourceName = DomainPrefix + "fpga"

	// ResourceNvidiaGPU is the NVIDIA device plugin resource.
	ResourceNvidiaGPU corev1.ResourceName = "nvidia.com/gpu"
	// ResourceAMDGPU is the AMD device plugin resource.
	ResourceAMDGPU corev1.ResourceName = "amd.com/gpu"
	// ResourceHygonDCU is the Hygon DCU device plugin resource.
	ResourceHygonDCU corev1.ResourceName = "dcu.com/gpu"
	// ResourceHuaweiNPUCore is the Huawei Ascend NPU core resource.
	ResourceHuaweiNPUCore corev1.ResourceName = "huawei.com/npu-core"
	// ResourceHuaweiNPUCPU is the Huawei Ascend NPU AI CPU resource.
	ResourceHuaweiNPUCPU corev1.ResourceName = "huawei.com/npu-cpu"
	// ResourceHuaweiNPUDVPP is the Huawei Ascend NPU DVPP resource.
	ResourceHuaweiNPUDVPP corev1.ResourceName = "huawei.com/npu-dvpp"

	// DeprecatedKoordGPU is the old name of ResourceGPU.
	//
	// Deprecated: use ResourceGPU.
	DeprecatedKoordGPU corev1.ResourceName = ResourceDomainPrefix + "gpu"
	// DeprecatedGPUCore is the old name of ResourceGPUCore.
	//
	// Deprecated: use ResourceGPUCore.
	DeprecatedGPUCore corev1.ResourceName = ResourceDomainPrefix + "gpu-core"
	// DeprecatedGPUMemory is the old name of ResourceGPUMemory.
	//
	// Deprecated: use ResourceGPUMemory.
	DeprecatedGPUMemory corev1.ResourceName = ResourceDomainPrefix + "gpu-memory"
	// DeprecatedGPUMemoryRatio is the old name of ResourceGPUMemoryRatio.
	//
	// Deprecated: use ResourceGPUMemoryRatio.
	DeprecatedGPUMemoryRatio corev1.ResourceName = ResourceDomainPrefix + "gpu-memory-ratio"
	// DeprecatedKoordRDMA is the old name of ResourceRDMA.
	//
	// Deprecated: use ResourceRDMA.
	DeprecatedKoordRDMA corev1.ResourceName = ResourceDomainPrefix + "rdma"
	// DeprecatedKoordFPGA is the old name of ResourceFPGA.
	//
	// Deprecated: use ResourceFPGA.
	DeprecatedKoordFPGA corev1.ResourceName = ResourceDomainPrefix + "fpga"
)

// NormalizeResourceName returns the current name of a deprecated resource
// name and any other name unchanged.
func NormalizeResourceName(name corev1.ResourceName) corev1.ResourceName {
	switch name {
	case KoordBatchCPU:
		return BatchCPU
	case KoordBatchMemory:
		return BatchMemory
	case DeprecatedKoordGPU:
		return ResourceGPU
	case DeprecatedGPUCore:
		return ResourceGPUCore
	case DeprecatedGPUMemory:
		return ResourceGPUMemory
	case DeprecatedGPUMemoryRatio:
		return ResourceGPUMemoryRatio
	case DeprecatedKoordRDMA:
		return ResourceRDMA
	case DeprecatedKoordFPGA:
		return ResourceFPGA
	}
	return name
}

// TranslateResourceNameByPriorityClass returns the resource a pod of class pc
// requests in place of the standard resource name:
//
//   - koord-prod and PriorityNone use the standard resources, so name is
//     returned unchanged;
//   - koord-batch maps cpu and memory to BatchCPU and BatchMemory;
//   - koord-mid maps cpu and memory to MidCPU and MidMemory.
//
// It returns "" when pc has no counterpart for name: any resource other than
// cpu and memory for koord-batch and koord-mid, and every resource for
// koord-free and unknown classes.
func TranslateResourceNameByPriorityClass(pc PriorityClass, name corev1.ResourceName) corev1.ResourceName {
	switch pc {
	case PriorityProd, PriorityNone:
		return name
	case PriorityBatch:
		switch name {
		case corev1.ResourceCPU:
			return BatchCPU
		case corev1.ResourceMemory:
			return BatchMemory
		}
	case PriorityMid:
		switch name {
		case corev1.ResourceCPU:
			return MidCPU
		case corev1.ResourceMemory:
			return MidMemory
		}
	}
	return ""
}

// GetPriorityClassByResourceName returns the priority class whose pods
// request the colocation resource name (deprecated names included), or
// PriorityNone for any other resource.
func GetPriorityClassByResourceName(name corev1.ResourceName) PriorityClass {
	switch NormalizeResourceName(name) {
	case BatchCPU, BatchMemory:
		return PriorityBatch
	case MidCPU, MidMemory:
		return PriorityMid
	}
	return PriorityNone
}

// TranslateResourceListByPriorityClass returns a copy of a standard resource
// list as a pod of class pc requests it: for koord-batch and koord-mid, cpu
// becomes the class's CPU resource in integer milli-cores (see
// MilliCPUQuantity) and memory the class's memory resource; other resources,
// and every resource of other classes, are copied unchanged.
func TranslateResourceListByPriorityClass(pc PriorityClass, list corev1.ResourceList) corev1.ResourceList {
	if list == nil {
		return nil
	}
	out := make(corev1.ResourceList, len(list))
	for name, q := range list {
		translated := TranslateResourceNameByPriorityClass(pc, name)
		switch {
		case pc != PriorityBatch && pc != PriorityMid, translated == "":
			out[name] = q.DeepCopy()
		case name == corev1.ResourceCPU:
			out[translated] = CPUToBatchCPU(q)
		default:
			out[translated] = q.DeepCopy()
		}
	}
	return out
}

// CPUToBatchCPU converts a cpu quantity into the integer milli-core quantity
// of BatchCPU (and MidCPU): "2" becomes 2000, "1.5" 1500, "250m" 250.
// Fractions of a milli-core are rounded up, as Kubernetes does, so "0.0001"
// becomes 1. Quantities beyond the int64 range of milli-cores are not
// supported.
func CPUToBatchCPU(cpu resource.Quantity) resource.Quantity {
	return *resource.NewQuantity(cpu.MilliValue(), resource.DecimalSI)
}

// BatchCPUToCPU converts a BatchCPU (or MidCPU) quantity, counted in
// milli-cores, back into a cpu quantity: 2000 becomes "2". A fractional
// milli-core count is rounded up first.
func BatchCPUToCPU(batchCPU resource.Quantity) resource.Quantity {
	return *resource.NewMilliQuantity(batchCPU.Value(), resource.DecimalSI)
}

// AnnotationExtendedResourceSpec holds the requests and limits of the
// extended resources of every container, written by the pod webhook so that
// node-side hooks, which only see CRI requests, can read them.
const AnnotationExtendedResourceSpec = NodeDomainPrefix + "extended-resource-spec"

// ExtendedResourceSpec is the value of AnnotationExtendedResourceSpec.
type ExtendedResourceSpec struct {
	// Containers maps container names to their extended resources.
	Containers map[string]ExtendedResourceContainerSpec `json:"containers,omitempty"`
}

// ExtendedResourceContainerSpec holds the extended resources of a container.
type ExtendedResourceContainerSpec struct {
	// Limits are the extended resource limits.
	Limits corev1.ResourceList `json:"limits,omitempty"`
	// Requests are the extended resource requests.
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// GetExtendedResourceSpec parses AnnotationExtendedResourceSpec. It returns
// nil and no error when the annotation is missing.
func GetExtendedResourceSpec(annotations map[string]string) (*ExtendedResourceSpec, error) {
	value, ok := lookup(annotations, AnnotationExtendedResourceSpec)
	if !ok {
		return nil, nil
	}
	spec := &ExtendedResourceSpec{}
	if err := decodeAnnotation(AnnotationExtendedResourceSpec, value, spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// SetExtendedResourceSpec stores spec in AnnotationExtendedResourceSpec on
// obj, or removes the annotation when spec is nil.
func SetExtendedResourceSpec(obj metav1.Object, spec *ExtendedResourceSpec) error {
	if spec == nil {
		removeAnnotation(obj, AnnotationExtendedResourceSpec)
		return nil
	}
	return encodeAnnotation(obj, AnnotationExtendedResourceSpec, spec)
}
