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

// Package qostest builds the inputs of QoS strategy tests: nodes, pods, NodeSLOs, a metric cache with samples
// and a fake evictor. It is imported only by tests.
package qostest

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Now is the time of the states the helpers build.
var Now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// Node returns a node named "n1" with the given CPU and memory capacity, all of it allocatable.
func Node(cpu, memory string) *corev1.Node {
	list := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status:     corev1.NodeStatus{Capacity: list, Allocatable: list.DeepCopy()},
	}
}

// NodeSLO returns the NodeSLO of node n1 with spec.
func NodeSLO(spec slov1alpha1.NodeSLOSpec) *slov1alpha1.NodeSLO {
	return &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: spec}
}

// PodOption changes a pod built by Pod.
type PodOption func(*corev1.Pod)

// Pod returns a running pod in namespace "default" with UID "uid-<name>" and no containers.
func Pod(name string, opts ...PodOption) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// UID returns the UID Pod gives a pod named name.
func UID(name string) types.UID { return types.UID("uid-" + name) }

// QoS sets the koordinator.sh/qosClass label.
func QoS(q extension.QoSClass) PodOption {
	return func(p *corev1.Pod) { Label(extension.LabelPodQoS, string(q))(p) }
}

// KubeQoS sets status.qosClass, which decides the pod's cgroup directory.
func KubeQoS(q corev1.PodQOSClass) PodOption {
	return func(p *corev1.Pod) { p.Status.QOSClass = q }
}

// Label sets a label.
func Label(key, value string) PodOption {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[key] = value
	}
}

// Annotation sets an annotation.
func Annotation(key, value string) PodOption {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[key] = value
	}
}

// Priority sets spec.priority.
func Priority(v int32) PodOption {
	return func(p *corev1.Pod) { p.Spec.Priority = &v }
}

// CPUSet sets the scheduler's resource-status cpuset, e.g. "2-3".
func CPUSet(cpus string) PodOption {
	return Annotation(extension.AnnotationResourceStatus, `{"cpuset":"`+cpus+`"}`)
}

// Container adds a running container with the given ID ("containerd://<name>" when empty), requests and
// limits (see Resources).
func Container(name, id string, requests, limits corev1.ResourceList) PodOption {
	return func(p *corev1.Pod) {
		if id == "" {
			id = "containerd://" + name
		}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name:      name,
			Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
		})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: name, ContainerID: id,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		})
	}
}

// Resources builds a resource list from name/quantity pairs: Resources("cpu", "2", "memory", "1Gi").
func Resources(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// Cache returns a metric cache.
func Cache() *metriccache.Cache {
	return metriccache.New(metriccache.Options{})
}

// State returns the snapshot of a round at Now.
func State(node *corev1.Node, slo *slov1alpha1.NodeSLO, cache *metriccache.Cache, pods ...*corev1.Pod) *qosmanager.State {
	return &qosmanager.State{Node: node, Pods: pods, NodeSLO: slo, Metrics: cache, Now: Now, MaxSampleAge: qosmanager.DefaultMaxSampleAge}
}

// Eviction is one call to Evictor.Evict.
type Eviction struct {
	// Pod is namespace/name.
	Pod string
	// Reason is the reason given.
	Reason string
	// Message is the message given.
	Message string
}

// Evictor is a fake evictor that records what it was asked and evicts everything unless Refuse says otherwise.
type Evictor struct {
	// Refuse returns whether the pod is not evicted, and an error to return.
	Refuse func(pod *corev1.Pod) (bool, error)

	mu    sync.Mutex
	calls []Eviction
}

// Evict records the call.
func (e *Evictor) Evict(_ context.Context, pod *corev1.Pod, reason, message string) (bool, error) {
	e.mu.Lock()
	e.calls = append(e.calls, Eviction{Pod: pod.Namespace + "/" + pod.Name, Reason: reason, Message: message})
	e.mu.Unlock()
	if e.Refuse != nil {
		if refused, err := e.Refuse(pod); refused || err != nil {
			return false, err
		}
	}
	return true, nil
}

// Calls returns the calls so far and forgets them.
func (e *Evictor) Calls() []Eviction {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.calls
	e.calls = nil
	return out
}
