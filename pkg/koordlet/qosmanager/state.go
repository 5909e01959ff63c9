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

package qosmanager

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// ResourceThreshold returns the node's suppression and eviction strategy: the NodeSLO's
// spec.resourceUsedThresholdWithBE merged over configuration.DefaultResourceThresholdStrategy, so that every
// defaulted field is set. It returns an error naming the NodeSLO and the fields when the result is invalid
// (e.g. a lower percent not below its threshold); callers keep their last good strategy then (see LastGood).
// The result is shared by the strategies of the round and must not be modified.
func (s *State) ResourceThreshold() (*slov1alpha1.ResourceThresholdStrategy, error) {
	var in *slov1alpha1.ResourceThresholdStrategy
	if s.NodeSLO != nil {
		in = s.NodeSLO.Spec.ResourceUsedThresholdWithBE
	}
	out := configuration.Merge(configuration.DefaultResourceThresholdStrategy(), in)
	path := field.NewPath("spec", "resourceUsedThresholdWithBE")
	if errs := configuration.ValidateResourceThresholdStrategy(path, out); len(errs) > 0 {
		return nil, fmt.Errorf("NodeSLO %s: %w", s.nodeSLOName(), errs.ToAggregate())
	}
	return out, nil
}

// CPUBurst returns the node's CPU burst strategy: the NodeSLO's spec.cpuBurstStrategy merged over
// configuration.DefaultCPUBurstStrategy, validated like ResourceThreshold.
func (s *State) CPUBurst() (*slov1alpha1.CPUBurstStrategy, error) {
	var in *slov1alpha1.CPUBurstStrategy
	if s.NodeSLO != nil {
		in = s.NodeSLO.Spec.CPUBurstStrategy
	}
	out := configuration.Merge(configuration.DefaultCPUBurstStrategy(), in)
	path := field.NewPath("spec", "cpuBurstStrategy")
	if errs := configuration.ValidateCPUBurstStrategy(path, out); len(errs) > 0 {
		return nil, fmt.Errorf("NodeSLO %s: %w", s.nodeSLOName(), errs.ToAggregate())
	}
	return out, nil
}

// ResourceQOS returns the node's per-class QoS strategy: the NodeSLO's spec.resourceQOSStrategy merged over
// configuration.DefaultResourceQOSStrategy, so that every class and knob is set, validated like
// ResourceThreshold. A class whose feature is not enabled keeps its knobs; ClassResourceQOS says which.
func (s *State) ResourceQOS() (*slov1alpha1.ResourceQOSStrategy, error) {
	var in *slov1alpha1.ResourceQOSStrategy
	if s.NodeSLO != nil {
		in = s.NodeSLO.Spec.ResourceQOSStrategy
	}
	out := configuration.Merge(configuration.DefaultResourceQOSStrategy(), in)
	path := field.NewPath("spec", "resourceQOSStrategy")
	if errs := configuration.ValidateResourceQOSStrategy(path, out); len(errs) > 0 {
		return nil, fmt.Errorf("NodeSLO %s: %w", s.nodeSLOName(), errs.ToAggregate())
	}
	return out, nil
}

// ClassResourceQOS returns the settings of QoS class qos in strategy, as Koordinator maps them: LSE pods take
// the LSR class's; SYSTEM the system class's; nil for a class without settings (none).
func ClassResourceQOS(strategy *slov1alpha1.ResourceQOSStrategy, qos extension.QoSClass) *slov1alpha1.ResourceQOS {
	switch qos {
	case extension.QoSLSE, extension.QoSLSR:
		return strategy.LSRClass
	case extension.QoSLS:
		return strategy.LSClass
	case extension.QoSBE:
		return strategy.BEClass
	case extension.QoSSystem:
		return strategy.SystemClass
	}
	return nil
}

func (s *State) nodeSLOName() string {
	if s.NodeSLO == nil {
		return "<none>"
	}
	return s.NodeSLO.Name
}

// Latest returns the newest sample of key when it is at most MaxSampleAge old at Now (a zero MaxSampleAge
// means DefaultMaxSampleAge); false when there is none or it is stale, e.g. for a pod whose cgroup is gone.
func (s *State) Latest(key metriccache.SeriesKey) (float64, bool) {
	if s.Metrics == nil {
		return 0, false
	}
	t, v, ok := s.Metrics.Latest(key)
	if !ok {
		return 0, false
	}
	maxAge := s.MaxSampleAge
	if maxAge <= 0 {
		maxAge = DefaultMaxSampleAge
	}
	if s.Now.Sub(t) > maxAge {
		return 0, false
	}
	return v, true
}

// NodeKey returns the key of the node's series of resource r.
func NodeKey(r corev1.ResourceName) metriccache.SeriesKey {
	return metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: r}
}

// SystemKey returns the key of the system (node minus pods) series of resource r.
func SystemKey(r corev1.ResourceName) metriccache.SeriesKey {
	return metriccache.SeriesKey{Kind: metriccache.KindSystem, Resource: r}
}

// PodKey returns the key of the series of resource r of the pod with uid.
func PodKey(uid types.UID, r corev1.ResourceName) metriccache.SeriesKey {
	return metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(uid), Resource: r}
}

// HostAppKey returns the key of the series of resource r of the host application named name.
func HostAppKey(name string, r corev1.ResourceName) metriccache.SeriesKey {
	return metriccache.SeriesKey{Kind: metriccache.KindHostApp, ID: name, Resource: r}
}

// ContainerKey returns the key of the series of resource r of the container with id ("containerd://abc").
func ContainerKey(id string, r corev1.ResourceName) metriccache.SeriesKey {
	return metriccache.SeriesKey{Kind: metriccache.KindContainer, ID: id, Resource: r}
}

// NodeCPUCapacity returns the node's CPU capacity in cores.
func NodeCPUCapacity(node *corev1.Node) float64 {
	return float64(node.Status.Capacity.Cpu().MilliValue()) / 1000
}

// NodeMemoryCapacity returns the node's memory capacity in bytes.
func NodeMemoryCapacity(node *corev1.Node) int64 {
	return node.Status.Capacity.Memory().Value()
}

// NodeReservedCPU returns the CPU, in cores, kept from pods on the node: the larger of kubelet's reservation
// (capacity − allocatable) and the node.koordinator.sh/reservation annotation (its reservedCPUs count, else
// its cpu amount). When the annotation is malformed it returns kubelet's reservation and the parse error.
func NodeReservedCPU(node *corev1.Node) (float64, error) {
	kubelet := node.Status.Capacity.Cpu().MilliValue() - node.Status.Allocatable.Cpu().MilliValue()
	if _, ok := node.Status.Allocatable[corev1.ResourceCPU]; !ok {
		kubelet = 0
	}
	reserved := max(kubelet, 0)
	r, err := extension.GetNodeReservation(node.Annotations)
	if err != nil {
		return float64(reserved) / 1000, err
	}
	if r != nil {
		var anno int64
		if r.ReservedCPUs != "" {
			cpus, err := extension.ParseCPUSet(r.ReservedCPUs)
			if err != nil {
				return float64(reserved) / 1000, err
			}
			anno = int64(len(cpus)) * 1000
		} else if q, ok := r.Resources[corev1.ResourceCPU]; ok {
			anno = q.MilliValue()
		}
		reserved = max(reserved, anno)
	}
	return float64(reserved) / 1000, nil
}

// PodQoS returns the Koordinator QoS class of pod: its koordinator.sh/qosClass label, else the class its
// Kubernetes QoS class maps to.
func PodQoS(pod *corev1.Pod) extension.QoSClass {
	return extension.GetPodQoSClassWithDefault(pod)
}

// LabelledBE reports whether pod is BE by its koordinator.sh/qosClass label, not by default: the pods koordlet's
// BE evictions may choose, as in Koordinator, so that an unlabelled Kubernetes BestEffort pod (a debugging pod,
// say), which is BE for suppression, is never evicted for batch pressure.
func LabelledBE(pod *corev1.Pod) bool {
	return extension.GetPodQoSClassRaw(pod) == extension.QoSBE
}

// Container is a container of a pod that has a cgroup: its spec and its status.
type Container struct {
	// Spec is the container in the pod spec.
	Spec *corev1.Container
	// Status is its status; Status.ContainerID is set.
	Status *corev1.ContainerStatus
}

// Containers returns the app containers of pod, and its sidecars (init containers with restartPolicy Always),
// that have a container ID and have not terminated: those that have a cgroup directory.
func Containers(pod *corev1.Pod) []Container {
	var out []Container
	add := func(specs []corev1.Container, statuses []corev1.ContainerStatus, sidecarsOnly bool) {
		for i := range statuses {
			st := &statuses[i]
			if st.ContainerID == "" || st.State.Terminated != nil {
				continue
			}
			for j := range specs {
				spec := &specs[j]
				if spec.Name != st.Name {
					continue
				}
				if !sidecarsOnly || (spec.RestartPolicy != nil && *spec.RestartPolicy == corev1.ContainerRestartPolicyAlways) {
					out = append(out, Container{Spec: spec, Status: st})
				}
				break
			}
		}
	}
	add(pod.Spec.InitContainers, pod.Status.InitContainerStatuses, true)
	add(pod.Spec.Containers, pod.Status.ContainerStatuses, false)
	return out
}

// LastGood keeps the last valid value of a configuration, so that a strategy keeps acting on it when a new
// one is invalid. The zero value holds nothing.
type LastGood[T any] struct {
	v *T
}

// Update returns v and keeps it when err is nil; otherwise it returns the last good value (nil when there has
// been none) with err unchanged.
func (l *LastGood[T]) Update(v *T, err error) (*T, error) {
	if err != nil {
		return l.v, err
	}
	l.v = v
	return v, nil
}

// EvictionPriority parses the pod's koordinator.sh/eviction-priority annotation: 0 when absent, as in
// Koordinator, and 0 with an error naming the value when it is not an int32. Lower values are evicted first.
func EvictionPriority(pod *corev1.Pod) (int32, error) {
	raw, ok := pod.Annotations[extension.AnnotationPodEvictionPriority]
	if !ok {
		return 0, nil
	}
	v, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 32)
	if err != nil {
		if ne, ok := errors.AsType[*strconv.NumError](err); ok {
			err = ne.Err
		}
		return 0, fmt.Errorf("%q is not an int32: %w", raw, err)
	}
	return int32(v), nil
}
