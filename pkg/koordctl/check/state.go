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

package check

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	schedsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// State is the cluster as the invariants read it: the objects of one moment and the history the Checker kept.
// The invariants do not modify it.
type State struct {
	// Now is the time of the evaluation.
	Now time.Time
	// Nodes, Pods, NodeMetrics, Reservations, Jobs, Quotas and PodGroups are the objects in the cluster.
	Nodes        []*corev1.Node
	Pods         []*corev1.Pod
	NodeMetrics  []*slov1alpha1.NodeMetric
	Reservations []*schedv1alpha1.Reservation
	Jobs         []*schedv1alpha1.PodMigrationJob
	Quotas       []*schedsigsv1alpha1.ElasticQuota
	PodGroups    []*schedsigsv1alpha1.PodGroup
	// SLOConfig is the slo-controller-config ConfigMap, nil when there is none.
	SLOConfig *corev1.ConfigMap
	// History is what the Checker saw happen.
	History *History
}

// History is what a Checker remembers of the changes it saw: bindings, the dynamic allocatable of nodes,
// gang members, pod classes and koordlet's evictions. It is bounded by the objects alive (and, for the
// allocatable, by a time window).
type History struct {
	// Bindings are the pods seen bound, by UID.
	Bindings map[types.UID]Binding
	// Allocatable are the samples of each node's batch and mid allocatable, by node name, oldest first.
	Allocatable map[string][]AllocatableSample
	// GangBound are the members of each gang ("namespace/name") ever seen bound, and when the first was.
	GangBound map[string]*GangRecord
	// Pods are the QoS class and eviction label of every pod seen, by UID, so that an eviction is judged after
	// the pod is gone.
	Pods map[types.UID]PodClass
	// Evictions are koordlet's evictions seen (evictPodSuccess Events) of pods not known as evictable, in order.
	Evictions []Eviction
	// EvictionsSeen counts every eviction Event seen.
	EvictionsSeen int
	// Rebindings are pods seen bound to a node and later to another, in order.
	Rebindings []Rebinding
}

// Binding is when a pod was first seen bound, and to which node.
type Binding struct {
	// Node is the node.
	Node string
	// At is when the Checker saw it.
	At time.Time
	// Pod is the pod as it was then.
	Pod *corev1.Pod
	// Checked tells whether the batch capacity at bind was checked.
	Checked bool
}

// AllocatableSample is a node's dynamic allocatable (batch and mid resources) at one time.
type AllocatableSample struct {
	// At is when it was seen.
	At time.Time
	// Resources are the amounts, in the units of quantity.Value.
	Resources map[corev1.ResourceName]int64
}

// GangRecord is what a Checker saw of one gang's members.
type GangRecord struct {
	// FirstBound is when the first member was seen bound.
	FirstBound time.Time
	// Members are the UIDs of the members ever seen bound.
	Members map[types.UID]bool
}

// PodClass is what the eviction invariant needs to know of a pod.
type PodClass struct {
	// Seen is when the pod was last seen; Deleted when it was deleted (zero while it exists).
	Seen, Deleted time.Time
	// Name is namespace/name.
	Name string
	// QoS is its Koordinator QoS class.
	QoS extension.QoSClass
	// EvictionEnabled tells whether it is labelled koordinator.sh/eviction-enabled=true.
	EvictionEnabled bool
}

// Eviction is one eviction koordlet reported with an Event.
type Eviction struct {
	// Pod is the UID of the evicted pod.
	Pod types.UID
	// Name is its namespace/name.
	Name string
	// At is the Event's time.
	At time.Time
	// Message is the Event's message.
	Message string
}

// Rebinding is a pod seen bound to one node and later to another.
type Rebinding struct {
	// Pod is namespace/name.
	Pod string
	// From and To are the nodes.
	From, To string
}

// NewHistory returns an empty history.
func NewHistory() *History {
	return &History{
		Bindings:    map[types.UID]Binding{},
		Allocatable: map[string][]AllocatableSample{},
		GangBound:   map[string]*GangRecord{},
		Pods:        map[types.UID]PodClass{},
	}
}

// dynamicResources are the resources koord-manager writes on nodes, whose allocatable changes over time.
var dynamicResources = []corev1.ResourceName{extension.BatchCPU, extension.BatchMemory, extension.MidCPU, extension.MidMemory}

// isDynamic reports whether name is one of dynamicResources (in its current or deprecated spelling).
func isDynamic(name corev1.ResourceName) bool {
	return slices.Contains(dynamicResources, extension.NormalizeResourceName(name))
}

// isActive reports whether pod holds its node's resources: bound and not finished. A pod being deleted still
// runs, so it counts until it is gone, as the scheduler counts it.
func isActive(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// podName returns namespace/name.
func podName(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// objectName returns "namespace/name", or "name" without a namespace.
func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
