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

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReservationArgs configures the Reservation plugin and its controller. See SetDefaults_ReservationArgs for
// the defaults.
type ReservationArgs struct {
	metav1.TypeMeta `json:",inline"`

	// EnablePreemption lets the reserve pod of a Reservation preempt lower-priority pods. Defaults to false.
	EnablePreemption *bool `json:"enablePreemption,omitempty"`
	// MinCandidateNodesPercentage is accepted for Koordinator compatibility; kube-scheduler's
	// DefaultPreemption has its own. Must be in [0, 100]. Defaults to 10.
	MinCandidateNodesPercentage *int32 `json:"minCandidateNodesPercentage,omitempty"`
	// MinCandidateNodesAbsolute is accepted for Koordinator compatibility. Must be at least 0. Defaults to 100.
	MinCandidateNodesAbsolute *int32 `json:"minCandidateNodesAbsolute,omitempty"`
	// ControllerWorkers is the number of workers of the reservation controller. Defaults to 1.
	ControllerWorkers *int32 `json:"controllerWorkers,omitempty"`
	// GCDurationSeconds is how long a Succeeded or Failed Reservation is kept before it is deleted. 0 (or
	// unset) means 86400 (one day), as in Koordinator.
	GCDurationSeconds int64 `json:"gcDurationSeconds,omitempty"`
	// GCIntervalSeconds is how often the controller looks for Reservations to delete. Defaults to 60.
	GCIntervalSeconds *int64 `json:"gcIntervalSeconds,omitempty"`
	// DisableGarbageCollection keeps Succeeded and Failed Reservations instead of deleting them
	// gcDurationSeconds after they ended. Defaults to false.
	DisableGarbageCollection bool `json:"disableGarbageCollection,omitempty"`
	// ResyncIntervalSeconds is how often the controller re-checks every Reservation. Defaults to 60.
	ResyncIntervalSeconds *int64 `json:"resyncIntervalSeconds,omitempty"`
	// IgnoredResources are resources a Reservation never holds: they are left out of its allocatable.
	IgnoredResources []corev1.ResourceName `json:"ignoredResources,omitempty"`
	// PreAllocationConfig configures Reservation pre-allocation (spec.preAllocation): its Cluster mode and
	// the preference for nodes where a Reservation takes no running pod's resources.
	PreAllocationConfig *PreAllocationConfig `json:"preAllocationConfig,omitempty"`
}

// PreAllocationConfig configures the cluster mode of Reservation pre-allocation.
type PreAllocationConfig struct {
	// EnableClusterMode lets Reservations with preAllocationPolicy.mode Cluster be placed, taking the
	// resources of pods labelled clusterLabelKey=true. Defaults to false: such Reservations stay Pending.
	EnableClusterMode bool `json:"enableClusterMode,omitempty"`
	// ClusterLabelKey is the label marking pods as pre-allocatable; empty means Koordinator's
	// pod.koordinator.sh/is-pre-allocatable.
	ClusterLabelKey string `json:"clusterLabelKey,omitempty"`
	// ClusterPriorityAnnotationKey is the annotation giving a pre-allocatable pod's priority among the
	// candidates; empty means Koordinator's.
	ClusterPriorityAnnotationKey string `json:"clusterPriorityAnnotationKey,omitempty"`
	// PreferNoPreAllocatedPods places a pre-allocating Reservation on a node's free resources, taking no
	// running pod's, wherever they suffice and pre-allocation is not required. Defaults to false: a node's
	// pre-allocatable pods are taken first, as in Koordinator.
	PreferNoPreAllocatedPods bool `json:"preferNoPreAllocatedPods,omitempty"`
}
