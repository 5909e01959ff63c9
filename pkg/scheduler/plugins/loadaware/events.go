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

package loadaware

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// EventsToRegister returns the events that may make a pod this plugin rejected schedulable: a NodeMetric
// added, deleted or with new usage; an assigned pod deleted; a node added, or its allocatable or
// usage-thresholds annotation changed.
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: plugins.NodeMetricEvents, ActionType: fwk.Add | fwk.Update | fwk.Delete}, QueueingHintFn: p.isSchedulableAfterNodeMetricChange},
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: p.isSchedulableAfterAssignedPodDelete},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable | fwk.UpdateNodeAnnotation}, QueueingHintFn: isSchedulableAfterNodeChange},
	}, nil
}

// isSchedulableAfterNodeMetricChange queues the pod when a NodeMetric appears or goes (a node without one
// takes any pod) or its status changes; not when only its spec or metadata do. The event goes to the node
// states first (plugins.Feed), so that the retry it causes sees it.
func (p *Plugin) isSchedulableAfterNodeMetricChange(logger klog.Logger, pod *corev1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if err := p.nodeMetrics.Event(oldObj, newObj); err != nil {
		return fwk.Queue, err
	}
	if oldObj == nil || newObj == nil {
		return fwk.Queue, nil
	}
	oldStatus, err := nodeMetricStatus(oldObj)
	if err != nil {
		return fwk.Queue, err
	}
	newStatus, err := nodeMetricStatus(newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if equality.Semantic.DeepEqual(oldStatus, newStatus) {
		logger.V(5).Info("NodeMetric status did not change", "pod", klog.KObj(pod))
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("NodeMetric status changed, the pod may fit now", "pod", klog.KObj(pod))
	return fwk.Queue, nil
}

// nodeMetricStatus returns the status of a NodeMetric from an event, typed or unstructured: comparing the
// unstructured statuses spares converting both objects for every pending pod.
func nodeMetricStatus(obj any) (any, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o.Object["status"], nil
	case *slov1alpha1.NodeMetric:
		return &o.Status, nil
	}
	return nil, fmt.Errorf("want a NodeMetric, got %T", obj)
}

// isSchedulableAfterAssignedPodDelete queues the pod: the deleted pod no longer counts on its node. Like the
// NodeMetric hint, it updates the assign cache first, since the plugin's pod handler may run later.
func (p *Plugin) isSchedulableAfterAssignedPodDelete(logger klog.Logger, pod *corev1.Pod, oldObj, _ any) (fwk.QueueingHint, error) {
	deleted := plugins.PodOf(oldObj)
	if deleted == nil {
		return fwk.Queue, fmt.Errorf("want a deleted pod, got %T", oldObj)
	}
	if deleted.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	p.nodes.Remove(deleted.UID)
	logger.V(5).Info("Assigned pod deleted, the pod may fit now", "pod", klog.KObj(pod), "deletedPod", klog.KObj(deleted))
	return fwk.Queue, nil
}

// isSchedulableAfterNodeChange queues the pod for a new node, a changed allocatable or a changed
// usage-thresholds annotation.
func isSchedulableAfterNodeChange(logger klog.Logger, pod *corev1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	oldNode, newNode, err := plugins.NodesOf(oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if oldNode == nil {
		return fwk.Queue, nil
	}
	key := extension.AnnotationNodeUsageThresholds
	if oldNode.Annotations[key] != newNode.Annotations[key] || !equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable) {
		logger.V(5).Info("Node thresholds or allocatable changed, the pod may fit now", "pod", klog.KObj(pod), "node", klog.KObj(newNode))
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}
