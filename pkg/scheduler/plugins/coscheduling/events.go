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

package coscheduling

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// EventsToRegister returns the events that may make a pod this plugin rejected schedulable: a PodGroup
// added or changed, and a pod added (a new member, or a bound one counting under waiting-and-running). The
// plugin also moves a gang's pods to the front of the queue itself when the gang gets its minimum of
// members, its PodGroup, or a member waiting in Permit.
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	events := []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: plugins.PodGroupEvents, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: p.isSchedulableAfterPodGroupChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Add}, QueueingHintFn: p.isSchedulableAfterPodAdd},
	}
	if p.topology != nil {
		// A new or changed topology may hold a gang that no domain held; such changes are rare.
		events = append(events, fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: plugins.ClusterNetworkTopologyEvents, ActionType: fwk.Add | fwk.Update}})
	}
	return events, nil
}

// isSchedulableAfterPodGroupChange queues the pod when the PodGroup of its gang was added or its spec or
// annotations changed (not its status, which the plugin writes itself). The event goes to the cache first
// (plugins.Feed), since kube-scheduler's informer may deliver it before the plugin's.
func (p *Plugin) isSchedulableAfterPodGroupChange(logger klog.Logger, pod *corev1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if err := p.podGroups.Event(oldObj, newObj); err != nil {
		return fwk.Queue, err
	}
	pg, err := p.podGroups.Object(newObj)
	if err != nil {
		return fwk.Queue, err
	}
	id, ok := cache.IDOf(pod)
	if !ok || id != (cache.ID{Namespace: pg.Namespace, Name: pg.Name}) {
		return fwk.QueueSkip, nil
	}
	if oldObj != nil {
		old, err := p.podGroups.Object(oldObj)
		if err != nil {
			return fwk.Queue, err
		}
		if !specChanged(old, pg) {
			return fwk.QueueSkip, nil
		}
	}
	logger.V(5).Info("PodGroup of the pod's gang changed", "pod", klog.KObj(pod), "podGroup", klog.KObj(pg))
	return fwk.Queue, nil
}

// isSchedulableAfterPodAdd queues the pod when the added pod belongs to its gang or the gang's group.
func (p *Plugin) isSchedulableAfterPodAdd(logger klog.Logger, pod *corev1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	added, ok := newObj.(*corev1.Pod)
	if !ok {
		return fwk.Queue, fmt.Errorf("want a pod, got %T", newObj)
	}
	addedID, ok := cache.IDOf(added)
	if !ok {
		return fwk.QueueSkip, nil
	}
	id, ok := cache.IDOf(pod)
	if !ok {
		return fwk.QueueSkip, nil
	}
	if addedID != id {
		v, ok := p.cache.View(id)
		if !ok || !slices.Contains(v.Spec.Groups, addedID) {
			return fwk.QueueSkip, nil
		}
	}
	p.cache.AddOrUpdatePod(added)
	logger.V(5).Info("Pod added to the pod's gang group", "pod", klog.KObj(pod), "addedPod", klog.KObj(added))
	return fwk.Queue, nil
}

// specChanged reports whether a PodGroup's spec or annotations changed, not only its status (which the
// plugin writes itself).
func specChanged(old, pg *v1alpha1.PodGroup) bool {
	return !equality.Semantic.DeepEqual(old.Spec, pg.Spec) || !maps.Equal(old.Annotations, pg.Annotations)
}
