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
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/core"
)

// PodGroupEvent is the event resource of PodGroups, "<plural>.<version>.<group>" as kube-scheduler expects
// for custom resources; kube-scheduler watches them with a dynamic informer of its own.
var PodGroupEvent = fwk.EventResource(fmt.Sprintf("podgroups.%s.%s", v1alpha1.SchemeGroupVersion.Version, v1alpha1.SchemeGroupVersion.Group))

// EventsToRegister returns the events that may make a pod this plugin rejected schedulable: a PodGroup
// added or changed, and a pod added (a new member, or a bound one counting under waiting-and-running). The
// plugin also moves a gang's pods to the front of the queue itself when the gang gets its minimum of
// members, its PodGroup, or a member waiting in Permit.
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: PodGroupEvent, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: p.isSchedulableAfterPodGroupChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Add}, QueueingHintFn: p.isSchedulableAfterPodAdd},
	}, nil
}

// isSchedulableAfterPodGroupChange queues the pod when the PodGroup of its gang was added or its spec or
// annotations changed (not its status, which the plugin writes itself). Like the pod hint, it hands the
// object to the cache first, since kube-scheduler's informer may deliver it before the plugin's.
func (p *Plugin) isSchedulableAfterPodGroupChange(logger klog.Logger, pod *corev1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	pg, err := crdinformers.As[v1alpha1.PodGroup](newObj)
	if err != nil {
		return fwk.Queue, err
	}
	id, ok := core.IDOf(pod)
	if !ok || id != (core.ID{Namespace: pg.Namespace, Name: pg.Name}) {
		return fwk.QueueSkip, nil
	}
	if oldObj != nil {
		old, err := crdinformers.As[v1alpha1.PodGroup](oldObj)
		if err != nil {
			return fwk.Queue, err
		}
		if equality.Semantic.DeepEqual(old.Spec, pg.Spec) && maps.Equal(old.Annotations, pg.Annotations) {
			return fwk.QueueSkip, nil
		}
	}
	p.cache.AddOrUpdatePodGroup(pg)
	logger.V(5).Info("PodGroup of the pod's gang changed", "pod", klog.KObj(pod), "podGroup", klog.KObj(pg))
	return fwk.Queue, nil
}

// isSchedulableAfterPodAdd queues the pod when the added pod belongs to its gang or the gang's group.
func (p *Plugin) isSchedulableAfterPodAdd(logger klog.Logger, pod *corev1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	added, ok := newObj.(*corev1.Pod)
	if !ok {
		return fwk.Queue, fmt.Errorf("want a pod, got %T", newObj)
	}
	addedID, ok := core.IDOf(added)
	if !ok {
		return fwk.QueueSkip, nil
	}
	id, ok := core.IDOf(pod)
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

// podOf returns the pod of an informer event, unwrapping tombstones; nil for anything else.
func podOf(obj any) *corev1.Pod {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, _ := obj.(*corev1.Pod)
	return pod
}

// watchPods keeps the cache's members in step with the scheduler's pod informer.
func (p *Plugin) watchPods(ctx context.Context, h fwk.Handle) error {
	informers := h.SharedInformerFactory()
	if informers == nil {
		return errors.New("the framework handle has no informer factory")
	}
	logger := klog.FromContext(ctx)
	reg, err := informers.Core().V1().Pods().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.podChanged(logger, podOf(obj)) },
		UpdateFunc: func(_, obj any) { p.podChanged(logger, podOf(obj)) },
		DeleteFunc: func(obj any) {
			pod := podOf(obj)
			if pod == nil {
				return
			}
			p.cache.DeletePod(pod)
			p.podGroupChanged(pod)
		},
	})
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	p.podsSynced = reg.HasSynced
	return nil
}

// podChanged records pod in the cache; when its gang just got its minimum of members, the gang's pending
// pods are moved to the front of the queue.
func (p *Plugin) podChanged(logger klog.Logger, pod *corev1.Pod) {
	if pod == nil {
		return
	}
	id, complete := p.cache.AddOrUpdatePod(pod)
	if complete {
		logger.V(4).Info("Gang reached its minimum of members", "gang", id.String())
		p.activate(logger, p.cache.Pending(id))
	}
	p.podGroupChanged(pod)
}

// podGroupChanged schedules a status write for the PodGroup of pod's gang, if a PodGroup defines it.
func (p *Plugin) podGroupChanged(pod *corev1.Pod) {
	id, ok := core.IDOf(pod)
	if !ok {
		return
	}
	if v, ok := p.cache.View(id); ok && v.Spec.FromPodGroup {
		p.queue.AddAfter(workItem{kind: podGroupStatus, namespace: id.Namespace, name: id.Name}, p.statusDelay)
	}
}

// activate moves pods to the front of the scheduling queue.
func (p *Plugin) activate(logger klog.Logger, pods []*corev1.Pod) {
	if len(pods) == 0 {
		return
	}
	m := make(map[string]*corev1.Pod, len(pods))
	for _, pod := range pods {
		m[pod.Namespace+"/"+pod.Name] = pod
	}
	p.handle.Activate(logger, m)
}

// watchPodGroups keeps the cache's gangs in step with the PodGroup informer, which it starts and waits for.
func (p *Plugin) watchPodGroups(ctx context.Context, informers *crdinformers.Shared, h fwk.Handle) error {
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	podGroups := factory.SchedulingSigs().V1alpha1().PodGroups()
	// changed records a PodGroup; when it is new or its spec or annotations changed (not only its status,
	// which the plugin writes), its status is recomputed and its gang's pending pods are tried again.
	changed := func(oldObj, newObj any) {
		pg, err := crdinformers.As[v1alpha1.PodGroup](newObj)
		if err != nil {
			logger.Error(err, "Ignored an unexpected PodGroup event")
			return
		}
		p.cache.AddOrUpdatePodGroup(pg)
		if old, err := crdinformers.As[v1alpha1.PodGroup](oldObj); err == nil && equality.Semantic.DeepEqual(old.Spec, pg.Spec) && maps.Equal(old.Annotations, pg.Annotations) {
			return
		}
		id := core.ID{Namespace: pg.Namespace, Name: pg.Name}
		p.queue.AddAfter(workItem{kind: podGroupStatus, namespace: id.Namespace, name: id.Name}, p.statusDelay)
		p.activate(logger, p.cache.Pending(id))
	}
	reg, err := podGroups.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { changed(nil, obj) },
		UpdateFunc: changed,
		DeleteFunc: func(obj any) {
			pg, err := crdinformers.As[v1alpha1.PodGroup](obj)
			if err != nil {
				logger.Error(err, "Ignored an unexpected PodGroup event")
				return
			}
			p.cache.DeletePodGroup(pg)
		},
	})
	if err != nil {
		return fmt.Errorf("watch PodGroups: %w", err)
	}
	p.podGroups = podGroups.Lister()
	if err := informers.Start(ctx); err != nil {
		return err
	}
	// The informer has synced; its handlers follow within moments.
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return reg.HasSynced(), nil }); err != nil {
		return fmt.Errorf("wait for PodGroups: %w", err)
	}
	return nil
}
