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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ClusterColocationProfileSpec says which pods a profile applies to and what it injects into them when they
// are created. Profiles that match the same pod are applied in name order.
type ClusterColocationProfileSpec struct {
	// NamespaceSelector selects the pods by the labels of their namespace. Unset (or empty) matches every
	// namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// Selector selects the pods by their own labels. Unset (or empty) matches every pod.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Probability is the chance that the profile applies to a matching pod: an integer from 0 to 100, or a
	// string percentage from "0%" to "100%". Unset means always. Koordinator silently applies a profile with a
	// probability above 100 always and one below 0 never; Koord rejects such values instead.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? (self >= 0 && self <= 100) : self.matches('^0*(100|[1-9]?[0-9])%$')",message="probability must be an integer from 0 to 100 or a percentage from \"0%\" to \"100%\""
	// +optional
	Probability *intstr.IntOrString `json:"probability,omitempty"`

	// QoSClass is the Koordinator QoS class given to the pod, as label koordinator.sh/qosClass.
	// +kubebuilder:validation:Enum=LSE;LSR;LS;BE;SYSTEM
	// +optional
	QoSClass string `json:"qosClass,omitempty"`

	// PriorityClassName is the Kubernetes PriorityClass given to the pod; the pod's spec.priority is set from
	// it too. Koordinator ships koord-prod, koord-mid, koord-batch and koord-free.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// KoordinatorPriority is the pod's sub-priority within its priority class, given as label
	// koordinator.sh/priority. Higher is more important.
	// +optional
	KoordinatorPriority *int32 `json:"koordinatorPriority,omitempty"`

	// Labels are added to the pod's labels, overwriting existing keys.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are added to the pod's annotations, overwriting existing keys.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// LabelKeysMapping copies pod labels to new keys: for each entry k: v, the pod gets label v with the value
	// of its label k.
	// +optional
	LabelKeysMapping map[string]string `json:"labelKeysMapping,omitempty"`

	// AnnotationKeysMapping copies pod annotations to new keys: for each entry k: v, the pod gets annotation v
	// with the value of its annotation k.
	// +optional
	AnnotationKeysMapping map[string]string `json:"annotationKeysMapping,omitempty"`

	// LabelSuffixes appends suffixes to pod label values: for each entry k: s, the pod's label k becomes its
	// value followed by s.
	// +optional
	LabelSuffixes map[string]string `json:"labelSuffixes,omitempty"`

	// SchedulerName is the scheduler given to the pod, e.g. koord-scheduler.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Patch is a partial pod template (metadata and spec) merged into the pod as a strategic merge patch.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Patch runtime.RawExtension `json:"patch,omitempty"`
}

// ClusterColocationProfileStatus is the observed state of a ClusterColocationProfile. It has no fields yet.
type ClusterColocationProfileStatus struct{}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="QoSClass",type=string,JSONPath=`.spec.qosClass`,description="Koordinator QoS class given to the pods"
// +kubebuilder:printcolumn:name="PriorityClass",type=string,JSONPath=`.spec.priorityClassName`,description="PriorityClass given to the pods"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterColocationProfile selects pods at creation and gives them a Koordinator QoS class, priority,
// scheduler, labels and annotations, so that existing workloads can be colocated without changing their
// controllers. It is cluster-scoped.
type ClusterColocationProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which pods the profile applies to and what it injects.
	// +optional
	Spec ClusterColocationProfileSpec `json:"spec,omitempty"`
	// Status is empty.
	// +optional
	Status ClusterColocationProfileStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterColocationProfileList is a list of ClusterColocationProfile.
type ClusterColocationProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterColocationProfiles.
	Items []ClusterColocationProfile `json:"items"`
}
