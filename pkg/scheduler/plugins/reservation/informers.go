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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
)

// watchReservations feeds Reservations to the cache, from the plugin's informer, the queueing hint and the
// plugin's own status writes (see plugins.Feed), wakes the controller for each, and waits until the cache has
// every Reservation.
func (p *Plugin) watchReservations(ctx context.Context, h fwk.Handle, informers *crdinformers.Shared) error {
	logger := klog.FromContext(ctx)
	p.reservations = plugins.NewFeed(
		func(r *schedv1alpha1.Reservation) {
			if err := p.cache.UpdateReservation(r); err != nil {
				logger.V(2).Info("Ignored owners of a Reservation", "reservation", klog.KObj(r), "err", err)
			}
		},
		func(r *schedv1alpha1.Reservation) { p.cache.DeleteReservation(r.UID) },
	)
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	informer := factory.Scheduling().V1alpha1().Reservations()
	p.reservationLister = informer.Lister()
	feed := p.reservations.Handler(logger)
	reg, err := informer.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			feed.OnAdd(obj, false)
			p.wake(obj)
		},
		UpdateFunc: func(oldObj, newObj any) {
			feed.OnUpdate(oldObj, newObj)
			p.wake(newObj)
		},
		DeleteFunc: func(obj any) {
			feed.OnDelete(obj)
			p.wake(obj)
		},
	})
	if err != nil {
		return fmt.Errorf("watch Reservations: %w", err)
	}
	return informers.Sync(ctx, reg)
}

// wake queues the Reservation of an event for the controller.
func (p *Plugin) wake(obj any) {
	if r := plugins.ObjectOf[schedv1alpha1.Reservation](obj); r != nil {
		p.queue.Add(r.Name)
	}
}

// watchPodsAndNodes follows owner pods (allocations, rebuilt from their reservation-allocated annotation on
// start), reserve pods and node deletions. The scheduler starts these informers after building plugins.
func (p *Plugin) watchPodsAndNodes(ctx context.Context, h fwk.Handle) error {
	kube, err := plugins.KubeInformers(h)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	pods := kube.Core().V1().Pods()
	p.pods = pods.Lister()
	err = p.synced.Watch("pods", pods.Informer(), plugins.Handlers(
		func(pod *corev1.Pod) { p.podChanged(logger, pod, false) },
		func(pod *corev1.Pod) { p.podChanged(logger, pod, true) },
	))
	if err != nil {
		return err
	}
	nodes := kube.Core().V1().Nodes()
	p.nodes = nodes.Lister()
	nodeReg, err := nodes.Informer().AddEventHandler(plugins.Handlers(nil, func(node *corev1.Node) {
		for _, r := range p.cache.Snapshot().OnNode(node.Name) {
			p.queue.Add(r.Name)
		}
	}))
	if err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	p.synced = append(p.synced, nodeReg)
	p.nodesSynced = nodeReg.HasSynced
	return nil
}

// podChanged keeps the allocations of owner pods and wakes the controller for reserve pods and owners.
func (p *Plugin) podChanged(logger klog.Logger, pod *corev1.Pod, deleted bool) {
	if extension.IsReservePod(pod) {
		p.queue.Add(pod.Labels[extension.LabelReservationName])
		return
	}
	if deleted || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil {
		// A terminating owner releases what it allocated.
		if a, ok := p.cache.Forget(pod.UID); ok {
			p.queue.Add(a.ResvName)
		}
		return
	}
	if pod.Spec.NodeName == "" {
		return
	}
	a, err := extension.GetReservationAllocated(pod.Annotations)
	if err != nil {
		logger.V(2).Info("Ignored a malformed annotation of a pod", "pod", klog.KObj(pod), "err", err)
		return
	}
	if a == nil {
		return
	}
	if p.cache.SetBound(cache.Allocation{
		Pod:      podRef(pod),
		ResvUID:  a.UID,
		ResvName: a.Name,
		Requests: p.cache.PodRequests(pod),
	}) && a.Name != "" {
		p.queue.Add(a.Name)
	}
}

// podRef is the object reference of pod in status.currentOwners.
func podRef(pod *corev1.Pod) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
}
