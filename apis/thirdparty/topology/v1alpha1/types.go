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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeResourceTopology describes a node's resources by topology zone (NUMA node, socket, ...). It is
// cluster-scoped and named like its node. koordlet writes it (topologyPolicies, zones and Koordinator's
// node.koordinator.sh/cpu-topology, cpu-shared-pools, be-cpu-shared-pools, pod-cpu-allocs and
// kubelet.koordinator.sh/cpu-manager-policy annotations); koord-scheduler's NodeNUMAResource reads it.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=node-res-topo
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubernetes/enhancements/pull/1870"
type NodeResourceTopology struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// TopologyPolicies are the node's NUMA topology policies (kubelet topology manager's, or Koordinator's
	// node.koordinator.sh/numa-topology-policy label), e.g. "None", "SingleNUMANodeContainerLevel".
	TopologyPolicies []string `json:"topologyPolicies"`
	// Zones are the node's topology zones with their resources.
	Zones ZoneList `json:"zones"`
}

// ZoneList is a list of zones.
type ZoneList []Zone

// Zone is a topology domain of the node: a NUMA node (type "Node", named "node-<id>"), a socket, a die.
type Zone struct {
	// Name identifies the zone on the node, e.g. node-0.
	Name string `json:"name"`
	// Type is the kind of domain, e.g. Node.
	Type string `json:"type"`
	// Parent is the name of the zone that contains this one.
	// +optional
	Parent string `json:"parent,omitempty"`
	// Costs are the distances to other zones.
	// +optional
	Costs CostList `json:"costs,omitempty"`
	// Attributes are further properties of the zone.
	// +optional
	Attributes AttributeList `json:"attributes,omitempty"`
	// Resources are the zone's resources.
	// +optional
	Resources ResourceInfoList `json:"resources,omitempty"`
}

// CostList is a list of costs.
type CostList []CostInfo

// CostInfo is the distance to another zone.
type CostInfo struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// AttributeList is a list of attributes.
type AttributeList []AttributeInfo

// AttributeInfo is a named property.
type AttributeInfo struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ResourceInfoList is a list of resources.
type ResourceInfoList []ResourceInfo

// ResourceInfo is one resource of a zone.
type ResourceInfo struct {
	// Name is the resource name, e.g. cpu.
	Name string `json:"name"`
	// Capacity is what the zone has.
	Capacity resource.Quantity `json:"capacity"`
	// Allocatable is what pods may use of it, like a node's allocatable.
	Allocatable resource.Quantity `json:"allocatable"`
	// Available is what is left for new pods: allocatable less what running pods hold.
	Available resource.Quantity `json:"available"`
}

// NodeResourceTopologyList is a list of NodeResourceTopology.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type NodeResourceTopologyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`

	Items []NodeResourceTopology `json:"items"`
}
