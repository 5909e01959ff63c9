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

// Pod annotations of fine-grained CPU and NUMA orchestration.
const (
	// AnnotationResourceSpec is the CPU orchestration a pod asks for; see
	// ResourceSpec.
	AnnotationResourceSpec = SchedulingDomainPrefix + "resource-spec"
	// AnnotationResourceStatus is the CPU and NUMA allocation koord-scheduler
	// made for a pod before binding it; see ResourceStatus.
	AnnotationResourceStatus = SchedulingDomainPrefix + "resource-status"
	// AnnotationNUMATopologySpec is the NUMA topology policy a pod asks for
	// (JSON {"numaTopologyPolicy": ..., "singleNUMANodeExclusive": ...}).
	AnnotationNUMATopologySpec = SchedulingDomainPrefix + "numa-topology-spec"
)

// Node labels and annotations of fine-grained CPU and NUMA orchestration.
const (
	// AnnotationNodeCPUTopology is the CPU topology koordlet reports
	// ({"detail": [{"id", "core", "socket", "node"}]}).
	AnnotationNodeCPUTopology = NodeDomainPrefix + "cpu-topology"
	// AnnotationNodeCPUAllocs lists the CPUs kubelet assigned to its static
	// pods.
	AnnotationNodeCPUAllocs = NodeDomainPrefix + "pod-cpu-allocs"
	// AnnotationNodeCPUSharedPools is the shared CPU pool of LS and
	// Burstable pods.
	AnnotationNodeCPUSharedPools = NodeDomainPrefix + "cpu-shared-pools"
	// AnnotationNodeBECPUSharedPools is the shared CPU pool of BE pods.
	AnnotationNodeBECPUSharedPools = NodeDomainPrefix + "be-cpu-shared-pools"
	// AnnotationKubeletCPUManagerPolicy is the CPU manager policy of the
	// node's kubelet.
	AnnotationKubeletCPUManagerPolicy = KubeletDomainPrefix + "cpu-manager-policy"

	// LabelNodeCPUBindPolicy constrains how CPUs are bound on the node; see
	// NodeCPUBindPolicy.
	LabelNodeCPUBindPolicy = NodeDomainPrefix + "cpu-bind-policy"
	// LabelNodeNUMAAllocateStrategy chooses among NUMA nodes that fit; see
	// NUMAAllocateStrategy.
	LabelNodeNUMAAllocateStrategy = NodeDomainPrefix + "numa-allocate-strategy"
	// LabelNUMATopologyPolicy aligns allocations with the NUMA topology of
	// the node; see NUMATopologyPolicy.
	LabelNUMATopologyPolicy = NodeDomainPrefix + "numa-topology-policy"
)

// CPUBindPolicy is how a pod's CPUs are bound.
type CPUBindPolicy string

// CPU bind policies.
const (
	// CPUBindPolicyDefault uses the policy configured in koord-scheduler.
	CPUBindPolicyDefault CPUBindPolicy = "Default"
	// CPUBindPolicyFullPCPUs packs CPUs onto as few physical cores as
	// possible.
	CPUBindPolicyFullPCPUs CPUBindPolicy = "FullPCPUs"
	// CPUBindPolicySpreadByPCPUs spreads logical CPUs evenly over physical
	// cores.
	CPUBindPolicySpreadByPCPUs CPUBindPolicy = "SpreadByPCPUs"
	// CPUBindPolicyConstrainedBurst confines a Burstable pod to a range of
	// the shared pool.
	CPUBindPolicyConstrainedBurst CPUBindPolicy = "ConstrainedBurst"
)

// Valid reports whether p is one of the known CPU bind policies.
func (p CPUBindPolicy) Valid() bool {
	switch p {
	case CPUBindPolicyDefault, CPUBindPolicyFullPCPUs, CPUBindPolicySpreadByPCPUs, CPUBindPolicyConstrainedBurst:
		return true
	}
	return false
}

// CPUExclusivePolicy is what a pod's bound CPUs are exclusive of.
type CPUExclusivePolicy string

// CPU exclusive policies.
const (
	// CPUExclusivePolicyNone asks for no exclusion.
	CPUExclusivePolicyNone CPUExclusivePolicy = "None"
	// CPUExclusivePolicyPCPULevel avoids sharing physical cores with other
	// exclusive pods.
	CPUExclusivePolicyPCPULevel CPUExclusivePolicy = "PCPULevel"
	// CPUExclusivePolicyNUMANodeLevel avoids sharing NUMA nodes with other
	// exclusive pods.
	CPUExclusivePolicyNUMANodeLevel CPUExclusivePolicy = "NUMANodeLevel"
)

// Valid reports whether p is one of the known CPU exclusive policies.
func (p CPUExclusivePolicy) Valid() bool {
	switch p {
	case CPUExclusivePolicyNone, CPUExclusivePolicyPCPULevel, CPUExclusivePolicyNUMANodeLevel:
		return true
	}
	return false
}

// NodeCPUBindPolicy is the value of LabelNodeCPUBindPolicy.
type NodeCPUBindPolicy string

// Node CPU bind policies.
const (
	// NodeCPUBindPolicyNone imposes nothing.
	NodeCPUBindPolicyNone NodeCPUBindPolicy = "None"
	// NodeCPUBindPolicyFullPCPUsOnly requires whole physical cores, like
	// the kubelet option full-pcpus-only.
	NodeCPUBindPolicyFullPCPUsOnly NodeCPUBindPolicy = "FullPCPUsOnly"
	// NodeCPUBindPolicySpreadByPCPUs requires logical CPUs spread evenly over
	// physical cores.
	NodeCPUBindPolicySpreadByPCPUs NodeCPUBindPolicy = "SpreadByPCPUs"
)

// NUMAAllocateStrategy is the value of LabelNodeNUMAAllocateStrategy.
type NUMAAllocateStrategy string

// NUMA allocate strategies.
const (
	// NUMAMostAllocated picks the NUMA node with the least free resources.
	NUMAMostAllocated NUMAAllocateStrategy = "MostAllocated"
	// NUMALeastAllocated picks the NUMA node with the most free resources.
	NUMALeastAllocated NUMAAllocateStrategy = "LeastAllocated"
	// NUMADistributeEvenly spreads CPUs evenly over NUMA nodes.
	NUMADistributeEvenly NUMAAllocateStrategy = "DistributeEvenly"
)

// NUMATopologyPolicy is the value of LabelNUMATopologyPolicy.
type NUMATopologyPolicy string

// NUMA topology policies.
const (
	// NUMATopologyPolicyNone does not align with the NUMA topology.
	NUMATopologyPolicyNone NUMATopologyPolicy = ""
	// NUMATopologyPolicyBestEffort prefers aligned allocations.
	NUMATopologyPolicyBestEffort NUMATopologyPolicy = "BestEffort"
	// NUMATopologyPolicyRestricted requires allocations aligned to the
	// fewest NUMA nodes possible.
	NUMATopologyPolicyRestricted NUMATopologyPolicy = "Restricted"
	// NUMATopologyPolicySingleNUMANode requires allocations on one NUMA
	// node.
	NUMATopologyPolicySingleNUMANode NUMATopologyPolicy = "SingleNUMANode"
)

// ResourceSpec is the value of AnnotationResourceSpec: the CPU orchestration
// a pod asks for.
type ResourceSpec struct {
	// RequiredCPUBindPolicy is a bind policy the allocation must follow, or
	// the pod is unschedulable.
	RequiredCPUBindPolicy CPUBindPolicy `json:"requiredCPUBindPolicy,omitempty"`
	// PreferredCPUBindPolicy is a bind policy followed when possible.
	PreferredCPUBindPolicy CPUBindPolicy `json:"preferredCPUBindPolicy,omitempty"`
	// PreferredCPUExclusivePolicy is an exclusive policy followed when
	// possible.
	PreferredCPUExclusivePolicy CPUExclusivePolicy `json:"preferredCPUExclusivePolicy,omitempty"`
}

// validate checks that every policy set is a known one.
func (s *ResourceSpec) validate() error {
	var errs []error
	if p := s.RequiredCPUBindPolicy; p != "" && !p.Valid() {
		errs = append(errs, fmt.Errorf("requiredCPUBindPolicy: unsupported value %q", p))
	}
	if p := s.PreferredCPUBindPolicy; p != "" && !p.Valid() {
		errs = append(errs, fmt.Errorf("preferredCPUBindPolicy: unsupported value %q", p))
	}
	if p := s.PreferredCPUExclusivePolicy; p != "" && !p.Valid() {
		errs = append(errs, fmt.Errorf("preferredCPUExclusivePolicy: unsupported value %q", p))
	}
	return errors.Join(errs...)
}

// GetResourceSpec parses AnnotationResourceSpec. It returns nil and no error
// when the annotation is missing, and an *AnnotationError when it is not
// valid JSON or names an unknown policy.
func GetResourceSpec(annotations map[string]string) (*ResourceSpec, error) {
	return getJSONAnnotation[ResourceSpec](annotations, AnnotationResourceSpec)
}

// SetResourceSpec stores spec in AnnotationResourceSpec on obj, or removes
// the annotation when spec is nil. It writes nothing and returns an
// *AnnotationError when spec names an unknown policy.
func SetResourceSpec(obj metav1.Object, spec *ResourceSpec) error {
	return setJSONAnnotation(obj, AnnotationResourceSpec, spec)
}

// ResourceStatus is the value of AnnotationResourceStatus: the CPU and NUMA
// allocation of a pod.
type ResourceStatus struct {
	// CPUSet is the Linux CPU list of the CPUs bound to an LSE or LSR pod.
	CPUSet string `json:"cpuset,omitempty"`
	// NUMANodeResources are the resources allocated on each NUMA node the
	// pod is confined to.
	NUMANodeResources []NUMANodeResource `json:"numaNodeResources,omitempty"`
}

// NUMANodeResource is the part of an allocation on one NUMA node.
type NUMANodeResource struct {
	// Node is the NUMA node ID.
	Node int32 `json:"node"`
	// Resources are the resources allocated on the node.
	Resources corev1.ResourceList `json:"resources,omitempty"`
}

// CPUs returns the CPUs of s.CPUSet (see ParseCPUSet).
func (s *ResourceStatus) CPUs() ([]int, error) {
	return ParseCPUSet(s.CPUSet)
}

// validate checks the CPU list syntax and the NUMA node IDs.
func (s *ResourceStatus) validate() error {
	var errs []error
	if _, err := ParseCPUSet(s.CPUSet); err != nil {
		errs = append(errs, err)
	}
	for i, r := range s.NUMANodeResources {
		if r.Node < 0 {
			errs = append(errs, fmt.Errorf("numaNodeResources[%d].node: %d is negative", i, r.Node))
		}
	}
	return errors.Join(errs...)
}

// GetResourceStatus parses AnnotationResourceStatus. It returns nil and no
// error when the annotation is missing, and an *AnnotationError when it is
// not valid JSON, its cpuset is not a valid CPU list or a NUMA node ID is
// negative.
func GetResourceStatus(annotations map[string]string) (*ResourceStatus, error) {
	return getJSONAnnotation[ResourceStatus](annotations, AnnotationResourceStatus)
}

// SetResourceStatus stores status in AnnotationResourceStatus on obj, or
// removes the annotation when status is nil. It writes nothing and returns an
// *AnnotationError when status is invalid.
func SetResourceStatus(obj metav1.Object, status *ResourceStatus) error {
	return setJSONAnnotation(obj, AnnotationResourceStatus, status)
}

// Valid reports whether p is one of the known NUMA topology policies ("" included).
func (p NUMATopologyPolicy) Valid() bool {
	switch p {
	case NUMATopologyPolicyNone, NUMATopologyPolicyBestEffort, NUMATopologyPolicyRestricted, NUMATopologyPolicySingleNUMANode:
		return true
	}
	return false
}

// NUMATopologySpec is the value of AnnotationNUMATopologySpec.
type NUMATopologySpec struct {
	// NUMATopologyPolicy is the pod's NUMA topology policy; it overrides the node's label.
	NUMATopologyPolicy NUMATopologyPolicy `json:"numaTopologyPolicy,omitempty"`
	// SingleNUMANodeExclusive keeps pods on one NUMA node and pods spanning several off each other's NUMA
	// nodes: Required (the default for a pod with a NUMA topology policy of its own) or Preferred.
	SingleNUMANodeExclusive NUMATopologyExclusive `json:"singleNUMANodeExclusive,omitempty"`
}

// NUMATopologyExclusive is the value of NUMATopologySpec.SingleNUMANodeExclusive.
type NUMATopologyExclusive string

// NUMA topology exclusive policies.
const (
	// NUMATopologyExclusiveRequired: a pod on one NUMA node never shares it with a pod spanning several, and
	// the other way round (under BestEffort, when there is another choice).
	NUMATopologyExclusiveRequired NUMATopologyExclusive = "Required"
	// NUMATopologyExclusivePreferred: the same, when there is another choice.
	NUMATopologyExclusivePreferred NUMATopologyExclusive = "Preferred"
)

// validate checks the policy.
func (s *NUMATopologySpec) validate() error {
	if !s.NUMATopologyPolicy.Valid() {
		return fmt.Errorf("numaTopologyPolicy: unsupported value %q (BestEffort, Restricted or SingleNUMANode)", s.NUMATopologyPolicy)
	}
	switch s.SingleNUMANodeExclusive {
	case "", NUMATopologyExclusiveRequired, NUMATopologyExclusivePreferred:
	default:
		return fmt.Errorf("singleNUMANodeExclusive: unsupported value %q (Required or Preferred)", s.SingleNUMANodeExclusive)
	}
	return nil
}

// GetNUMATopologySpec parses AnnotationNUMATopologySpec; nil and no error when it is missing.
func GetNUMATopologySpec(annotations map[string]string) (*NUMATopologySpec, error) {
	return getJSONAnnotation[NUMATopologySpec](annotations, AnnotationNUMATopologySpec)
}
