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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeviceType is the kind of a device, such as gpu or rdma. Vendor-specific types are allowed.
type DeviceType string

const (
	// GPU is a graphics processing unit.
	GPU DeviceType = "gpu"
	// FPGA is a field-programmable gate array.
	FPGA DeviceType = "fpga"
	// RDMA is an RDMA-capable network interface.
	RDMA DeviceType = "rdma"
	// XPU is another kind of accelerator.
	XPU DeviceType = "xpu"
)

// DeviceSpec lists the devices of a node, as reported by the node agent.
type DeviceSpec struct {
	// Devices are the devices installed on the node.
	// +optional
	Devices []DeviceInfo `json:"devices,omitempty"`
}

// DeviceInfo describes one device of a node.
type DeviceInfo struct {
	// Type is the device type, such as gpu, fpga, rdma or xpu.
	// +optional
	Type DeviceType `json:"type,omitempty"`
	// Labels are properties of the device that can be used to select it.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// UUID is the unique identifier of the device.
	// +optional
	UUID string `json:"id,omitempty"`
	// Minor is the device minor number, starting from 0.
	// +optional
	Minor *int32 `json:"minor,omitempty"`
	// ModuleID is the physical module ID of the device.
	// +optional
	ModuleID *int32 `json:"moduleID,omitempty"`
	// Health tells whether the device works normally. Defaults to false.
	// +kubebuilder:default=false
	Health bool `json:"health"`
	// Resources are the resource quantities the device provides, keyed by resource name.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Topology places the device in the node's CPU, NUMA and PCIe hierarchy.
	// +optional
	Topology *DeviceTopology `json:"topology,omitempty"`
	// VFGroups are the groups of virtual functions the device exposes.
	// +optional
	VFGroups []VirtualFunctionGroup `json:"vfGroups,omitempty"`
	// Conditions are the health conditions of the device.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DeviceTopology locates a device in the node hardware hierarchy.
type DeviceTopology struct {
	// SocketID is the ID of the CPU socket the device belongs to.
	SocketID int32 `json:"socketID"`
	// NodeID is the ID of the NUMA node the device belongs to, unique across sockets.
	NodeID int32 `json:"nodeID"`
	// PCIEID is the ID of the PCIe switch the device is attached to, unique across NUMA nodes.
	PCIEID string `json:"pcieID"`
	// BusID is the PCI address of the device in domain:bus:device.function form.
	// +optional
	BusID string `json:"busID,omitempty"`
}

// VirtualFunctionGroup is a group of virtual functions of a device that share labels.
type VirtualFunctionGroup struct {
	// Labels are properties shared by the virtual functions of the group.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// VFs are the virtual functions of the group.
	// +optional
	VFs []VirtualFunction `json:"vfs,omitempty"`
}

// VirtualFunction is one virtual function of a device.
type VirtualFunction struct {
	// Minor is the minor number identifying the virtual function, starting from 0.
	Minor int32 `json:"minor"`
	// BusID is the PCI address of the virtual function in domain:bus:device.function form.
	// +optional
	BusID string `json:"busID,omitempty"`
}

// DeviceStatus is the observed state of the devices of a node.
type DeviceStatus struct {
	// Allocations lists the devices allocated to pods, by device type.
	// +optional
	Allocations []DeviceAllocation `json:"allocations,omitempty"`
}

// DeviceAllocation lists the allocations of one device type.
type DeviceAllocation struct {
	// Type is the device type of the entries.
	// +optional
	Type DeviceType `json:"type,omitempty"`
	// Entries are the pods holding devices of this type.
	// +optional
	Entries []DeviceAllocationItem `json:"entries,omitempty"`
}

// DeviceAllocationItem records the devices held by one pod.
type DeviceAllocationItem struct {
	// Name is the pod name.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace is the pod namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// UUID is the pod UID.
	// +optional
	UUID string `json:"uuid,omitempty"`
	// Minors are the minor numbers of the devices held by the pod.
	// +optional
	Minors []int32 `json:"minors,omitempty"`
}

// Device describes the devices of one node. It is cluster-scoped and named after the node.
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Device struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the standard object metadata; the name is the node name.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec lists the devices of the node.
	// +optional
	Spec DeviceSpec `json:"spec,omitempty"`
	// Status records device allocations.
	// +optional
	Status DeviceStatus `json:"status,omitempty"`
}

// DeviceList is a list of Devices.
// +kubebuilder:object:root=true
type DeviceList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Devices.
	Items []Device `json:"items"`
}
