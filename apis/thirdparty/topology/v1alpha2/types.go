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

package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
)

// NodeResourceTopology is v1alpha1.NodeResourceTopology in the community API's v1alpha2, its storage version.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=node-res-topo
// +kubebuilder:storageversion
type NodeResourceTopology struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// TopologyPolicies is deprecated in v1alpha2; attributes carry the policy instead.
	// +optional
	TopologyPolicies []string `json:"topologyPolicies,omitempty"`
	// Zones are the node's topology zones with their resources.
	Zones v1alpha1.ZoneList `json:"zones"`
	// Attributes are node-level properties, e.g. topologyManagerPolicy.
	// +optional
	Attributes v1alpha1.AttributeList `json:"attributes,omitempty"`
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
