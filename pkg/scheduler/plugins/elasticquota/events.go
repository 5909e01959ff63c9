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

package elasticquota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota/cache"
)

// configAnnotations are the quota annotations that change runtime quotas or pods' quotas; the others are
// written by the plugin itself.
var configAnnotations = []string{extension.AnnotationSharedWeight, extension.AnnotationGuaranteed, extension.AnnotationQuotaNamespaces}

// EventsToRegister returns the events that may make a pod this plugin rejected schedulable: an ElasticQuota
// added, deleted or reconfigured; a pod deleted (it releases its used resources, or its request, which frees
// lent resources); a node added or its allocatable changed (the cluster grows). Without enableQueueHint
// every such event requeues the pods.
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	events := []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: plugins.ElasticQuotaEvents, ActionType: fwk.Add | fwk.Update | fwk.Delete}, QueueingHintFn: p.isSchedulableAfterQuotaChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}, QueueingHintFn: isSchedulableAfterPodDelete},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}, QueueingHintFn: isSchedulableAfterNodeChange},
	}
	if !p.args.EnableQueueHint {
		for i := range events {
			events[i].QueueingHintFn = nil
		}
	}
	return events, nil
}

// isSchedulableAfterQuotaChange queues the pod when a quota appears or goes, or its spec, labels or
// configuration annotations change; not when only its status or the plugin's own annotations do. The event
// goes to the manager first (plugins.Feed), so that the retry it causes sees it.
func (p *Plugin) isSchedulableAfterQuotaChange(logger klog.Logger, pod *corev1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if err := p.quotas.Event(oldObj, newObj); err != nil {
		return fwk.Queue, err
	}
	if oldObj == nil || newObj == nil {
		return fwk.Queue, nil
	}
	oldQuota, err := p.quotas.Object(oldObj)
	if err != nil {
		return fwk.Queue, err
	}
	newQuota, err := p.quotas.Object(newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if !equality.Semantic.DeepEqual(oldQuota.Spec, newQuota.Spec) || !equality.Semantic.DeepEqual(oldQuota.Labels, newQuota.Labels) {
		logger.V(5).Info("ElasticQuota changed, the pod may fit now", "pod", klog.KObj(pod), "elasticQuota", klog.KObj(newQuota))
		return fwk.Queue, nil
	}
	for _, key := range configAnnotations {
		if oldQuota.Annotations[key] != newQuota.Annotations[key] {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// isSchedulableAfterPodDelete queues the pod when the deleted pod requested anything.
func isSchedulableAfterPodDelete(logger klog.Logger, pod *corev1.Pod, oldObj, _ any) (fwk.QueueingHint, error) {
	deleted := plugins.PodOf(oldObj)
	if deleted == nil {
		return fwk.Queue, fmt.Errorf("want a deleted pod, got %T", oldObj)
	}
	if cache.PodRequest(deleted).IsZero() {
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("Pod deleted, the pod's quota may have room now", "pod", klog.KObj(pod), "deletedPod", klog.KObj(deleted))
	return fwk.Queue, nil
}

// isSchedulableAfterNodeChange queues the pod for a new node or a changed allocatable.
func isSchedulableAfterNodeChange(_ klog.Logger, _ *corev1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	oldNode, newNode, err := plugins.NodesOf(oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if oldNode == nil {
		return fwk.Queue, nil
	}
	if equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable) {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}
