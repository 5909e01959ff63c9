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

package extension

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Node labels and annotations of colocation and resource overcommitment.
const (
	// AnnotationNodeReservation reserves node resources for processes
	// outside Kubernetes; see NodeReservation.
	AnnotationNodeReservation = NodeDomainPrefix + "reservation"
	// AnnotationNodeColocationStrategy overrides, as JSON, the colocation
	// strategy of slo-controller-config for the node.
	AnnotationNodeColocationStrategy = NodeDomainPrefix + "colocation-strategy"
	// LabelCPUReclaimRatio overrides the CPU reclaim ratio of the node, a
	// float.
	LabelCPUReclaimRatio = NodeDomainPrefix + "cpu-reclaim-ratio"
	// LabelMemoryReclaimRatio overrides the memory reclaim ratio of the
	// node, a float.
	LabelMemoryReclaimRatio = NodeDomainPrefix + "memory-reclaim-ratio"
	// LabelMidStaticCPUReservedRatio overrides the share of node CPU
	// offered as mid-cpu in static mid mode, a float ratio.
	LabelMidStaticCPUReservedRatio = NodeDomainPrefix + "mid-static-cpu-reserved-ratio"
	// LabelMidStaticMemoryReservedRatio overrides the share of node memory
	// offered as mid-memory in static mid mode, a float ratio.
	LabelMidStaticMemoryReservedRatio = NodeDomainPrefix + "mid-static-memory-reserved-ratio"
	// AnnotationCPUNormalizationRatio is the CPU normalization ratio of the
	// node, a positive float.
	AnnotationCPUNormalizationRatio = NodeDomainPrefix + "cpu-normalization-ratio"
	// LabelCPUNormalizationEnabled ("true" or "false") overrides whether CPU
	// normalization applies to the node.
	LabelCPUNormalizationEnabled = NodeDomainPrefix + "cpu-normalization-enabled"
	// AnnotationNodeResourceAmplificationRatio maps resources to the ratio
	// by which the node allocatable is amplified (JSON).
	AnnotationNodeResourceAmplificationRatio = NodeDomainPrefix + "resource-amplification-ratio"
	// AnnotationNodeRawCapacity is the capacity of the node before
	// amplification (JSON resource list).
	AnnotationNodeRawCapacity = NodeDomainPrefix + "raw-capacity"
	// AnnotationNodeRawAllocatable is the allocatable of the node before
	// amplification (JSON resource list).
	AnnotationNodeRawAllocatable = NodeDomainPrefix + "raw-allocatable"
	// AnnotationNodeOriginExtendedAllocatable is the batch allocatable of
	// the node before other schedulers, such as YARN, took their share
	// ({"resources": ...}).
	AnnotationNodeOriginExtendedAllocatable = NodeDomainPrefix + "originExtendedAllocatable"
	// AnnotationNodeThirdPartyAllocations is the batch resources other
	// schedulers, such as YARN, allocated on the node (JSON).
	AnnotationNodeThirdPartyAllocations = NodeDomainPrefix + "thirdPartyAllocations"
)

// NodeReservationApplyPolicy is how a NodeReservation takes effect.
type NodeReservationApplyPolicy string

// Node reservation apply policies.
const (
	// NodeReservationApplyPolicyDefault deducts the reserved resources from
	// the allocatable the scheduler sees and keeps the reserved CPUs free.
	// It is what an empty policy means.
	NodeReservationApplyPolicyDefault NodeReservationApplyPolicy = "Default"
	// NodeReservationApplyPolicyReservedCPUsOnly only keeps the reserved
	// CPUs free; the allocatable is left to kubelet's own reservation.
	NodeReservationApplyPolicyReservedCPUsOnly NodeReservationApplyPolicy = "ReservedCPUsOnly"
)

// NodeReservation is the value of AnnotationNodeReservation, e.g.
// {"resources": {"cpu": "2"}} or {"reservedCPUs": "0-3"}.
type NodeReservation struct {
	// Resources are the amounts reserved. A cpu amount without
	// ReservedCPUs reserves that many whole CPUs.
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// ReservedCPUs is the Linux CPU list of the CPUs reserved; it takes
	// precedence over a cpu amount in Resources.
	ReservedCPUs string `json:"reservedCPUs,omitempty"`
	// ApplyPolicy is how the reservation takes effect.
	ApplyPolicy NodeReservationApplyPolicy `json:"applyPolicy,omitempty"`
}

// validate checks the CPU list and the apply policy.
func (r *NodeReservation) validate() error {
	var errs []error
	if _, err := ParseCPUSet(r.ReservedCPUs); err != nil {
		errs = append(errs, fmt.Errorf("reservedCPUs: %w", err))
	}
	switch r.ApplyPolicy {
	case "", NodeReservationApplyPolicyDefault, NodeReservationApplyPolicyReservedCPUsOnly:
	default:
		errs = append(errs, fmt.Errorf("applyPolicy: unsupported value %q", r.ApplyPolicy))
	}
	return errors.Join(errs...)
}

// GetNodeReservation parses AnnotationNodeReservation. It returns nil and no
// error when the annotation is missing, and an *AnnotationError when it is
// not valid JSON, reservedCPUs is not a valid CPU list or the apply policy is
// unknown.
func GetNodeReservation(annotations map[string]string) (*NodeReservation, error) {
	return getJSONAnnotation[NodeReservation](annotations, AnnotationNodeReservation)
}

// SetNodeReservation stores reservation in AnnotationNodeReservation on obj,
// or removes the annotation when reservation is nil. It writes nothing and
// returns an *AnnotationError when reservation is invalid.
func SetNodeReservation(obj metav1.Object, reservation *NodeReservation) error {
	return setJSONAnnotation(obj, AnnotationNodeReservation, reservation)
}
