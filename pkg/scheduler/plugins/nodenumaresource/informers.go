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

package nodenumaresource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	topologylisters "github.com/koord-dev/koord/pkg/client/listers/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// watch wires the plugin's state: nodes from their NodeResourceTopologies (and the Node's reservation
// annotation), allocations from the bound pods' resource-status.
func (p *Plugin) watch(ctx context.Context, h fwk.Handle, informers *crdinformers.Shared) error {
	logger := klog.FromContext(ctx)
	kube, err := plugins.KubeInformers(h)
	if err != nil {
		return err
	}
	nodeLister := kube.Core().V1().Nodes().Lister()
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	nrts := factory.Topology().V1alpha1().NodeResourceTopologies()
	p.nrts = nrts.Lister()
	refresh := func(name string) {
		node, err := nodeLister.Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			node = nil
		}
		p.refreshNode(logger, name, node)
	}
	reg, err := nrts.Informer().AddEventHandler(plugins.Handlers(
		func(nrt *topologyv1alpha1.NodeResourceTopology) { refresh(nrt.Name) },
		func(nrt *topologyv1alpha1.NodeResourceTopology) {
			p.cache.SetNode(nrt.Name, nil)
			p.problems.Delete(nrt.Name)
		},
	))
	if err != nil {
		return fmt.Errorf("watch NodeResourceTopologies: %w", err)
	}
	resvReg, err := factory.Scheduling().V1alpha1().Reservations().Informer().AddEventHandler(plugins.Handlers(
		func(r *schedv1alpha1.Reservation) { p.reservationChanged(logger, r, false) },
		func(r *schedv1alpha1.Reservation) { p.reservationChanged(logger, r, true) },
	))
	if err != nil {
		return fmt.Errorf("watch Reservations: %w", err)
	}
	if err := p.synced.Watch("nodes", kube.Core().V1().Nodes().Informer(), plugins.Handlers(
		func(node *corev1.Node) { p.notePolicy(node, false); p.refreshNode(logger, node.Name, node) },
		func(node *corev1.Node) { p.notePolicy(node, true) },
	)); err != nil {
		return err
	}
	if err := p.synced.Watch("pods", kube.Core().V1().Pods().Informer(), plugins.Handlers(
		func(pod *corev1.Pod) { p.podChanged(logger, pod, false) },
		func(pod *corev1.Pod) { p.podChanged(logger, pod, true) },
	)); err != nil {
		return err
	}
	return informers.Sync(ctx, reg, resvReg)
}

// reservationChanged holds the CPUs of an Available Reservation (from the resource-status written on it at
// its placement) for its owners, and releases them when it ends or goes.
func (p *Plugin) reservationChanged(logger klog.Logger, r *schedv1alpha1.Reservation, deleted bool) {
	if deleted || r.Status.Phase != schedv1alpha1.ReservationAvailable || r.Status.NodeName == "" || r.DeletionTimestamp != nil {
		p.cache.Forget(r.UID)
		return
	}
	status, err := extension.GetResourceStatus(r.Annotations)
	if err != nil {
		logger.V(2).Info("Ignored a malformed annotation of a Reservation", "reservation", klog.KObj(r), "err", err)
		return
	}
	if status == nil || status.CPUSet == "" {
		return
	}
	ids, _ := status.CPUs()
	a := cache.Allocation{Node: r.Status.NodeName, CPUs: cpuset.New(ids...), NUMA: map[int]quantity.Amounts{}, Reserves: true}
	for _, n := range status.NUMANodeResources {
		a.NUMA[int(n.Node)] = quantity.FromList(n.Resources)
	}
	p.cache.SetBound(r.UID, a)
}

// refreshNode rebuilds the state of the node name from its NodeResourceTopology; a topology that does not
// parse leaves the node without one, and Filter says why.
func (p *Plugin) refreshNode(logger klog.Logger, name string, node *corev1.Node) {
	if p.nrts == nil {
		return
	}
	nrt, err := p.nrts.Get(name)
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		return
	}
	n, err := cache.NodeFromTopology(nrt, node)
	if err != nil {
		p.cache.SetNode(name, nil)
		msg := fmt.Sprintf("NodeResourceTopology %s: %v", name, err)
		if old, loaded := p.problems.Swap(name, msg); !loaded || old != msg {
			logger.V(2).Info("Ignored a node's topology", "node", name, "err", err)
		}
		return
	}
	p.problems.Delete(name)
	p.cache.SetNode(name, n)
}

// podChanged records the allocation of a bound pod from its resource-status, and forgets that of a pod that
// ended or was deleted.
func (p *Plugin) podChanged(logger klog.Logger, pod *corev1.Pod, deleted bool) {
	if deleted || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil {
		p.cache.Forget(pod.UID)
		return
	}
	if pod.Spec.NodeName == "" {
		return
	}
	status, err := extension.GetResourceStatus(pod.Annotations)
	if err != nil {
		logger.V(2).Info("Ignored a malformed annotation of a pod", "pod", klog.KObj(pod), "err", err)
		return
	}
	if status == nil || (status.CPUSet == "" && len(status.NUMANodeResources) == 0) {
		return
	}
	ids, _ := status.CPUs()
	a := cache.Allocation{Node: pod.Spec.NodeName, CPUs: cpuset.New(ids...), NUMA: map[int]quantity.Amounts{}}
	for _, r := range status.NUMANodeResources {
		a.NUMA[int(r.Node)] = quantity.FromList(r.Resources)
	}
	if spec, err := extension.GetResourceSpec(pod.Annotations); err == nil && spec != nil {
		a.Exclusive = spec.PreferredCPUExclusivePolicy
	}
	if ra, err := extension.GetReservationAllocated(pod.Annotations); err == nil && ra != nil {
		a.Reservation = ra.UID
	}
	p.cache.SetBound(pod.UID, a)
}

// nrtLister is what the plugin reads NodeResourceTopologies with.
type nrtLister = topologylisters.NodeResourceTopologyLister
