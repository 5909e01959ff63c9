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

package deviceshare

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/deviceshare/cache"
)

// watch wires the plugin's state: nodes' devices from their Device objects, allocations from the bound pods'
// device-allocated annotations.
func (p *Plugin) watch(ctx context.Context, h fwk.Handle, informers *crdinformers.Shared) error {
	logger := klog.FromContext(ctx)
	kube, err := plugins.KubeInformers(h)
	if err != nil {
		return err
	}
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	reg, err := factory.Scheduling().V1alpha1().Devices().Informer().AddEventHandler(plugins.Handlers(
		func(d *schedv1alpha1.Device) { p.deviceChanged(logger, d) },
		func(d *schedv1alpha1.Device) { p.cache.SetNode(d.Name, nil); p.problems.Delete(d.Name) },
	))
	if err != nil {
		return fmt.Errorf("watch Devices: %w", err)
	}
	resvReg, err := factory.Scheduling().V1alpha1().Reservations().Informer().AddEventHandler(plugins.Handlers(
		func(r *schedv1alpha1.Reservation) { p.reservationChanged(logger, r, false) },
		func(r *schedv1alpha1.Reservation) { p.reservationChanged(logger, r, true) },
	))
	if err != nil {
		return fmt.Errorf("watch Reservations: %w", err)
	}
	if err := p.synced.Watch("pods", kube.Core().V1().Pods().Informer(), plugins.Handlers(
		func(pod *corev1.Pod) { p.podChanged(logger, pod, false) },
		func(pod *corev1.Pod) { p.podChanged(logger, pod, true) },
	)); err != nil {
		return err
	}
	return informers.Sync(ctx, reg, resvReg)
}

// reservationChanged holds the devices of an Available Reservation (from the device-allocated written on it at
// its placement) for its owners, and releases them when it ends or goes.
func (p *Plugin) reservationChanged(logger klog.Logger, r *schedv1alpha1.Reservation, deleted bool) {
	if deleted || r.Status.Phase != schedv1alpha1.ReservationAvailable || r.Status.NodeName == "" || r.DeletionTimestamp != nil {
		p.cache.Forget(r.UID)
		return
	}
	alloc, err := extension.GetDeviceAllocations(r.Annotations)
	if err != nil {
		logger.V(2).Info("Ignored a malformed annotation of a Reservation", "reservation", klog.KObj(r), "err", err)
		return
	}
	if len(alloc) == 0 {
		return
	}
	p.cache.SetBound(r.UID, cache.Allocation{Node: r.Status.NodeName, Devices: alloc, Reserves: true})
}

// deviceChanged rebuilds a node's devices from its Device; entries that do not make sense are left out,
// logged once, and named when a pod does not fit there.
func (p *Plugin) deviceChanged(logger klog.Logger, d *schedv1alpha1.Device) {
	n, err := cache.NodeFromDevice(d)
	if err != nil {
		msg := err.Error()
		if old, loaded := p.problems.Swap(d.Name, msg); !loaded || old != msg {
			logger.V(2).Info("Left out entries of a node's Device", "node", d.Name, "err", err)
		}
	} else {
		p.problems.Delete(d.Name)
	}
	p.cache.SetNode(d.Name, n)
}

// podChanged records the devices of a bound pod from its device-allocated annotation, and forgets those of a
// pod that ended or was deleted.
func (p *Plugin) podChanged(logger klog.Logger, pod *corev1.Pod, deleted bool) {
	if deleted || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil {
		p.cache.Forget(pod.UID)
		return
	}
	if pod.Spec.NodeName == "" {
		return
	}
	alloc, err := extension.GetDeviceAllocations(pod.Annotations)
	if err != nil {
		logger.V(2).Info("Ignored a malformed annotation of a pod", "pod", klog.KObj(pod), "err", err)
		return
	}
	if len(alloc) == 0 {
		// A pod bound before its annotation is written keeps what Reserve gave it.
		return
	}
	a := cache.Allocation{Node: pod.Spec.NodeName, Devices: alloc}
	if ra, err := extension.GetReservationAllocated(pod.Annotations); err == nil && ra != nil {
		a.Reservation = ra.UID
	}
	p.cache.SetBound(pod.UID, a)
}
