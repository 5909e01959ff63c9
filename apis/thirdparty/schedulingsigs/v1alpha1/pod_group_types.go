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

// PodGroupLabel is the pod label whose value names the PodGroup (in the pod's namespace) the pod belongs to.
const PodGroupLabel = "pod-group." + GroupName

// PodGroupPhase is the phase of a PodGroup.
type PodGroupPhase string

const (
	// PodGroupPending means the group was accepted but the scheduler cannot yet place enough of its pods.
	PodGroupPending PodGroupPhase = "Pending"
	// PodGroupRunning means at least minMember pods of the group are running.
	PodGroupRunning PodGroupPhase = "Running"
	// PodGroupPreScheduling means the group's pods are waiting to be scheduled together.
	PodGroupPreScheduling PodGroupPhase = "PreScheduling"
	// PodGroupScheduling means some pods are scheduled but fewer than minMember are running.
	PodGroupScheduling PodGroupPhase = "Scheduling"
	// PodGroupScheduled means minMember pods have been scheduled.
	PodGroupScheduled PodGroupPhase = "Scheduled"
	// PodGroupUnknown means some of the minMember pods run while others cannot be scheduled.
	PodGroupUnknown PodGroupPhase = "Unknown"
	// PodGroupFinished means minMember pods finished successfully.
	PodGroupFinished PodGroupPhase = "Finished"
	// PodGroupFailed means at least one of the minMember pods failed.
	PodGroupFailed PodGroupPhase = "Failed"
)

// PodGroupSpec is the gang requirement of a PodGroup.
type PodGroupSpec struct {
	// MinMember is the minimum number of pods that must be schedulable together; the scheduler places none of
	// them until that many fit.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinMember int32 `json:"minMember,omitempty"`

	// MinResources is the minimum total resources the group needs before any of its pods is placed.
	// +optional
	MinResources corev1.ResourceList `json:"minResources,omitempty"`

	// ScheduleTimeoutSeconds is how long, in seconds, group members wait for the whole group to be
	// schedulable before they are rejected. Unset means the scheduler's default (600 seconds in Koordinator).
	// +kubebuilder:validation:Minimum=0
	// +optional
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// PodGroupStatus is the observed state of a PodGroup.
type PodGroupStatus struct {
	// Phase is the current phase of the group.
	// +kubebuilder:validation:Enum=Pending;Running;PreScheduling;Scheduling;Scheduled;Unknown;Finished;Failed
	// +optional
	Phase PodGroupPhase `json:"phase,omitempty"`

	// OccupiedBy is the UID of the workload (such as a Deployment) that owns the group; empty until set.
	// +optional
	OccupiedBy string `json:"occupiedBy,omitempty"`

	// Scheduled is the number of pods of the group that have been scheduled.
	// +optional
	Scheduled int32 `json:"scheduled,omitempty"`

	// Running is the number of pods of the group that are running.
	// +optional
	Running int32 `json:"running,omitempty"`

	// Succeeded is the number of pods of the group that reached phase Succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is the number of pods of the group that reached phase Failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// ScheduleStartTime is when scheduling of the group started.
	// +optional
	ScheduleStartTime metav1.Time `json:"scheduleStartTime,omitempty"`
}

// PodGroup is a set of pods that must be scheduled together (gang scheduling). Pods join it with the
// pod-group.scheduling.sigs.k8s.io label.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName={pg,pgs}
// +kubebuilder:subresource:status
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubernetes-sigs/scheduler-plugins/pull/50"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="The current phase of the PodGroup"
// +kubebuilder:printcolumn:name="MinMember",type="integer",JSONPath=".spec.minMember",description="The minimum number of pods scheduled together"
// +kubebuilder:printcolumn:name="Running",type="integer",JSONPath=".status.running",description="The number of running pods"
// +kubebuilder:printcolumn:name="Succeeded",type="integer",JSONPath=".status.succeeded",description="The number of succeeded pods"
// +kubebuilder:printcolumn:name="Failed",type="integer",JSONPath=".status.failed",description="The number of failed pods"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type PodGroup struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the gang requirement of the group.
	// +optional
	Spec PodGroupSpec `json:"spec,omitempty"`
	// Status is the observed state of the group; it may lag behind.
	// +optional
	Status PodGroupStatus `json:"status,omitempty"`
}

// PodGroupList is a list of PodGroups.
// +kubebuilder:object:root=true
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PodGroups.
	Items []PodGroup `json:"items"`
}
