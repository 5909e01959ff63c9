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

package config

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReservationArgs configures the Reservation plugin and its controller. Defaults are applied to the versioned
// type before conversion, so every field here holds its effective value.
type ReservationArgs struct {
	metav1.TypeMeta

	// EnablePreemption lets the reserve pod of a Reservation preempt lower-priority pods (through the
	// profile's PostFilter plugins). When false, reserve pods carry preemptionPolicy Never.
	EnablePreemption bool
	// MinCandidateNodesPercentage is kept for Koordinator compatibility: kube-scheduler's DefaultPreemption
	// takes its own value of it. Must be in [0, 100].
	MinCandidateNodesPercentage int32
	// MinCandidateNodesAbsolute is kept for Koordinator compatibility like MinCandidateNodesPercentage. Must
	// be at least 0, and not 0 together with MinCandidateNodesPercentage.
	MinCandidateNodesAbsolute int32
	// ControllerWorkers is the number of workers of the reservation controller.
	ControllerWorkers int32
	// GCDurationSeconds is how long a Succeeded or Failed Reservation is kept before it is deleted.
	GCDurationSeconds int64
	// GCIntervalSeconds is how often the controller looks for Succeeded and Failed Reservations to delete.
	GCIntervalSeconds int64
	// DisableGarbageCollection keeps Succeeded and Failed Reservations.
	DisableGarbageCollection bool
	// ResyncIntervalSeconds is how often the controller re-checks every Reservation (expiry, status, reserve
	// pods), on top of the events it follows.
	ResyncIntervalSeconds int64
	// IgnoredResources are resources a Reservation never holds: they are left out of its allocatable.
	IgnoredResources []corev1.ResourceName
	// PreAllocationConfig configures pre-allocation: the Cluster mode, the label and annotation that mark the
	// pods whose resources a Cluster-mode pre-allocating Reservation may take, and the preference for nodes
	// where a Reservation takes none. Nil means Koordinator's defaults.
	PreAllocationConfig *PreAllocationConfig
}

// PreAllocationConfig configures the cluster mode of Reservation pre-allocation.
type PreAllocationConfig struct {
	// EnableClusterMode lets Reservations with preAllocationPolicy.mode Cluster be placed; without it they
	// are unschedulable.
	EnableClusterMode bool
	// ClusterLabelKey is the label marking pods as pre-allocatable; empty means Koordinator's
	// pod.koordinator.sh/is-pre-allocatable.
	ClusterLabelKey string
	// ClusterPriorityAnnotationKey is the annotation giving a pre-allocatable pod's priority among the
	// candidates; empty means Koordinator's.
	ClusterPriorityAnnotationKey string
	// PreferNoPreAllocatedPods places a pre-allocating Reservation on a node's free resources, taking no
	// running pod's, wherever they suffice and pre-allocation is not required.
	PreferNoPreAllocatedPods bool
}
