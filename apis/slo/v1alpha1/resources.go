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
	corev1 "k8s.io/api/core/v1"
)

// ResourceMap is a set of resource quantities plus the per-device usage behind them. It serializes as
// {"resources": {...}, "devices": [...]}, as Koordinator's does; Go code reads the quantities through the
// embedded ResourceList.
type ResourceMap struct {
	// ResourceList holds the quantities by resource name: cpu in cores (e.g. "1500m"), memory in bytes, and any
	// extended resource in its own unit.
	// +optional
	corev1.ResourceList `json:"resources,omitempty"`

	// Devices is the usage of each device (e.g. GPU) on the node, for device-aware consumers.
	// +optional
	Devices []DeviceInfo `json:"devices,omitempty"`
}

// DeviceType names a kind of device, e.g. "gpu", "rdma" or "fpga". Vendor-specific types are allowed.
type DeviceType string

// Well-known device types.
const (
	// DeviceTypeGPU is a GPU.
	DeviceTypeGPU DeviceType = "gpu"
	// DeviceTypeRDMA is an RDMA NIC.
	DeviceTypeRDMA DeviceType = "rdma"
	// DeviceTypeFPGA is an FPGA.
	DeviceTypeFPGA DeviceType = "fpga"
)

// DeviceInfo identifies one device and carries the resource quantities reported for it. It has the JSON shape of
// an entry of Koordinator's Device.spec.devices, restricted to the fields a usage report needs.
type DeviceInfo struct {
	// Type is the type of the device.
	// +optional
	Type DeviceType `json:"type,omitempty"`
	// UUID is the device's UUID.
	// +optional
	UUID string `json:"id,omitempty"`
	// Minor is the device's minor number, starting from 0.
	// +optional
	Minor *int32 `json:"minor,omitempty"`
	// ModuleID is the physical ID of the device.
	// +optional
	ModuleID *int32 `json:"moduleID,omitempty"`
	// Health tells whether the device works normally. Defaults to false.
	// +kubebuilder:default=false
	// +optional
	Health bool `json:"health"`
	// Labels are device properties used to group and select devices.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Resources are the quantities reported for this device, e.g. koordinator.sh/gpu-core (percent of one
	// device) and koordinator.sh/gpu-memory (bytes).
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Topology locates the device on the node.
	// +optional
	Topology *DeviceTopology `json:"topology,omitempty"`
}

// DeviceTopology locates a device by CPU socket, NUMA node and PCIe switch.
type DeviceTopology struct {
	// SocketID is the ID of the CPU socket the device belongs to.
	SocketID int32 `json:"socketID"`
	// NodeID is the ID of the NUMA node the device belongs to; unique across sockets.
	NodeID int32 `json:"nodeID"`
	// PCIEID is the ID of the PCIe switch the device is attached to; unique across NUMA nodes.
	PCIEID string `json:"pcieID"`
	// BusID is the domain:bus:device.function identifier of the PCI/PCIe device.
	// +optional
	BusID string `json:"busID,omitempty"`
}
