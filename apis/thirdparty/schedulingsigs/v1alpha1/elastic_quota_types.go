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

// ElasticQuotaSpec is the guaranteed (min) and maximal (max) resources of a quota.
//
// The rule below compares min and max per resource with the CEL quantity library. Values of a ResourceList are
// int-or-string, so integers are turned into quantities with quantity('0').add(v) and strings are parsed with
// quantity(v). The apiserver estimates each parse at the cost of the largest string a request could hold, so
// min is capped at 15 resources to keep the rule within the per-expression cost budget.
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min.all(k, !(k in self.max) || (type(self.min[k]) == int ? quantity('0').add(self.min[k]) : quantity(self.min[k])).compareTo(type(self.max[k]) == int ? quantity('0').add(self.max[k]) : quantity(self.max[k])) <= 0)",message="spec.min must not exceed spec.max for any resource set in both",fieldPath=".min"
type ElasticQuotaSpec struct {
	// Min is the guaranteed amount of each named resource; unused min may be lent to sibling quotas. For every
	// resource also present in max, min must not exceed max. At most 15 resources.
	// +kubebuilder:validation:MaxProperties=15
	// +optional
	Min corev1.ResourceList `json:"min,omitempty"`

	// Max is the upper limit of each named resource, measured on the requests of scheduled pods. Resources
	// not listed are not limited by this quota.
	// +optional
	Max corev1.ResourceList `json:"max,omitempty"`
}

// ElasticQuotaStatus is the observed use of a quota.
type ElasticQuotaStatus struct {
	// Used is the sum of the resource requests of the pods admitted to the quota (not their actual usage).
	// +optional
	Used corev1.ResourceList `json:"used,omitempty"`
}

// ElasticQuota sets elastic min/max resource limits for a group of pods. Quotas form trees through the
// quota.scheduling.koordinator.sh/parent label.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName={eq,eqs}
// +kubebuilder:subresource:status
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubernetes-sigs/scheduler-plugins/pull/52"
// +kubebuilder:printcolumn:name="Used",type="string",JSONPath=".status.used",description="The total requests of admitted pods"
// +kubebuilder:printcolumn:name="Min",type="string",JSONPath=".spec.min",description="The guaranteed resources"
// +kubebuilder:printcolumn:name="Max",type="string",JSONPath=".spec.max",description="The resource limits"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ElasticQuota struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the min and max of the quota.
	// +optional
	Spec ElasticQuotaSpec `json:"spec,omitempty"`
	// Status holds the observed use of the quota.
	// +optional
	Status ElasticQuotaStatus `json:"status,omitempty"`
}

// ElasticQuotaList is a list of ElasticQuotas.
// +kubebuilder:object:root=true
type ElasticQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ElasticQuotas.
	Items []ElasticQuota `json:"items"`
}
