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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
)

// errNotPending means a reserve pod's Reservation is gone, was replaced or is already placed.
var errNotPending = errors.New("the reservation is gone, was recreated or is no longer pending")

// Bind places the Reservation of a reserve pod instead of binding the pod: it writes the Reservation's status
// (nodeName, phase Available, allocatable = the template's requests, conditions Scheduled and Ready), records
// the reservation in the cache at once, and deletes the reserve pod. It returns Skip for every other pod, so
// that the next bind plugin (DefaultBinder) binds it, and Error when the status cannot be written; a reserve
// pod whose Reservation is gone or already placed is deleted.
func (p *Plugin) Bind(ctx context.Context, _ fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	if !extension.IsReservePod(pod) {
		return fwk.NewStatus(fwk.Skip)
	}
	logger := klog.FromContext(ctx)
	name, uid := pod.Labels[extension.LabelReservationName], types.UID(pod.Labels[extension.LabelReservationUID])
	var placed *schedv1alpha1.Reservation
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		r, err := p.client.SchedulingV1alpha1().Reservations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if r.UID != uid || r.Status.NodeName != "" || !isPending(r) || r.DeletionTimestamp != nil {
			return errNotPending
		}
		r = r.DeepCopy()
		setPlaced(r, pod, nodeName, p.cache, metav1.NewTime(p.clock.Now()))
		placed, err = p.client.SchedulingV1alpha1().Reservations().UpdateStatus(ctx, r, metav1.UpdateOptions{})
		return err
	})
	if errors.Is(err, errNotPending) || apierrors.IsNotFound(err) {
		p.deleteReservePod(ctx, pod)
		return fwk.AsStatus(fmt.Errorf("place reservation %q: %w", name, errNotPending))
	}
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("write the status of reservation %q: %w", name, err))
	}
	p.metrics.ReservationTransitions.WithLabelValues(string(schedv1alpha1.ReservationAvailable)).Inc()
	if err := p.reservations.Update(placed); err != nil {
		return fwk.AsStatus(err)
	}
	logger.V(2).Info("Placed a reservation", "reservation", klog.KObj(placed), "node", nodeName, "allocatable", cache.Resources(placed.Status.Allocatable, nil))
	p.deleteReservePod(ctx, pod)
	return nil
}

// isPending reports whether r waits to be placed.
func isPending(r *schedv1alpha1.Reservation) bool {
	return r.Status.Phase == "" || r.Status.Phase == schedv1alpha1.ReservationPending
}

// setPlaced fills in the status of r placed on node by its reserve pod.
func setPlaced(r *schedv1alpha1.Reservation, pod *corev1.Pod, node string, c *cache.Cache, now metav1.Time) {
	r.Status.NodeName = node
	r.Status.Phase = schedv1alpha1.ReservationAvailable
	allocatable := c.PodRequests(pod)
	if isPreAllocating(pod) {
		// Its reserve pod requests nothing; what it reserves is its template's.
		allocatable = templateRequests(c, r)
	}
	r.Status.Allocatable = allocatable.List()
	r.Status.Allocated = nil
	r.Status.CurrentOwners = nil
	r.Status.Conditions = setCondition(r.Status.Conditions, schedv1alpha1.ReservationConditionScheduled, schedv1alpha1.ConditionStatusTrue,
		schedv1alpha1.ReasonReservationScheduled, fmt.Sprintf("Reservation is scheduled to node %s", node), now)
	r.Status.Conditions = setCondition(r.Status.Conditions, schedv1alpha1.ReservationConditionReady, schedv1alpha1.ConditionStatusTrue,
		schedv1alpha1.ReasonReservationAvailable, "Reservation is available", now)
}

// setCondition sets the condition of type t in conds and returns conds. The transition time changes only with
// the status, the probe time only with the status, reason or message.
func setCondition(conds []schedv1alpha1.ReservationCondition, t schedv1alpha1.ReservationConditionType, status schedv1alpha1.ConditionStatus, reason, message string, now metav1.Time) []schedv1alpha1.ReservationCondition {
	for i := range conds {
		c := &conds[i]
		if c.Type != t {
			continue
		}
		if c.Status == status && c.Reason == reason && c.Message == message {
			return conds
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message, c.LastProbeTime = status, reason, message, now
		return conds
	}
	return append(conds, schedv1alpha1.ReservationCondition{Type: t, Status: status, Reason: reason, Message: message, LastProbeTime: now, LastTransitionTime: now})
}

// getCondition returns the condition of type t, or nil.
func getCondition(conds []schedv1alpha1.ReservationCondition, t schedv1alpha1.ReservationConditionType) *schedv1alpha1.ReservationCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// deleteReservePod deletes the reserve pod, if it is still this one.
func (p *Plugin) deleteReservePod(ctx context.Context, pod *corev1.Pod) {
	err := p.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	switch {
	case err == nil:
		klog.FromContext(ctx).V(3).Info("Deleted a reserve pod", "pod", klog.KObj(pod))
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
	default:
		// The controller deletes it later.
		reportError(klog.FromContext(ctx), err, "Could not delete a reserve pod", "pod", klog.KObj(pod))
	}
}
