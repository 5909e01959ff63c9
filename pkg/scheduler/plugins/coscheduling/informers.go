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

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// watchPods keeps the cache's members in step with the scheduler's pod informer.
func (p *Plugin) watchPods(ctx context.Context, h fwk.Handle) error {
	kube, err := plugins.KubeInformers(h)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	return p.synced.Watch("pods", kube.Core().V1().Pods().Informer(), plugins.Handlers(
		func(pod *corev1.Pod) { p.podChanged(logger, pod) },
		func(pod *corev1.Pod) {
			p.cache.DeletePod(pod)
			p.podGroupChanged(pod)
			if id, ok := cache.IDOf(pod); ok && p.topology != nil {
				if _, known := p.cache.View(id); !known {
					p.topology.forget(id)
				}
			}
		},
	))
}

// podChanged records pod in the cache; when its gang just got its minimum of members, the gang's pending
// pods are moved to the front of the queue.
func (p *Plugin) podChanged(logger klog.Logger, pod *corev1.Pod) {
	id, complete := p.cache.AddOrUpdatePod(pod)
	if complete {
		logger.V(4).Info("Gang reached its minimum of members", "gang", id.String())
		p.activate(logger, p.cache.Pending(id))
	}
	p.podGroupChanged(pod)
}

// podGroupChanged schedules a status write for the PodGroup of pod's gang, if a PodGroup defines it.
func (p *Plugin) podGroupChanged(pod *corev1.Pod) {
	id, ok := cache.IDOf(pod)
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

// watchNetworkTopology watches the ClusterNetworkTopologies, for network-topology-aware placement.
func (p *Plugin) watchNetworkTopology(ctx context.Context, informers *crdinformers.Shared, h fwk.Handle) error {
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	informer := factory.Scheduling().V1alpha1().ClusterNetworkTopologies()
	p.topology.lister = informer.Lister()
	// The lister is read when a gang is planned; the handler only lets Sync wait for the informer's list.
	reg, err := informer.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{})
	if err != nil {
		return fmt.Errorf("watch ClusterNetworkTopologies: %w", err)
	}
	return informers.Sync(ctx, reg)
}

// watchPodGroups feeds PodGroups to the cache, from the plugin's informer and from the queueing hint (see
// plugins.Feed), and waits until the cache has every PodGroup. When a PodGroup is new or its spec or
// annotations changed (not only its status, which the plugin writes), its status is recomputed and its gang's
// pending pods are tried again.
func (p *Plugin) watchPodGroups(ctx context.Context, informers *crdinformers.Shared, h fwk.Handle) error {
	p.podGroups = plugins.NewFeed(p.cache.AddOrUpdatePodGroup, p.cache.DeletePodGroup)
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	changed := func(oldObj, newObj any) {
		if err := p.podGroups.Update(newObj); err != nil {
			utilruntime.HandleErrorWithLogger(logger, err, "Ignored an unexpected PodGroup event")
			return
		}
		pg := plugins.ObjectOf[v1alpha1.PodGroup](newObj)
		if old := plugins.ObjectOf[v1alpha1.PodGroup](oldObj); pg == nil || old != nil && !specChanged(old, pg) {
			return
		}
		id := cache.ID{Namespace: pg.Namespace, Name: pg.Name}
		p.queue.AddAfter(workItem{kind: podGroupStatus, namespace: id.Namespace, name: id.Name}, p.statusDelay)
		p.activate(logger, p.cache.Pending(id))
	}
	informer := factory.SchedulingSigs().V1alpha1().PodGroups()
	p.podGroupLister = informer.Lister()
	reg, err := informer.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { changed(nil, obj) },
		UpdateFunc: changed,
		DeleteFunc: p.podGroups.Handler(logger).DeleteFunc,
	})
	if err != nil {
		return fmt.Errorf("watch PodGroups: %w", err)
	}
	return informers.Sync(ctx, reg)
}
