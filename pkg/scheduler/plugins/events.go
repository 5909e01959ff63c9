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

package plugins

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	schedsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
)

// The event resources of Koord's CRDs in kube-scheduler's queue. kube-scheduler watches a custom resource a
// plugin registers events for with a dynamic informer of its own, named "<plural>.<version>.<group>", and
// hands its events to the plugin's queueing hints with unstructured objects (see Feed).
var (
	NodeMetricEvents   = EventResource(slov1alpha1.SchemeGroupVersion.WithResource("nodemetrics"))
	ElasticQuotaEvents = EventResource(schedsigsv1alpha1.SchemeGroupVersion.WithResource("elasticquotas"))
	PodGroupEvents     = EventResource(schedsigsv1alpha1.SchemeGroupVersion.WithResource("podgroups"))
	ReservationEvents  = EventResource(schedulingv1alpha1.SchemeGroupVersion.WithResource("reservations"))
	// ClusterNetworkTopologyEvents are registered by Coscheduling only with awareNetworkTopology, so that a
	// cluster without the CRD runs the rest.
	ClusterNetworkTopologyEvents = EventResource(schedulingv1alpha1.SchemeGroupVersion.WithResource("clusternetworktopologies"))
	// NodeResourceTopologyEvents are koordlet's reports of nodes' CPU topologies (topology.node.k8s.io).
	NodeResourceTopologyEvents = EventResource(topologyv1alpha1.SchemeGroupVersion.WithResource("noderesourcetopologies"))
	// DeviceEvents are koordlet's reports of nodes' devices.
	DeviceEvents = EventResource(schedulingv1alpha1.SchemeGroupVersion.WithResource("devices"))
)

// EventResource is the name kube-scheduler's queue gives the events of the custom resource gvr.
func EventResource(gvr schema.GroupVersionResource) fwk.EventResource {
	return fwk.EventResource(fmt.Sprintf("%s.%s.%s", gvr.Resource, gvr.Version, gvr.Group))
}

// ObjectOf returns the object of an informer event as a *T, unwrapping the tombstone of a deleted object; nil
// when it is not a *T.
func ObjectOf[T any](obj any) *T {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	o, _ := obj.(*T)
	return o
}

// PodOf returns the pod of an informer event, tombstones of deleted pods included, or nil.
func PodOf(obj any) *corev1.Pod { return ObjectOf[corev1.Pod](obj) }

// NodesOf returns the nodes of a node event handed to a queueing hint: oldNode is nil for an added node. It fails
// when either object is not a node.
func NodesOf(oldObj, newObj any) (oldNode, newNode *corev1.Node, err error) {
	if newNode = ObjectOf[corev1.Node](newObj); newNode == nil {
		return nil, nil, fmt.Errorf("want a node, got %T", newObj)
	}
	if oldObj == nil {
		return nil, newNode, nil
	}
	if oldNode = ObjectOf[corev1.Node](oldObj); oldNode == nil {
		return nil, nil, fmt.Errorf("want a node, got %T", oldObj)
	}
	return oldNode, newNode, nil
}
