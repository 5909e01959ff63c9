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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// Reasons of the Ready condition set by the controller besides the API's.
const (
	// ReasonNodeDeleted is the reason of a Reservation that failed because its node was deleted.
	ReasonNodeDeleted = "NodeDeleted"
)

// startController runs the controller's workers and periodic sweeps until ctx ends. Only the leading replica
// runs it (plugins.Options.Leadership); its writes use the object's resourceVersion besides, so a write from
// a stale cache fails instead of overwriting.
func (p *Plugin) startController(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("controller")
	ctx = klog.NewContext(ctx, logger)
	for range p.args.ControllerWorkers {
		go func() {
			for p.processNext(ctx) {
			}
		}()
	}
	go plugins.Every(ctx, p.clock, time.Duration(p.args.ResyncIntervalSeconds)*time.Second, func() { p.enqueueAll(false) })
	go plugins.Every(ctx, p.clock, time.Duration(p.args.GCIntervalSeconds)*time.Second, func() { p.enqueueAll(true) })
}

// enqueueAll queues every Reservation, or only the Succeeded and Failed ones.
func (p *Plugin) enqueueAll(terminalOnly bool) {
	list, err := p.reservationLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, r := range list {
		if !terminalOnly || isTerminal(r) {
			p.queue.Add(r.Name)
		}
	}
}

// processNext reconciles one queued Reservation; it returns false once the queue shuts down.
func (p *Plugin) processNext(ctx context.Context) bool {
	name, shutdown := p.queue.Get()
	if shutdown {
		return false
	}
	defer p.queue.Done(name)
	after, err := p.reconcile(ctx, name)
	if err != nil {
		reportError(klog.FromContext(ctx), err, "Could not reconcile a Reservation, retrying", "reservation", klog.KRef("", name))
		p.queue.AddRateLimited(name)
		return true
	}
	p.queue.Forget(name)
	if after > 0 {
		p.queue.AddAfter(name, after)
	}
	return true
}

// isTerminal reports whether r is Succeeded or Failed.
func isTerminal(r *schedv1alpha1.Reservation) bool {
	return r.Status.Phase == schedv1alpha1.ReservationSucceeded || r.Status.Phase == schedv1alpha1.ReservationFailed
}

// expiry returns when r expires: spec.expires, else creation + spec.ttl (24h when unset); false when ttl is 0.
func expiry(r *schedv1alpha1.Reservation) (time.Time, bool) {
	if r.Spec.Expires != nil {
		return r.Spec.Expires.Time, true
	}
	ttl := 24 * time.Hour
	if r.Spec.TTL != nil {
		ttl = r.Spec.TTL.Duration
	}
	if ttl <= 0 {
		return time.Time{}, false
	}
	return r.CreationTimestamp.Add(ttl), true
}

// reconcile brings the Reservation name and its reserve pod in line. It returns how long to wait before
// looking again (0: until the next event).
func (p *Plugin) reconcile(ctx context.Context, name string) (time.Duration, error) {
	r, err := p.reservationLister.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, p.deleteStrayReservePods(ctx, name, "")
	}
	if err != nil {
		return 0, fmt.Errorf("get reservation %s: %w", name, err)
	}
	if r.DeletionTimestamp != nil {
		return 0, p.deleteStrayReservePods(ctx, name, "")
	}
	now := p.clock.Now()
	if isTerminal(r) {
		p.cache.DeleteReservation(r.UID)
		if err := p.deleteStrayReservePods(ctx, name, ""); err != nil {
			return 0, err
		}
		return p.collect(ctx, r, now)
	}
	var after time.Duration
	if exp, ok := expiry(r); ok {
		if !now.Before(exp) {
			return 0, p.fail(ctx, r, schedv1alpha1.ReasonReservationExpired, fmt.Sprintf("Reservation expired at %s", exp.UTC().Format(time.RFC3339)))
		}
		after = exp.Sub(now)
	}
	if r.Status.NodeName == "" {
		if _, placed := p.cache.Placed(r.UID); placed {
			// Bind placed it; the informer has not caught up yet.
			return after, nil
		}
		return after, p.ensureReservePod(ctx, r)
	}
	if err := p.deleteStrayReservePods(ctx, name, ""); err != nil {
		return 0, err
	}
	if p.nodesSynced != nil && p.nodesSynced() {
		if _, err := p.nodes.Get(r.Status.NodeName); apierrors.IsNotFound(err) {
			return 0, p.fail(ctx, r, ReasonNodeDeleted, fmt.Sprintf("node %s was deleted", r.Status.NodeName))
		}
	}
	return after, p.syncOwners(ctx, r)
}

// ensureReservePod makes sure a pending Reservation has its reserve pod, and mirrors why the pod is not
// scheduled into the Reservation's Scheduled condition.
func (p *Plugin) ensureReservePod(ctx context.Context, r *schedv1alpha1.Reservation) error {
	ns := reservePodNamespace(r)
	pod, err := p.pods.Pods(ns).Get(r.Name)
	switch {
	case err == nil && !extension.IsReservePod(pod):
		return p.setPending(ctx, r, fmt.Sprintf("pod %s/%s already exists and is not the reserve pod of this reservation: rename the pod or the reservation", ns, r.Name))
	case err == nil && pod.Labels[extension.LabelReservationUID] != string(r.UID):
		// Left by an earlier Reservation of the same name: its deletion brings the Reservation back here.
		return p.deleteStrayReservePods(ctx, r.Name, r.UID)
	case err == nil:
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return p.setPending(ctx, r, c.Message)
			}
		}
		return p.setPending(ctx, r, "")
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("get reserve pod %s/%s: %w", ns, r.Name, err)
	}
	// The informers may lag behind Bind, which places the Reservation and then deletes its pod: read the
	// Reservation itself before creating another pod.
	live, err := p.client.SchedulingV1alpha1().Reservations().Get(ctx, r.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get reservation %s: %w", r.Name, err)
	}
	if live.UID != r.UID || live.Status.NodeName != "" || !isPending(live) {
		return nil
	}
	pod, err = newReservePod(live)
	if err != nil {
		return p.setPending(ctx, live, err.Error())
	}
	if _, err := p.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		if werr := p.setPending(ctx, live, fmt.Sprintf("cannot create reserve pod %s/%s: %v", ns, pod.Name, err)); werr != nil {
			return werr
		}
		return fmt.Errorf("create reserve pod %s/%s: %w", ns, pod.Name, err)
	}
	p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerReservation).Inc()
	klog.FromContext(ctx).V(2).Info("Created a reserve pod", "reservation", klog.KObj(live), "pod", klog.KObj(pod))
	return p.setPending(ctx, live, "")
}

// setPending writes phase Pending and, when message is not empty, the Scheduled=False condition with it.
func (p *Plugin) setPending(ctx context.Context, r *schedv1alpha1.Reservation, message string) error {
	status := r.Status.DeepCopy()
	status.Phase = schedv1alpha1.ReservationPending
	if message != "" {
		status.Conditions = setCondition(status.Conditions, schedv1alpha1.ReservationConditionScheduled, schedv1alpha1.ConditionStatusFalse,
			schedv1alpha1.ReasonReservationUnschedulable, message, metav1.NewTime(p.clock.Now()))
	}
	return p.writeStatus(ctx, r, status)
}

// fail writes phase Failed with the Ready=False condition, releases the reservation's resources at once and
// deletes its reserve pod.
func (p *Plugin) fail(ctx context.Context, r *schedv1alpha1.Reservation, reason, message string) error {
	status := r.Status.DeepCopy()
	status.Phase = schedv1alpha1.ReservationFailed
	status.Conditions = setCondition(status.Conditions, schedv1alpha1.ReservationConditionReady, schedv1alpha1.ConditionStatusFalse, reason, message, metav1.NewTime(p.clock.Now()))
	if err := p.writeStatus(ctx, r, status); err != nil {
		return err
	}
	p.cache.DeleteReservation(r.UID)
	klog.FromContext(ctx).V(2).Info("Reservation failed", "reservation", klog.KObj(r), "reason", reason, "message", message)
	return p.deleteStrayReservePods(ctx, r.Name, "")
}

// syncOwners writes allocated and currentOwners from the bound owner pods, and phase Succeeded once an
// allocate-once reservation has its owner.
func (p *Plugin) syncOwners(ctx context.Context, r *schedv1alpha1.Reservation) error {
	refs, allocated := p.cache.BoundOwners(r.UID, p.cache.Resources(r.Status.Allocatable))
	status := r.Status.DeepCopy()
	status.CurrentOwners = refs
	status.Allocated = nil
	if len(allocated) > 0 {
		status.Allocated = allocated.List()
	}
	if ptr.Deref(r.Spec.AllocateOnce, true) && len(refs) > 0 {
		status.Phase = schedv1alpha1.ReservationSucceeded
		status.Conditions = setCondition(status.Conditions, schedv1alpha1.ReservationConditionReady, schedv1alpha1.ConditionStatusFalse,
			schedv1alpha1.ReasonReservationSucceeded, fmt.Sprintf("Reservation is allocated by pod %s/%s", refs[0].Namespace, refs[0].Name), metav1.NewTime(p.clock.Now()))
	}
	if err := p.writeStatus(ctx, r, status); err != nil {
		return err
	}
	if status.Phase == schedv1alpha1.ReservationSucceeded {
		p.cache.DeleteReservation(r.UID)
	}
	return nil
}

// writeStatus writes status when it differs from r's, guarded by r's resourceVersion: a conflict is retried
// through the queue with the newer object.
func (p *Plugin) writeStatus(ctx context.Context, r *schedv1alpha1.Reservation, status *schedv1alpha1.ReservationStatus) error {
	if equality.Semantic.DeepEqual(&r.Status, status) {
		return nil
	}
	updated := r.DeepCopy()
	updated.Status = *status
	written, err := p.client.SchedulingV1alpha1().Reservations().UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("update the status of reservation %s: %w", r.Name, err)
	}
	p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerReservation).Inc()
	// The cache follows at once, as after Bind: pods requeued by the Reservation's event (kube-scheduler's
	// own informer may deliver it before the plugin's) must not be retried against what it held before.
	if err := p.reservations.Update(written); err != nil {
		return err
	}
	if status.Phase != r.Status.Phase {
		p.metrics.ReservationTransitions.WithLabelValues(string(status.Phase)).Inc()
	}
	return nil
}

// collect deletes a Succeeded or Failed Reservation gcDurationSeconds after it ended (its Ready condition's
// last transition, else its creation), or says how long until then; with disableGarbageCollection it keeps it.
func (p *Plugin) collect(ctx context.Context, r *schedv1alpha1.Reservation, now time.Time) (time.Duration, error) {
	if p.args.DisableGarbageCollection {
		return 0, nil
	}
	ended := r.CreationTimestamp.Time
	if c := getCondition(r.Status.Conditions, schedv1alpha1.ReservationConditionReady); c != nil && !c.LastTransitionTime.IsZero() {
		ended = c.LastTransitionTime.Time
	}
	due := ended.Add(time.Duration(p.args.GCDurationSeconds) * time.Second)
	if now.Before(due) {
		return due.Sub(now), nil
	}
	err := p.client.SchedulingV1alpha1().Reservations().Delete(ctx, r.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &r.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return 0, fmt.Errorf("delete reservation %s: %w", r.Name, err)
	}
	if err == nil {
		p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerReservation).Inc()
	}
	klog.FromContext(ctx).V(2).Info("Deleted an ended Reservation", "reservation", klog.KObj(r), "phase", r.Status.Phase)
	return 0, nil
}

// deleteStrayReservePods deletes the reserve pods of the Reservation name, except those of keep.
func (p *Plugin) deleteStrayReservePods(ctx context.Context, name string, keep types.UID) error {
	sel := labels.SelectorFromSet(labels.Set{extension.LabelReservePod: "true", extension.LabelReservationName: name})
	pods, err := p.pods.List(sel)
	if err != nil {
		return fmt.Errorf("list reserve pods of reservation %s: %w", name, err)
	}
	for _, pod := range pods {
		if keep != "" && pod.Labels[extension.LabelReservationUID] == string(keep) {
			continue
		}
		p.deleteReservePod(ctx, pod)
	}
	return nil
}
