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

// ElasticQuotaProfileSpec is the desired state of an ElasticQuotaProfile.
type ElasticQuotaProfileSpec struct {
	// QuotaName is the name of the root ElasticQuota the profile creates and keeps up to date, in the
	// profile's namespace.
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	QuotaName string `json:"quotaName"`

	// QuotaLabels are labels copied onto the generated ElasticQuota.
	// +optional
	QuotaLabels map[string]string `json:"quotaLabels,omitempty"`

	// ResourceRatio scales the summed allocatable resources of the selected nodes to leave room for
	// fragmentation: with a total of 100 and a ratio of "0.9" the quota min is 90. It is a decimal number
	// written as a string ("0.9", "9e-1"), greater than 0 and at most 1. Unset means 1. Koordinator silently
	// uses 1 for a value it cannot parse or that is out of range; Koord rejects such values instead.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?$') && double(self) > 0.0 && double(self) <= 1.0",message="spec.resourceRatio must be a decimal number greater than 0 and at most 1, such as \"0.9\""
	// +optional
	ResourceRatio *string `json:"resourceRatio,omitempty"`

	// NodeSelector selects the nodes whose allocatable resources make up the quota.
	// +required
	// +kubebuilder:validation:Required
	NodeSelector *metav1.LabelSelector `json:"nodeSelector"`
}

// ElasticQuotaProfileStatus is the observed state of an ElasticQuotaProfile. It has no fields yet.
type ElasticQuotaProfileStatus struct{}

// ElasticQuotaProfile generates a root ElasticQuota whose min is the allocatable resources of a set of nodes
// (scaled by resourceRatio), which makes one quota tree per node pool.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=eqp
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Quota",type="string",JSONPath=".spec.quotaName",description="The generated ElasticQuota"
// +kubebuilder:printcolumn:name="Ratio",type="string",JSONPath=".spec.resourceRatio",description="The resource ratio"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ElasticQuotaProfile struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the profile.
	// +required
	Spec ElasticQuotaProfileSpec `json:"spec,omitempty"`
	// Status is the observed state of the profile.
	// +optional
	Status ElasticQuotaProfileStatus `json:"status,omitempty"`
}

// ElasticQuotaProfileList is a list of ElasticQuotaProfiles.
// +kubebuilder:object:root=true
type ElasticQuotaProfileList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ElasticQuotaProfiles.
	Items []ElasticQuotaProfile `json:"items"`
}
