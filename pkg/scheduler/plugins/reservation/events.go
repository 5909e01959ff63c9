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

package reservation

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// EventsToRegister returns the events after which a pod this plugin rejected may fit: a Reservation placed,
// changed, ended or deleted; an assigned pod deleted (it may release an allocation or free the node); a node
// added or its allocatable changed; for the reserve pod of a pre-allocating Reservation, a pod bound, or a
// bound pod's labels or annotations changed (it may have become pre-allocatable).
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: plugins.ReservationEvents, ActionType: fwk.Add | fwk.Update | fwk.Delete}, QueueingHintFn: p.isSchedulableAfterReservationChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: isSchedulableAfterPodChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}},
	}, nil
}

// isSchedulableAfterReservationChange queues the pod when a Reservation is added or deleted, or when its spec,
// labels, phase, node, allocatable or allocated change; condition-only updates are skipped. The event goes to
// the cache first (plugins.Feed), so that the retry it causes sees it.
func (p *Plugin) isSchedulableAfterReservationChange(logger klog.Logger, pod *corev1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if err := p.reservations.Event(oldObj, newObj); err != nil {
		return fwk.Queue, err
	}
	if oldObj == nil || newObj == nil {
		return fwk.Queue, nil
	}
	oldR, err := p.reservations.Object(oldObj)
	if err != nil {
		return fwk.Queue, err
	}
	newR, err := p.reservations.Object(newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if !equality.Semantic.DeepEqual(oldR.Spec, newR.Spec) || !equality.Semantic.DeepEqual(oldR.Labels, newR.Labels) ||
		oldR.Status.Phase != newR.Status.Phase || oldR.Status.NodeName != newR.Status.NodeName ||
		!equality.Semantic.DeepEqual(oldR.Status.Allocatable, newR.Status.Allocatable) ||
		!equality.Semantic.DeepEqual(oldR.Status.Allocated, newR.Status.Allocated) {
		logger.V(5).Info("Reservation changed, the pod may fit now", "pod", klog.KObj(pod), "reservation", klog.KObj(newR))
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// isSchedulableAfterPodChange queues the reserve pod of a pre-allocating Reservation when a pod is bound or a
// bound pod's labels or annotations change; every other pod is skipped (a new or changed pod frees nothing).
func isSchedulableAfterPodChange(logger klog.Logger, pod *corev1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if !isPreAllocating(pod) {
		return fwk.QueueSkip, nil
	}
	newPod, ok := newObj.(*corev1.Pod)
	if !ok || newPod.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	if oldPod, ok := oldObj.(*corev1.Pod); ok && oldPod.Spec.NodeName != "" &&
		equality.Semantic.DeepEqual(oldPod.Labels, newPod.Labels) && equality.Semantic.DeepEqual(oldPod.Annotations, newPod.Annotations) {
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("A bound pod changed, the reservation may pre-allocate it now", "pod", klog.KObj(pod), "changed", klog.KObj(newPod))
	return fwk.Queue, nil
}
