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
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeviceAllocateHints is the value of AnnotationDeviceAllocateHint: how the devices of each type are chosen,
// e.g. {"rdma": {"vfSelector": {}}, "gpu": {"requiredTopologyScope": "PCIe"}}.
type DeviceAllocateHints map[DeviceType]*DeviceHint

// DeviceHint guides the choice of the devices of one type.
type DeviceHint struct {
	// Selector keeps the devices whose labels it matches.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// VFSelector, when set (even empty), allocates a virtual function of the device, of a VF group whose
	// labels it matches, rather than the device itself.
	VFSelector *metav1.LabelSelector `json:"vfSelector,omitempty"`
	// AllocateStrategy is ApplyForAll (every device, of the selector's) or RequestsAsCount (the request is a
	// number of devices).
	AllocateStrategy DeviceAllocateStrategy `json:"allocateStrategy,omitempty"`
	// RequiredTopologyScope keeps all the devices of the pod within one PCIe switch (PCIe) or NUMA node
	// (NUMANode); Node and Device ask nothing more.
	RequiredTopologyScope DeviceTopologyScope `json:"requiredTopologyScope,omitempty"`
	// ExclusivePolicy is PCIeLevel (only devices whose whole PCIe switch is free) or DeviceLevel (with
	// RequestsAsCount, whole devices).
	ExclusivePolicy DeviceExclusivePolicy `json:"exclusivePolicy,omitempty"`
}

// DeviceAllocateStrategy is a DeviceHint's allocateStrategy.
type DeviceAllocateStrategy string

// Device allocate strategies.
const (
	ApplyForAllDeviceAllocateStrategy     DeviceAllocateStrategy = "ApplyForAll"
	RequestsAsCountDeviceAllocateStrategy DeviceAllocateStrategy = "RequestsAsCount"
)

// DeviceTopologyScope is a DeviceHint's requiredTopologyScope.
type DeviceTopologyScope string

// Device topology scopes.
const (
	DeviceTopologyScopeDevice   DeviceTopologyScope = "Device"
	DeviceTopologyScopePCIe     DeviceTopologyScope = "PCIe"
	DeviceTopologyScopeNUMANode DeviceTopologyScope = "NUMANode"
	DeviceTopologyScopeNode     DeviceTopologyScope = "Node"
)

// DeviceExclusivePolicy is a DeviceHint's exclusivePolicy.
type DeviceExclusivePolicy string

// Device exclusive policies.
const (
	DeviceLevelDeviceExclusivePolicy     DeviceExclusivePolicy = "DeviceLevel"
	PCIExpressLevelDeviceExclusivePolicy DeviceExclusivePolicy = "PCIeLevel"
)

func (h *DeviceAllocateHints) validate() error {
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(*h)) {
		hint := (*h)[t]
		if hint == nil {
			continue
		}
		if t == "" {
			errs = append(errs, errors.New("empty device type"))
		}
		switch hint.AllocateStrategy {
		case "", ApplyForAllDeviceAllocateStrategy, RequestsAsCountDeviceAllocateStrategy:
		default:
			errs = append(errs, fmt.Errorf("%s.allocateStrategy: unsupported value %q (ApplyForAll or RequestsAsCount)", t, hint.AllocateStrategy))
		}
		switch hint.RequiredTopologyScope {
		case "", DeviceTopologyScopeDevice, DeviceTopologyScopePCIe, DeviceTopologyScopeNUMANode, DeviceTopologyScopeNode:
		default:
			errs = append(errs, fmt.Errorf("%s.requiredTopologyScope: unsupported value %q (Device, PCIe, NUMANode or Node)", t, hint.RequiredTopologyScope))
		}
		switch hint.ExclusivePolicy {
		case "", DeviceLevelDeviceExclusivePolicy, PCIExpressLevelDeviceExclusivePolicy:
		default:
			errs = append(errs, fmt.Errorf("%s.exclusivePolicy: unsupported value %q (DeviceLevel or PCIeLevel)", t, hint.ExclusivePolicy))
		}
		for _, sel := range []struct {
			name string
			sel  *metav1.LabelSelector
		}{{"selector", hint.Selector}, {"vfSelector", hint.VFSelector}} {
			if sel.sel == nil {
				continue
			}
			if _, err := metav1.LabelSelectorAsSelector(sel.sel); err != nil {
				errs = append(errs, fmt.Errorf("%s.%s: %w", t, sel.name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// GetDeviceAllocateHints parses AnnotationDeviceAllocateHint; nil and no error when it is missing.
func GetDeviceAllocateHints(annotations map[string]string) (DeviceAllocateHints, error) {
	h, err := getJSONAnnotation[DeviceAllocateHints](annotations, AnnotationDeviceAllocateHint)
	if h == nil || err != nil {
		return nil, err
	}
	return *h, nil
}

// DeviceJointAllocate is the value of AnnotationDeviceJointAllocate: devices of several types allocated
// together, e.g. {"deviceTypes": ["gpu", "rdma"], "requiredScope": "SamePCIe"}. The first type is the primary:
// the others are chosen on its devices' PCIe switches.
type DeviceJointAllocate struct {
	DeviceTypes []DeviceType `json:"deviceTypes,omitempty"`
	// RequiredScope SamePCIe requires the other types' devices on exactly the PCIe switches of the primary's.
	RequiredScope DeviceJointAllocateScope `json:"requiredScope,omitempty"`
}

// DeviceJointAllocateScope is a DeviceJointAllocate's requiredScope.
type DeviceJointAllocateScope string

// SamePCIeDeviceJointAllocateScope requires every type's devices on the same PCIe switches.
const SamePCIeDeviceJointAllocateScope DeviceJointAllocateScope = "SamePCIe"

func (j *DeviceJointAllocate) validate() error {
	switch j.RequiredScope {
	case "", SamePCIeDeviceJointAllocateScope:
	default:
		return fmt.Errorf("requiredScope: unsupported value %q (SamePCIe)", j.RequiredScope)
	}
	return nil
}

// GetDeviceJointAllocate parses AnnotationDeviceJointAllocate; nil and no error when it is missing.
func GetDeviceJointAllocate(annotations map[string]string) (*DeviceJointAllocate, error) {
	return getJSONAnnotation[DeviceJointAllocate](annotations, AnnotationDeviceJointAllocate)
}
