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

// PodMigrationJobSpec is the desired state of a PodMigrationJob.
type PodMigrationJobSpec struct {
	// Paused stops the job from making progress while true. Defaults to false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// TTL bounds how long the job may run, as a duration string such as "5m". When it elapses the job fails
	// with reason Timeout. Unset means the controller's default timeout.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="must be a duration that Go's time.ParseDuration reads, at most about 290 years"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	TTL *metav1.Duration `json:"ttl,omitempty"`

	// Mode is how the pod is migrated: ReservationFirst reserves resources for the replacement pod before
	// evicting the original; EvictDirectly evicts without a reservation. Empty means ReservationFirst.
	// +kubebuilder:validation:Enum="";ReservationFirst;EvictDirectly
	// +optional
	Mode PodMigrationJobMode `json:"mode,omitempty"`

	// PodRef references the pod to migrate.
	// +required
	// +kubebuilder:validation:Required
	PodRef *corev1.ObjectReference `json:"podRef"`

	// ReservationOptions configures the reservation made for the replacement pod in ReservationFirst mode.
	// +optional
	ReservationOptions *PodMigrateReservationOptions `json:"reservationOptions,omitempty"`

	// DeleteOptions are used when evicting or deleting the migrated pod and any preempted pods.
	// +optional
	DeleteOptions *metav1.DeleteOptions `json:"deleteOptions,omitempty"`
}

// PodMigrationJobMode is the operating mode of a PodMigrationJob.
type PodMigrationJobMode string

const (
	// PodMigrationJobModeReservationFirst reserves resources before evicting the pod. It is the default.
	PodMigrationJobModeReservationFirst PodMigrationJobMode = "ReservationFirst"
	// PodMigrationJobModeEvictionDirectly evicts the pod without reserving resources first.
	PodMigrationJobModeEvictionDirectly PodMigrationJobMode = "EvictDirectly"
)

// PodMigrateReservationOptions configures the Reservation used by a PodMigrationJob.
type PodMigrateReservationOptions struct {
	// ReservationRef references an existing Reservation to use; the job waits until it is Available. When
	// unset, the controller creates a Reservation from template and records it here.
	// +optional
	ReservationRef *corev1.ObjectReference `json:"reservationRef,omitempty"`

	// Template describes the Reservation to create when reservationRef is unset. It is stored without a
	// schema (unknown fields are preserved), as in Koordinator.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *ReservationTemplateSpec `json:"template,omitempty"`

	// PreemptionOptions, when set, allows preempting other pods to make room; preempted pods get
	// reservations of their own.
	// +optional
	PreemptionOptions *PodMigrationJobPreemptionOptions `json:"preemptionOptions,omitempty"`
}

// PodMigrationJobPreemptionOptions enables preemption for a PodMigrationJob. It has no fields yet.
type PodMigrationJobPreemptionOptions struct{}

// PodMigrationJobStatus is the observed state of a PodMigrationJob.
type PodMigrationJobStatus struct {
	// Phase is the high-level lifecycle phase: Pending, Running, Succeeded, Failed or Aborted.
	// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Aborted
	// +optional
	Phase PodMigrationJobPhase `json:"phase,omitempty"`
	// Status is the current step of the job, such as ReservationCreated.
	// +optional
	Status string `json:"status,omitempty"`
	// Reason is a one-word CamelCase reason for the current state.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable explanation of the current state.
	// +optional
	Message string `json:"message,omitempty"`
	// Conditions record the steps the job went through.
	// +optional
	Conditions []PodMigrationJobCondition `json:"conditions,omitempty"`
	// NodeName is the node the replacement pod is placed on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// PodRef references the replacement pod created after migration.
	// +optional
	PodRef *corev1.ObjectReference `json:"podRef,omitempty"`
	// PreemptedPodsRef references the pods preempted by the job.
	// +optional
	PreemptedPodsRef []corev1.ObjectReference `json:"preemptedPodsRef,omitempty"`
	// PreemptedPodsReservations records the reservations created for preempted pods.
	// +optional
	PreemptedPodsReservations []PodMigrationJobPreemptedReservation `json:"preemptedPodsReservation,omitempty"`
}

// PodMigrationJobPreemptedReservation records a Reservation created for a preempted pod.
type PodMigrationJobPreemptedReservation struct {
	// Namespace is the namespace of the Reservation.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of the Reservation.
	// +optional
	Name string `json:"name,omitempty"`
	// NodeName is the node the Reservation was scheduled on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// Phase is the phase of the Reservation.
	// +optional
	Phase string `json:"phase,omitempty"`
	// PreemptedPodRef references the preempted pod.
	// +optional
	PreemptedPodRef *corev1.ObjectReference `json:"preemptedPodRef,omitempty"`
	// PodsRef references the pods created to replace the preempted pod.
	// +optional
	PodsRef []corev1.ObjectReference `json:"podsRef,omitempty"`
}

// PodMigrationJobCondition is one observation about the progress of a PodMigrationJob.
type PodMigrationJobCondition struct {
	// Type is the kind of condition, such as ReservationCreated or Eviction.
	Type PodMigrationJobConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status PodMigrationJobConditionStatus `json:"status"`
	// LastProbeTime is when the condition was last checked.
	// +nullable
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// LastTransitionTime is when the status last changed.
	// +nullable
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a one-word CamelCase reason for the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable explanation of the last transition.
	// +optional
	Message string `json:"message,omitempty"`
}

// PodMigrationJobPhase is the lifecycle phase of a PodMigrationJob.
type PodMigrationJobPhase string

const (
	// PodMigrationJobPending means the job has not started yet.
	PodMigrationJobPending PodMigrationJobPhase = "Pending"
	// PodMigrationJobRunning means the job is in progress.
	PodMigrationJobRunning PodMigrationJobPhase = "Running"
	// PodMigrationJobSucceeded means the pod was migrated.
	PodMigrationJobSucceeded PodMigrationJobPhase = "Succeeded"
	// PodMigrationJobFailed means the job failed, for example by timeout or a failed reservation.
	PodMigrationJobFailed PodMigrationJobPhase = "Failed"
	// PodMigrationJobAborted means a user aborted the job.
	PodMigrationJobAborted PodMigrationJobPhase = "Aborted"
)

// PodMigrationJobConditionType is the type of a PodMigrationJobCondition.
type PodMigrationJobConditionType string

const (
	// PodMigrationJobConditionReservationCreated tells whether the reservation was created.
	PodMigrationJobConditionReservationCreated PodMigrationJobConditionType = "ReservationCreated"
	// PodMigrationJobConditionReservationScheduled tells whether the reservation was scheduled.
	PodMigrationJobConditionReservationScheduled PodMigrationJobConditionType = "ReservationScheduled"
	// PodMigrationJobConditionPreemption tells the state of preempting other pods.
	PodMigrationJobConditionPreemption PodMigrationJobConditionType = "Preemption"
	// PodMigrationJobConditionEviction tells the state of evicting the migrated pod.
	PodMigrationJobConditionEviction PodMigrationJobConditionType = "Eviction"
	// PodMigrationJobConditionPodScheduled tells whether the replacement pod was scheduled.
	PodMigrationJobConditionPodScheduled PodMigrationJobConditionType = "PodScheduled"
	// PodMigrationJobConditionReservationPodBoundReservation tells whether the replacement pod is bound to
	// the reservation.
	PodMigrationJobConditionReservationPodBoundReservation PodMigrationJobConditionType = "PodBoundReservation"
	// PodMigrationJobConditionReservationBound tells whether the reservation has been bound.
	PodMigrationJobConditionReservationBound PodMigrationJobConditionType = "ReservationBound"
)

const (
	// PodMigrationJobReasonTimeout means the job exceeded its ttl.
	PodMigrationJobReasonTimeout = "Timeout"
	// PodMigrationJobReasonFailedCreateReservation means creating the reservation failed.
	PodMigrationJobReasonFailedCreateReservation = "FailedCreateReservation"
	// PodMigrationJobReasonInvalidReservation means the referenced reservation cannot be used.
	PodMigrationJobReasonInvalidReservation = "InvalidReservation"
	// PodMigrationJobReasonUnschedulable means the reservation or replacement pod cannot be scheduled.
	PodMigrationJobReasonUnschedulable = "Unschedulable"
	// PodMigrationJobReasonMissingPod means the pod to migrate does not exist.
	PodMigrationJobReasonMissingPod = "MissingPod"
	// PodMigrationJobReasonMissingReservation means the referenced reservation does not exist.
	PodMigrationJobReasonMissingReservation = "MissingReservation"
	// PodMigrationJobReasonPreempting means other pods are being preempted.
	PodMigrationJobReasonPreempting = "Preempting"
	// PodMigrationJobReasonPreemptComplete means preemption finished.
	PodMigrationJobReasonPreemptComplete = "PreemptComplete"
	// PodMigrationJobReasonEvicting means the pod is being evicted.
	PodMigrationJobReasonEvicting = "Evicting"
	// PodMigrationJobReasonFailedEvict means evicting the pod failed.
	PodMigrationJobReasonFailedEvict = "FailedEvict"
	// PodMigrationJobReasonEvictComplete means the pod was evicted.
	PodMigrationJobReasonEvictComplete = "EvictComplete"
	// PodMigrationJobReasonWaitForPodBindReservation means the job waits for the replacement pod to bind to
	// the reservation.
	PodMigrationJobReasonWaitForPodBindReservation = "WaitForPodBindReservation"
)

// PodMigrationJobConditionStatus is the status of a PodMigrationJobCondition.
type PodMigrationJobConditionStatus string

const (
	// PodMigrationJobConditionStatusTrue means the condition holds.
	PodMigrationJobConditionStatusTrue PodMigrationJobConditionStatus = "True"
	// PodMigrationJobConditionStatusFalse means the condition does not hold.
	PodMigrationJobConditionStatusFalse PodMigrationJobConditionStatus = "False"
	// PodMigrationJobConditionStatusUnknown means it is not known whether the condition holds.
	PodMigrationJobConditionStatusUnknown PodMigrationJobConditionStatus = "Unknown"
)

// PodMigrationJob migrates one pod safely: it optionally reserves resources for a replacement, evicts the pod
// and tracks the replacement. It is cluster-scoped.
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=pmj
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="The phase of the PodMigrationJob"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.status",description="The current step of the PodMigrationJob"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Node",type="string",JSONPath=".status.nodeName"
// +kubebuilder:printcolumn:name="Reservation",type="string",JSONPath=".spec.reservationOptions.reservationRef.name"
// +kubebuilder:printcolumn:name="PodNamespace",type="string",JSONPath=".spec.podRef.namespace"
// +kubebuilder:printcolumn:name="Pod",type="string",JSONPath=".spec.podRef.name"
// +kubebuilder:printcolumn:name="NewPod",type="string",JSONPath=".status.podRef.name"
// +kubebuilder:printcolumn:name="TTL",type="string",JSONPath=".spec.ttl"
type PodMigrationJob struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the job.
	// +required
	Spec PodMigrationJobSpec `json:"spec,omitempty"`
	// Status is the observed state of the job.
	// +optional
	Status PodMigrationJobStatus `json:"status,omitempty"`
}

// PodMigrationJobList is a list of PodMigrationJobs.
// +kubebuilder:object:root=true
type PodMigrationJobList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PodMigrationJobs.
	Items []PodMigrationJob `json:"items"`
}
