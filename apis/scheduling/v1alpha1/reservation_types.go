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

// ReservationSpec is the desired state of a Reservation: which resources to hold (template), for whom (owners)
// and for how long (ttl/expires).
type ReservationSpec struct {
	// Template describes the scheduling requirements of the reservation (resource requests, affinities,
	// tolerations, node selector, ...). The scheduler places the reservation as if it were a pod built from this
	// template. If template.spec.nodeName is set, resources are reserved on that node only.
	// The field is stored without a schema (unknown fields are preserved), as in Koordinator.
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *corev1.PodTemplateSpec `json:"template"`

	// Owners lists who may allocate the reserved resources. The entries are ORed; the selectors inside one
	// entry are ANDed. At least one entry is required.
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinItems=1
	Owners []ReservationOwner `json:"owners"`

	// TTL is how long the reservation stays valid after creation, as a duration string such as "1h" or "30m".
	// Defaults to 24h; "0s" disables expiration. ttl and expires are meant to be alternatives: when both are
	// set, expires is checked first.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="must be a duration that Go's time.ParseDuration reads, at most about 290 years"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$`
	// +kubebuilder:default="24h"
	// +optional
	TTL *metav1.Duration `json:"ttl,omitempty"`

	// Expires is the absolute time (RFC 3339) at which the reservation expires. When unset the expiry is
	// derived from ttl.
	// +optional
	Expires *metav1.Time `json:"expires,omitempty"`

	// PreAllocation lets the reservation be scheduled onto a node whose free resources are not yet
	// sufficient, taking over the resources of running pods (pre-allocatable pods, see
	// PreAllocationPolicy): they become owners that allocate it, so what they leave when they end stays
	// reserved. It needs allocatePolicy Restricted. The reservation is Available once placed, as in
	// Koordinator. Defaults to false.
	// +optional
	PreAllocation bool `json:"preAllocation,omitempty"`

	// AllocateOnce makes the reserved resources available to the first owner that allocates them only; the
	// reservation then becomes Succeeded. Defaults to true.
	// +kubebuilder:default=true
	// +optional
	AllocateOnce *bool `json:"allocateOnce,omitempty"`

	// AllocatePolicy is how an owner pod combines reserved and node resources: Aligned or Restricted.
	// The empty value is deprecated and behaves like Aligned.
	// +kubebuilder:validation:Enum="";Aligned;Restricted
	// +optional
	AllocatePolicy ReservationAllocatePolicy `json:"allocatePolicy,omitempty"`

	// Unschedulable stops new owner pods from being placed on the reservation. Defaults to false.
	// +optional
	Unschedulable bool `json:"unschedulable,omitempty"`

	// Taints are the reservation's taints; an owner pod must tolerate them to use the reservation.
	// The NoExecute effect does not evict pods.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// PreAllocationPolicy tunes how pre-allocation selects the running pods whose resources it takes over.
	// Only meaningful with preAllocation set.
	// +optional
	PreAllocationPolicy *ReservationPreAllocationPolicy `json:"preAllocationPolicy,omitempty"`
}

// ReservationAllocatePolicy is the policy by which owner pods allocate reserved resources.
type ReservationAllocatePolicy string

const (
	// ReservationAllocatePolicyDefault is the empty policy. Deprecated: it is treated as Aligned.
	ReservationAllocatePolicyDefault ReservationAllocatePolicy = ""
	// ReservationAllocatePolicyAligned allocates from the reservation first and takes any remainder from the
	// node, while the pod must still follow its own resource specification exactly.
	ReservationAllocatePolicyAligned ReservationAllocatePolicy = "Aligned"
	// ReservationAllocatePolicyRestricted requires resources that the pod requests and the reservation
	// reserves to come from the reservation only; other resources may come from the node. It implies Aligned.
	ReservationAllocatePolicyRestricted ReservationAllocatePolicy = "Restricted"
)

// ReservationPreAllocationPolicy configures pre-allocation.
type ReservationPreAllocationPolicy struct {
	// Mode selects which running pods may be pre-allocated: Default uses the reservation's owners, Cluster
	// uses the cluster-wide pre-allocatable pod label and priority annotation. Defaults to Default.
	// +kubebuilder:validation:Enum=Default;Cluster
	// +kubebuilder:default=Default
	// +optional
	Mode ReservationPreAllocationMode `json:"mode,omitempty"`

	// EnableMultiple allows several running pods to be pre-allocated together to cover the reservation.
	// When false, at most one pod is pre-allocated. Defaults to false.
	// +kubebuilder:default=false
	// +optional
	EnableMultiple bool `json:"enableMultiple,omitempty"`
}

// ReservationPreAllocationMode is how pre-allocatable pods are chosen.
type ReservationPreAllocationMode string

const (
	// ReservationPreAllocationModeDefault selects pre-allocatable pods by the reservation's owners.
	ReservationPreAllocationModeDefault ReservationPreAllocationMode = "Default"
	// ReservationPreAllocationModeCluster selects pre-allocatable pods by cluster-wide labels and annotations.
	ReservationPreAllocationModeCluster ReservationPreAllocationMode = "Cluster"
)

// ReservationTemplateSpec is the metadata and spec of a Reservation to be created from a template, for example
// by a PodMigrationJob.
type ReservationTemplateSpec struct {
	// ObjectMeta is the metadata of the Reservation to create.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the spec of the Reservation to create.
	// +optional
	Spec ReservationSpec `json:"spec,omitempty"`
}

// ReservationOwner selects pods that may allocate a reservation. All fields that are set must match (AND); at
// least one must be set.
// +kubebuilder:validation:MinProperties=1
type ReservationOwner struct {
	// Object matches one specific object, such as a pod, by reference.
	// +optional
	Object *corev1.ObjectReference `json:"object,omitempty"`

	// Controller matches pods controlled by the referenced workload.
	// +optional
	Controller *ReservationControllerReference `json:"controller,omitempty"`

	// LabelSelector matches pods by their labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// ReservationControllerReference is an owner reference to a controller, extended with its namespace so that a
// cluster-scoped Reservation can name a namespaced workload.
type ReservationControllerReference struct {
	// OwnerReference identifies the controller object.
	metav1.OwnerReference `json:",inline"`

	// Namespace is the namespace of the controller object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ReservationStatus is the observed state of a Reservation.
type ReservationStatus struct {
	// Phase is the lifecycle phase of the reservation: Pending, Available, Succeeded, Waiting or Failed.
	// +kubebuilder:validation:Enum=Pending;Available;Succeeded;Waiting;Failed
	// +kubebuilder:default=Pending
	// +optional
	Phase ReservationPhase `json:"phase,omitempty"`

	// Conditions explain the current phase, such as why the reservation is still pending.
	// +optional
	Conditions []ReservationCondition `json:"conditions,omitempty"`

	// CurrentOwners are the objects currently holding resources of this reservation.
	// +optional
	CurrentOwners []corev1.ObjectReference `json:"currentOwners,omitempty"`

	// NodeName is the node the reservation is scheduled on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Allocatable is the total of the reserved resources that owners may allocate.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// Allocated is the part of allocatable currently used by the current owners.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
}

// ReservationPhase is the lifecycle phase of a Reservation.
type ReservationPhase string

const (
	// ReservationPending means the reservation has not been scheduled yet, or cannot be scheduled for now.
	ReservationPending ReservationPhase = "Pending"
	// ReservationAvailable means the reservation is scheduled and its resources can be allocated.
	ReservationAvailable ReservationPhase = "Available"
	// ReservationSucceeded means the reservation was allocated by an owner and accepts no further owners.
	ReservationSucceeded ReservationPhase = "Succeeded"
	// ReservationWaiting means the reservation is scheduled but its resources are not free yet. Kept from
	// Koordinator's API; neither Koordinator's scheduler nor Koord's sets it (a pre-allocating reservation is
	// Available once placed).
	ReservationWaiting ReservationPhase = "Waiting"
	// ReservationFailed means the reservation expired or became unavailable; it is garbage-collected later.
	ReservationFailed ReservationPhase = "Failed"
)

// ReservationConditionType is the type of a ReservationCondition.
type ReservationConditionType string

const (
	// ReservationConditionScheduled tells whether the reservation has been scheduled to a node.
	ReservationConditionScheduled ReservationConditionType = "Scheduled"
	// ReservationConditionReady tells whether the reserved resources are ready to be allocated.
	ReservationConditionReady ReservationConditionType = "Ready"
)

// ConditionStatus is the status of a ReservationCondition.
type ConditionStatus string

const (
	// ConditionStatusTrue means the condition holds.
	ConditionStatusTrue ConditionStatus = "True"
	// ConditionStatusFalse means the condition does not hold.
	ConditionStatusFalse ConditionStatus = "False"
	// ConditionStatusUnknown means it is not known whether the condition holds.
	ConditionStatusUnknown ConditionStatus = "Unknown"
)

const (
	// ReasonReservationScheduled is the reason of the Scheduled condition once the reservation is placed.
	ReasonReservationScheduled = "Scheduled"
	// ReasonReservationUnschedulable is the reason of the Scheduled condition while no node fits.
	ReasonReservationUnschedulable = "Unschedulable"
	// ReasonReservationAvailable is the reason of the Ready condition while the reservation can be allocated.
	ReasonReservationAvailable = "Available"
	// ReasonReservationSucceeded is the reason of the Ready condition after the reservation was used up.
	ReasonReservationSucceeded = "Succeeded"
	// ReasonReservationExpired is the reason of the Ready condition after the reservation expired.
	ReasonReservationExpired = "Expired"
)

// ReservationCondition is one observation about the state of a Reservation.
type ReservationCondition struct {
	// Type is the kind of condition, such as Scheduled or Ready.
	// +optional
	Type ReservationConditionType `json:"type,omitempty"`
	// Status is True, False or Unknown.
	// +optional
	Status ConditionStatus `json:"status,omitempty"`
	// Reason is a one-word CamelCase reason for the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable explanation of the last transition.
	// +optional
	Message string `json:"message,omitempty"`
	// LastProbeTime is when the condition was last checked.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// Reservation reserves node resources for pods that may not exist yet. It is cluster-scoped; namespaced
// affinities for placing it go into spec.template.
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="The phase of the reservation"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Node",type="string",JSONPath=".status.nodeName",description="The node the reservation is scheduled on"
// +kubebuilder:printcolumn:name="TTL",type="string",JSONPath=".spec.ttl"
// +kubebuilder:printcolumn:name="Expires",type="string",JSONPath=".spec.expires"
type Reservation struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the reservation.
	// +required
	Spec ReservationSpec `json:"spec,omitempty"`
	// Status is the observed state of the reservation.
	// +optional
	Status ReservationStatus `json:"status,omitempty"`
}

// ReservationList is a list of Reservations.
// +kubebuilder:object:root=true
type ReservationList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Reservations.
	Items []Reservation `json:"items"`
}
