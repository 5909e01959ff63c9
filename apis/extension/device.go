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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// Pod annotations and node labels of device scheduling.
const (
	// AnnotationDeviceAllocated is the devices koord-scheduler allocated to
	// a pod; see DeviceAllocations.
	AnnotationDeviceAllocated = SchedulingDomainPrefix + "device-allocated"
	// AnnotationDeviceAllocateHint guides how devices are selected for a
	// pod (JSON, by device type).
	AnnotationDeviceAllocateHint = SchedulingDomainPrefix + "device-allocate-hint"
	// AnnotationDeviceJointAllocate asks for devices of several types to be
	// allocated together, e.g. on the same PCIe switch (JSON).
	AnnotationDeviceJointAllocate = SchedulingDomainPrefix + "device-joint-allocate"

	// LabelGPUModel is the GPU model of a node.
	LabelGPUModel = NodeDomainPrefix + "gpu-model"
	// LabelGPUVendor is the GPU vendor of a node.
	LabelGPUVendor = NodeDomainPrefix + "gpu-vendor"
	// LabelGPUDriverVersion is the GPU driver version of a node.
	LabelGPUDriverVersion = NodeDomainPrefix + "gpu-driver-version"

	// LabelGPUIsolationProvider names what isolates a pod's share of a GPU; with GPUIsolationProviderHAMICore
	// koordlet preloads HAMi-core into the pod's containers with the share's limits.
	LabelGPUIsolationProvider = DomainPrefix + "gpu-isolation-provider"
	// GPUIsolationProviderHAMICore is HAMi-core (libvgpu.so), the value of LabelGPUIsolationProvider.
	GPUIsolationProviderHAMICore = "HAMi-core"
)

// DeviceType is a kind of device, the key of DeviceAllocations. It is the type the Device CRD reports.
type DeviceType = schedulingv1alpha1.DeviceType

// Device types.
const (
	// DeviceTypeGPU is a GPU.
	DeviceTypeGPU = schedulingv1alpha1.GPU
	// DeviceTypeFPGA is an FPGA.
	DeviceTypeFPGA = schedulingv1alpha1.FPGA
	// DeviceTypeRDMA is an RDMA NIC.
	DeviceTypeRDMA = schedulingv1alpha1.RDMA
)

// DeviceAllocations is the value of AnnotationDeviceAllocated: the devices of
// each type allocated to a pod, e.g.
//
//	{"gpu": [{"minor": 0, "resources": {"koordinator.sh/gpu-core": "100"}}]}
type DeviceAllocations map[DeviceType][]*DeviceAllocation

// DeviceAllocation is the part of one device allocated to a pod.
type DeviceAllocation struct {
	// Minor is the device minor number.
	Minor int32 `json:"minor"`
	// Resources are the device resources allocated.
	Resources corev1.ResourceList `json:"resources"`
	// ID identifies devices whose minor number means nothing, such as RDMA
	// NICs (by PCI address).
	ID string `json:"id,omitempty"`
	// Extension carries type-specific details, such as the virtual functions
	// of an RDMA NIC, as raw JSON. It is kept compact.
	Extension json.RawMessage `json:"extension,omitempty"`
}

// vfExtension is the extension of an allocation that holds virtual functions.
type vfExtension struct {
	VFs []schedulingv1alpha1.VirtualFunction `json:"vfs,omitempty"`
}

// VirtualFunctions returns the virtual functions the allocation's extension names ({"vfs": [{"minor": 0,
// "busID": ...}]}); none when it names none or is not such JSON.
func (a *DeviceAllocation) VirtualFunctions() []schedulingv1alpha1.VirtualFunction {
	if len(a.Extension) == 0 {
		return nil
	}
	var ext vfExtension
	if json.Unmarshal(a.Extension, &ext) != nil {
		return nil
	}
	return ext.VFs
}

// VFExtension is the extension of an allocation holding vfs.
func VFExtension(vfs []schedulingv1alpha1.VirtualFunction) json.RawMessage {
	b, _ := json.Marshal(vfExtension{VFs: vfs})
	return b
}

// validate checks that every device type is named, every allocation is
// present and every extension is valid JSON.
func (a DeviceAllocations) validate() error {
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(a)) {
		if t == "" {
			errs = append(errs, errors.New("empty device type"))
			continue
		}
		for i, alloc := range a[t] {
			switch {
			case alloc == nil:
				errs = append(errs, fmt.Errorf("%s[%d]: null allocation", t, i))
			case len(alloc.Extension) > 0 && !json.Valid(alloc.Extension):
				errs = append(errs, fmt.Errorf("%s[%d].extension: invalid JSON", t, i))
			}
		}
	}
	return errors.Join(errs...)
}

// normalize rewrites every extension in its compact form, and a null
// extension as none, so that equal extensions have equal bytes. The
// extensions must be valid JSON.
func (a DeviceAllocations) normalize() {
	for _, allocs := range a {
		for _, alloc := range allocs {
			if alloc == nil || len(alloc.Extension) == 0 {
				continue
			}
			var buf bytes.Buffer
			if json.Compact(&buf, alloc.Extension) != nil || buf.String() == "null" {
				alloc.Extension = nil
				continue
			}
			alloc.Extension = buf.Bytes()
		}
	}
}

// GetDeviceAllocations parses AnnotationDeviceAllocated. It returns nil and
// no error when the annotation is missing, and an *AnnotationError when it is
// not valid JSON, a device type is empty or an allocation is null.
func GetDeviceAllocations(annotations map[string]string) (DeviceAllocations, error) {
	value, ok := lookup(annotations, AnnotationDeviceAllocated)
	if !ok {
		return nil, nil
	}
	var allocations DeviceAllocations
	if err := decodeAnnotation(AnnotationDeviceAllocated, value, &allocations); err != nil {
		return nil, err
	}
	if err := allocations.validate(); err != nil {
		return nil, &AnnotationError{Key: AnnotationDeviceAllocated, Value: value, Err: err}
	}
	if allocations == nil {
		allocations = DeviceAllocations{}
	}
	allocations.normalize()
	return allocations, nil
}

// SetDeviceAllocations stores allocations in AnnotationDeviceAllocated on
// obj, or removes the annotation when allocations is nil. It writes nothing
// and returns an *AnnotationError when allocations is invalid.
func SetDeviceAllocations(obj metav1.Object, allocations DeviceAllocations) error {
	if allocations == nil {
		removeAnnotation(obj, AnnotationDeviceAllocated)
		return nil
	}
	if err := allocations.validate(); err != nil {
		return &AnnotationError{Key: AnnotationDeviceAllocated, Err: err}
	}
	return encodeAnnotation(obj, AnnotationDeviceAllocated, allocations)
}
