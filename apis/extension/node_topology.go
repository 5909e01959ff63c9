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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The annotations below are written by koordlet on the node's NodeResourceTopology (topology.node.k8s.io),
// as Koordinator writes them, and read by koord-scheduler's NodeNUMAResource plugin.

// CPUTopology is the value of AnnotationNodeCPUTopology: every online logical CPU of the node.
type CPUTopology struct {
	Detail []CPUInfo `json:"detail,omitempty"`
}

// CPUInfo places one logical CPU.
type CPUInfo struct {
	// ID is the logical CPU number.
	ID int32 `json:"id"`
	// Core is the physical core, unique on the node (hyper-thread siblings share it).
	Core int32 `json:"core"`
	// Socket is the physical package.
	Socket int32 `json:"socket"`
	// Node is the NUMA node.
	Node int32 `json:"node"`
}

// validate checks that IDs are not negative and CPUs are listed once.
func (t *CPUTopology) validate() error {
	seen := map[int32]bool{}
	var errs []error
	for i, c := range t.Detail {
		if c.ID < 0 || c.Core < 0 || c.Socket < 0 || c.Node < 0 {
			errs = append(errs, fmt.Errorf("detail[%d]: negative id, core, socket or node in %+v", i, c))
		}
		if seen[c.ID] {
			errs = append(errs, fmt.Errorf("detail[%d]: cpu %d is listed twice", i, c.ID))
		}
		seen[c.ID] = true
	}
	return errors.Join(errs...)
}

// GetCPUTopology parses AnnotationNodeCPUTopology; nil and no error when it is missing.
func GetCPUTopology(annotations map[string]string) (*CPUTopology, error) {
	return getJSONAnnotation[CPUTopology](annotations, AnnotationNodeCPUTopology)
}

// SetCPUTopology stores t in AnnotationNodeCPUTopology on obj (removes it when t is nil).
func SetCPUTopology(obj metav1.Object, t *CPUTopology) error {
	return setJSONAnnotation(obj, AnnotationNodeCPUTopology, t)
}

// CPUSharedPool is the part of a shared CPU pool on one NUMA node.
type CPUSharedPool struct {
	Socket int32  `json:"socket"`
	Node   int32  `json:"node"`
	CPUSet string `json:"cpuset,omitempty"`
}

// CPUSharedPools is the value of AnnotationNodeCPUSharedPools and AnnotationNodeBECPUSharedPools.
type CPUSharedPools []CPUSharedPool

// validate checks every pool's CPU list.
func (p *CPUSharedPools) validate() error {
	var errs []error
	for i, pool := range *p {
		if _, err := ParseCPUSet(pool.CPUSet); err != nil {
			errs = append(errs, fmt.Errorf("[%d].cpuset: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// GetCPUSharedPools parses the shared pool annotation key (AnnotationNodeCPUSharedPools or
// AnnotationNodeBECPUSharedPools); nil and no error when it is missing.
func GetCPUSharedPools(annotations map[string]string, key string) (CPUSharedPools, error) {
	p, err := getJSONAnnotation[CPUSharedPools](annotations, key)
	if p == nil {
		return nil, err
	}
	return *p, err
}

// SetCPUSharedPools stores pools under the shared pool annotation key on obj.
func SetCPUSharedPools(obj metav1.Object, key string, pools CPUSharedPools) error {
	return setJSONAnnotation(obj, key, &pools)
}

// Kubelet CPU manager policies and options, as kubelet names them.
const (
	KubeletCPUManagerPolicyStatic = "static"
	KubeletCPUManagerPolicyNone   = "none"
	// KubeletCPUManagerPolicyFullPCPUsOnlyOption is the static policy's full-pcpus-only option.
	KubeletCPUManagerPolicyFullPCPUsOnlyOption = "full-pcpus-only"
)

// KubeletCPUManagerPolicy is the value of AnnotationKubeletCPUManagerPolicy.
type KubeletCPUManagerPolicy struct {
	// Policy is kubelet's --cpu-manager-policy: none or static.
	Policy string `json:"policy,omitempty"`
	// Options are kubelet's --cpu-manager-policy-options.
	Options map[string]string `json:"options,omitempty"`
	// ReservedCPUs are kubelet's --reserved-cpus (reservedSystemCPUs), a CPU list.
	ReservedCPUs string `json:"reservedCPUs,omitempty"`
}

// validate checks the reserved CPU list.
func (p *KubeletCPUManagerPolicy) validate() error {
	if _, err := ParseCPUSet(p.ReservedCPUs); err != nil {
		return fmt.Errorf("reservedCPUs: %w", err)
	}
	return nil
}

// GetKubeletCPUManagerPolicy parses AnnotationKubeletCPUManagerPolicy; nil and no error when it is missing.
func GetKubeletCPUManagerPolicy(annotations map[string]string) (*KubeletCPUManagerPolicy, error) {
	return getJSONAnnotation[KubeletCPUManagerPolicy](annotations, AnnotationKubeletCPUManagerPolicy)
}

// SetKubeletCPUManagerPolicy stores p in AnnotationKubeletCPUManagerPolicy on obj.
func SetKubeletCPUManagerPolicy(obj metav1.Object, p *KubeletCPUManagerPolicy) error {
	return setJSONAnnotation(obj, AnnotationKubeletCPUManagerPolicy, p)
}

// PodCPUAlloc is the exclusive CPUs of one pod that Koord's scheduler did not give: kubelet's static CPU
// manager's.
type PodCPUAlloc struct {
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name,omitempty"`
	UID       types.UID `json:"uid,omitempty"`
	CPUSet    string    `json:"cpuset,omitempty"`
	// ManagedByKubelet is set for allocations of kubelet's static CPU manager.
	ManagedByKubelet bool `json:"managedByKubelet,omitempty"`
}

// PodCPUAllocs is the value of AnnotationNodeCPUAllocs.
type PodCPUAllocs []PodCPUAlloc

// validate checks every allocation's CPU list.
func (a *PodCPUAllocs) validate() error {
	var errs []error
	for i, alloc := range *a {
		if _, err := ParseCPUSet(alloc.CPUSet); err != nil {
			errs = append(errs, fmt.Errorf("[%d].cpuset: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// GetPodCPUAllocs parses AnnotationNodeCPUAllocs; nil and no error when it is missing.
func GetPodCPUAllocs(annotations map[string]string) (PodCPUAllocs, error) {
	a, err := getJSONAnnotation[PodCPUAllocs](annotations, AnnotationNodeCPUAllocs)
	if a == nil {
		return nil, err
	}
	return *a, err
}

// SetPodCPUAllocs stores allocs in AnnotationNodeCPUAllocs on obj.
func SetPodCPUAllocs(obj metav1.Object, allocs PodCPUAllocs) error {
	return setJSONAnnotation(obj, AnnotationNodeCPUAllocs, &allocs)
}
