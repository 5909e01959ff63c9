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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TopologyLayer names a layer of the network topology, such as a spine or a block of switches.
type TopologyLayer string

const (
	// ClusterTopologyLayer is the root of the topology tree: the whole cluster. Specs do not list it.
	ClusterTopologyLayer TopologyLayer = "ClusterTopologyLayer"
	// NodeTopologyLayer is the leaf layer: a node, named by the node's name. Every spec lists it.
	NodeTopologyLayer TopologyLayer = "NodeTopologyLayer"
)

// DefaultClusterNetworkTopologyName is the name of the one ClusterNetworkTopology koord-scheduler reads.
const DefaultClusterNetworkTopologyName = "default"

// ClusterNetworkTopology describes the layers of the cluster's network (for example spine, block, node) and
// the node labels that name each node's domain in them. koord-scheduler reads the one named "default" to
// place gangs that ask for it in as few domains as possible, and writes the domains it found into the status.
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cnt
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterNetworkTopology struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec lists the topology layers.
	// +optional
	Spec ClusterNetworkTopologySpec `json:"spec,omitempty"`
	// Status lists the topology domains found on the cluster's nodes.
	// +optional
	Status ClusterNetworkTopologyStatus `json:"status,omitempty"`
}

// ClusterNetworkTopologySpec lists the layers of the topology.
type ClusterNetworkTopologySpec struct {
	// NetworkTopologySpec are the layers, each naming its parent; they form one chain from NodeTopologyLayer
	// up to the layer whose parent is the cluster.
	// +kubebuilder:validation:MinItems=1
	NetworkTopologySpec []NetworkTopologySpec `json:"networkTopologySpec"`
}

// NetworkTopologySpec is one layer of the topology.
type NetworkTopologySpec struct {
	// TopologyLayer names the layer.
	// +kubebuilder:validation:MinLength=1
	TopologyLayer TopologyLayer `json:"topologyLayer"`
	// ParentTopologyLayer names the layer above; empty (or ClusterTopologyLayer) for the top layer.
	// +optional
	ParentTopologyLayer TopologyLayer `json:"parentTopologyLayer,omitempty"`
	// LabelKey are node labels that name a node's domain in this layer: the first of them the node has
	// decides. NodeTopologyLayer needs none (the node's name).
	// +optional
	LabelKey []string `json:"labelKey,omitempty"`
}

// ClusterNetworkTopologyStatus lists the domains of the topology, as koord-scheduler found them.
type ClusterNetworkTopologyStatus struct {
	// DetailStatus has one entry per domain above the node layer (the cluster included).
	// +optional
	DetailStatus []ClusterNetworkTopologyDetailStatus `json:"detailStatus,omitempty"`
}

// ClusterNetworkTopologyDetailStatus is one domain of the topology.
type ClusterNetworkTopologyDetailStatus struct {
	// TopologyInfo names the domain.
	TopologyInfo TopologyInfo `json:"topologyInfo"`
	// ParentTopologyInfo names the domain above it; unset for the cluster.
	// +optional
	ParentTopologyInfo *TopologyInfo `json:"parentTopologyInfo,omitempty"`
	// ChildTopologyLayer is the layer of the domains below it.
	// +optional
	ChildTopologyLayer TopologyLayer `json:"childTopologyLayer,omitempty"`
	// ChildTopologyNames are the domains below it, sorted; left out when they are nodes.
	// +optional
	ChildTopologyNames []string `json:"childTopologyNames,omitempty"`
	// NodeNum is the number of nodes in the domain.
	NodeNum int32 `json:"nodeNum"`
}

// TopologyInfo names a domain: its layer and its name in the layer.
type TopologyInfo struct {
	// TopologyLayer is the domain's layer.
	TopologyLayer TopologyLayer `json:"topologyLayer"`
	// TopologyName is the domain's name: the value of the layer's node label.
	TopologyName string `json:"topologyName"`
}

// ClusterNetworkTopologyList is a list of ClusterNetworkTopologies.
// +kubebuilder:object:root=true
type ClusterNetworkTopologyList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterNetworkTopologies.
	Items []ClusterNetworkTopology `json:"items"`
}
