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

package migration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

// run moves a job that is neither finished nor paused forward by as many steps as it can.
func (c *Controller) run(ctx context.Context, job *schedv1alpha1.PodMigrationJob) (reconcile.Result, error) {
	if isPending(job) {
		if res, started, err := c.start(ctx, job); err != nil || !started {
			return res, err
		}
	}
	if job.Spec.Mode == schedv1alpha1.PodMigrationJobModeEvictionDirectly {
		done, res, err := c.evict(ctx, job)
		if err != nil || !done {
			return res, err
		}
		return reconcile.Result{}, c.succeed(ctx, job, "", fmt.Sprintf("Pod %q has been evicted", podName(job)))
	}
	return c.reservationFirst(ctx, job)
}

// start turns a Pending job that arbitration let through (or any, without arbitration) into a Running one. It
// fills in spec.podRef.uid and the mode the job runs in, and ends a dry-run job.
func (c *Controller) start(ctx context.Context, job *schedv1alpha1.PodMigrationJob) (reconcile.Result, bool, error) {
	arbitrating := c.args.ArbitrationArgs != nil && c.args.ArbitrationArgs.Enabled
	if arbitrating && job.Annotations[AnnotationPassedArbitration] != "true" {
		// Arbitration annotates the job when it may run; that update brings it back here.
		return reconcile.Result{}, false, nil
	}
	pod := &corev1.Pod{}
	if err := c.client.Get(ctx, podName(job), pod); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, false, c.fail(ctx, job, schedv1alpha1.PodMigrationJobReasonMissingPod, fmt.Sprintf("Pod %q does not exist", podName(job)))
		}
		return reconcile.Result{}, false, fmt.Errorf("get pod %s: %w", podName(job), err)
	}
	if uid := job.Spec.PodRef.UID; uid != "" && uid != pod.UID {
		return reconcile.Result{}, false, c.fail(ctx, job, schedv1alpha1.PodMigrationJobReasonMissingPod,
			fmt.Sprintf("Pod %q is not the pod of the job (UID %s, want %s)", podName(job), pod.UID, uid))
	}
	if !arbitrating {
		if reason := c.refuse(ctx, pod, job.Name); reason != "" {
			return reconcile.Result{}, false, c.fail(ctx, job, ReasonForbiddenMigratePod, fmt.Sprintf("Pod %q may not be migrated: %s", podName(job), reason))
		}
	}
	mode := c.modeOf(job, pod)
	if job.Spec.PodRef.UID == "" || job.Spec.Mode != mode || job.Annotations[AnnotationPodNode] != pod.Spec.NodeName {
		if job.Spec.Mode == schedv1alpha1.PodMigrationJobModeReservationFirst && mode != job.Spec.Mode {
			c.event(job, corev1.EventTypeNormal, "EvictDirectly", "Pod %q is evicted directly: %s", podName(job), reservationFallback(c.args, pod))
		}
		job.Spec.PodRef.UID, job.Spec.Mode = pod.UID, mode
		metav1.SetMetaDataAnnotation(&job.ObjectMeta, AnnotationPodNode, pod.Spec.NodeName)
		if err := c.client.Update(ctx, job); err != nil {
			return reconcile.Result{}, false, fmt.Errorf("update PodMigrationJob %s: %w", job.Name, err)
		}
	}
	if c.dryRun {
		return reconcile.Result{}, false, c.succeed(ctx, job, ReasonDryRun, fmt.Sprintf("Dry run: pod %q would have been migrated (%s)", podName(job), mode))
	}
	job.Status.Phase, job.Status.Reason, job.Status.Message = schedv1alpha1.PodMigrationJobRunning, "", ""
	if err := c.updateStatus(ctx, job); err != nil {
		return reconcile.Result{}, false, err
	}
	c.metrics.Jobs.WithLabelValues(string(schedv1alpha1.PodMigrationJobRunning), "").Inc()
	c.event(job, corev1.EventTypeNormal, "Migrating", "Started migrating pod %q (%s)", podName(job), mode)
	ctrl.LoggerFrom(ctx).V(2).Info("PodMigrationJob started", "mode", mode)
	return reconcile.Result{}, true, nil
}

// modeOf returns the mode job runs in: spec.mode, else args.defaultJobMode; ReservationFirst falls back to
// EvictDirectly for pods of other schedulers than args.schedulerNames and for pods no controller will replace.
func (c *Controller) modeOf(job *schedv1alpha1.PodMigrationJob, pod *corev1.Pod) schedv1alpha1.PodMigrationJobMode {
	mode := job.Spec.Mode
	if mode == "" {
		mode = schedv1alpha1.PodMigrationJobMode(c.args.DefaultJobMode)
	}
	if mode != schedv1alpha1.PodMigrationJobModeEvictionDirectly && reservationFallback(c.args, pod) != "" &&
		(job.Spec.ReservationOptions == nil || job.Spec.ReservationOptions.ReservationRef == nil) {
		return schedv1alpha1.PodMigrationJobModeEvictionDirectly
	}
	if mode == "" {
		mode = schedv1alpha1.PodMigrationJobModeReservationFirst
	}
	return mode
}

// reservationFallback returns why pod cannot be migrated with a Reservation, or "".
func reservationFallback(args *config.MigrationControllerArgs, pod *corev1.Pod) string {
	if !slices.Contains(args.SchedulerNames, pod.Spec.SchedulerName) {
		return fmt.Sprintf("its scheduler %q is not one of %v", pod.Spec.SchedulerName, args.SchedulerNames)
	}
	if len(reservationOwners(pod)) == 0 {
		return "no controller owns it"
	}
	return ""
}

// reservationFirst runs a ReservationFirst job: reserve, wait until the Reservation is scheduled, evict, wait
// for the replacement pod to bind the Reservation and be ready.
func (c *Controller) reservationFirst(ctx context.Context, job *schedv1alpha1.PodMigrationJob) (reconcile.Result, error) {
	r, err := c.ensureReservation(ctx, job)
	if err != nil || r == nil {
		return reconcile.Result{}, err
	}
	evicted := condition(job, schedv1alpha1.PodMigrationJobConditionEviction)
	evictionStarted := evicted != nil && (evicted.Status == schedv1alpha1.PodMigrationJobConditionStatusTrue || evicted.Reason == schedv1alpha1.PodMigrationJobReasonEvicting)
	switch state, msg := stateOf(r); state {
	case reservationUnschedulable, reservationFailed:
		c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationScheduled, schedv1alpha1.PodMigrationJobConditionStatusFalse,
			schedv1alpha1.PodMigrationJobReasonUnschedulable, msg)
		return reconcile.Result{}, c.fail(ctx, job, schedv1alpha1.PodMigrationJobReasonUnschedulable,
			fmt.Sprintf("Reservation %q cannot be scheduled: %s", r.Name, msg))
	case reservationExpired:
		return reconcile.Result{}, c.fail(ctx, job, schedv1alpha1.PodMigrationJobReasonTimeout, fmt.Sprintf("Reservation %q expired: %s", r.Name, msg))
	case reservationWaiting:
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the Reservation to be scheduled", "reservation", klog.KObj(r))
		return reconcile.Result{RequeueAfter: requeueAfter}, nil
	}
	if cond := condition(job, schedv1alpha1.PodMigrationJobConditionReservationScheduled); cond == nil || cond.Status != schedv1alpha1.PodMigrationJobConditionStatusTrue {
		if r.Status.NodeName == job.Annotations[AnnotationPodNode] && r.Status.NodeName != "" {
			if evictionStarted, err = c.evictionStarted(ctx, job, evictionStarted); err != nil {
				return reconcile.Result{}, err
			}
			if !evictionStarted {
				return reconcile.Result{}, c.fail(ctx, job, ReasonForbiddenMigratePod, fmt.Sprintf("Reservation %q is on the pod's own node %q", r.Name, r.Status.NodeName))
			}
		}
		job.Status.NodeName = r.Status.NodeName
		c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationScheduled, schedv1alpha1.PodMigrationJobConditionStatusTrue, "", "")
		if err := c.updateStatus(ctx, job); err != nil {
			return reconcile.Result{}, err
		}
		c.event(job, corev1.EventTypeNormal, string(schedv1alpha1.PodMigrationJobConditionReservationScheduled), "Assigned Reservation %q to node %q", r.Name, r.Status.NodeName)
	}
	if r.Status.Phase == schedv1alpha1.ReservationSucceeded {
		if evictionStarted, err = c.evictionStarted(ctx, job, evictionStarted); err != nil {
			return reconcile.Result{}, err
		}
		if !evictionStarted {
			// Allocated once before the pod went: another pod of the workload took it (Koordinator aborts the
			// job here). The pod still has to move: reserve again, within the job's ttl.
			return c.reserveAgain(ctx, job, r)
		}
	}
	done, res, err := c.evict(ctx, job)
	if err != nil || !done {
		return res, err
	}
	bound, err := c.boundPod(ctx, job, r)
	if err != nil {
		return reconcile.Result{}, err
	}
	if bound == nil {
		msg, err := c.replacedElsewhere(ctx, job, r)
		if err != nil {
			return reconcile.Result{}, err
		}
		if msg != "" {
			// No pod will bind the Reservation: release what it holds now rather than at the job's ttl.
			if err := c.deleteReservation(ctx, job); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, c.succeed(ctx, job, ReasonReplacedWithoutReservation, msg)
		}
		if c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationPodBoundReservation, schedv1alpha1.PodMigrationJobConditionStatusFalse,
			schedv1alpha1.PodMigrationJobReasonWaitForPodBindReservation, "Waiting for a replacement pod to bind Reservation "+r.Name) {
			if err := c.updateStatus(ctx, job); err != nil {
				return reconcile.Result{}, err
			}
			c.event(job, corev1.EventTypeNormal, schedv1alpha1.PodMigrationJobReasonWaitForPodBindReservation, "Waiting for a pod to bind Reservation %q", r.Name)
		}
		return reconcile.Result{RequeueAfter: requeueAfter}, nil
	}
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: bound.Namespace, Name: bound.Name, UID: bound.UID}
	boundName := types.NamespacedName{Namespace: bound.Namespace, Name: bound.Name}
	if job.Status.PodRef == nil || job.Status.PodRef.UID != bound.UID {
		job.Status.PodRef = ref
		c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationPodBoundReservation, schedv1alpha1.PodMigrationJobConditionStatusTrue, "",
			fmt.Sprintf("Pod %q bound Reservation %q", boundName, r.Name))
		if err := c.updateStatus(ctx, job); err != nil {
			return reconcile.Result{}, err
		}
		c.event(job, corev1.EventTypeNormal, string(schedv1alpha1.PodMigrationJobConditionReservationPodBoundReservation), "Reservation %q bound by pod %q", r.Name, boundName)
	}
	if !podutil.IsPodReady(bound) {
		if c.setCondition(job, ConditionBoundPodReady, schedv1alpha1.PodMigrationJobConditionStatusFalse, ReasonWaitForBoundPodReady,
			fmt.Sprintf("Waiting for pod %q to be ready", boundName)) {
			if err := c.updateStatus(ctx, job); err != nil {
				return reconcile.Result{}, err
			}
			c.event(job, corev1.EventTypeNormal, ReasonWaitForBoundPodReady, "Waiting for bound pod %q to be ready", boundName)
		}
		return reconcile.Result{RequeueAfter: requeueAfter}, nil
	}
	c.setCondition(job, ConditionBoundPodReady, schedv1alpha1.PodMigrationJobConditionStatusTrue, "", fmt.Sprintf("Pod %q is ready", boundName))
	job.Status.PodRef, job.Status.NodeName = ref, bound.Spec.NodeName
	return reconcile.Result{}, c.succeed(ctx, job, "", fmt.Sprintf("Bind Pod %q in Reservation %q", boundName, r.Name))
}

// replacedElsewhere returns why no pod will bind r after the job's pod was evicted, or "" while one still may:
// the workload r is reserved for has all its replicas scheduled and none waiting for a node. That happens when
// several pods of one workload migrate at once and the replacement of this job's pod took another job's
// Reservation (they are all the workload's), or was placed without one. Koordinator's job waits for its ttl
// then, holding the Reservation's resources; this one ends Succeeded (the pod was moved) and the caller deletes
// the Reservation.
func (c *Controller) replacedElsewhere(ctx context.Context, job *schedv1alpha1.PodMigrationJob, r *schedv1alpha1.Reservation) (string, error) {
	var owner *schedv1alpha1.ReservationControllerReference
	for i := range r.Spec.Owners {
		if r.Spec.Owners[i].Controller != nil {
			owner = r.Spec.Owners[i].Controller
			break
		}
	}
	if owner == nil {
		return "", nil
	}
	ref := owner.OwnerReference
	ref.Controller = ptr.To(true)
	ns := owner.Namespace
	if ns == "" {
		ns = job.Spec.PodRef.Namespace
	}
	// The workload is found as the evicted pod's would be: through a pod it controls.
	w, err := c.finder.find(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, OwnerReferences: []metav1.OwnerReference{ref}}})
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("Pod %q has been evicted and its %s %s/%s is gone: nothing will bind Reservation %q", podName(job), ref.Kind, ns, ref.Name, r.Name), nil
	}
	if err != nil || w == nil {
		return "", err
	}
	scheduled := 0
	for _, p := range w.pods {
		if !isPodActive(p) || p.UID == job.Spec.PodRef.UID {
			continue
		}
		if p.Spec.NodeName == "" {
			return "", nil
		}
		scheduled++
	}
	if scheduled < w.replicas {
		return "", nil
	}
	return fmt.Sprintf("Pod %q has been evicted and %s has its %d replicas scheduled; its replacement did not bind Reservation %q (it took another migration's Reservation, or none)",
		podName(job), w, w.replicas, r.Name), nil
}

// evictionStarted returns recorded when the job's status already says the eviction started, else whether the
// job's pod is gone, replaced (another UID under its name) or terminating: a controller killed between evicting
// and recording it leaves a job whose status does not say so, and the replacement pod may have taken the
// Reservation since. The pod is read from the apiserver, not the cache, which may still hold it.
func (c *Controller) evictionStarted(ctx context.Context, job *schedv1alpha1.PodMigrationJob, recorded bool) (bool, error) {
	if recorded {
		return true, nil
	}
	pod := &corev1.Pod{}
	err := c.apiReader.Get(ctx, podName(job), pod)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get pod %s: %w", podName(job), err)
	}
	return (job.Spec.PodRef.UID != "" && pod.UID != job.Spec.PodRef.UID) || pod.DeletionTimestamp != nil, nil
}

// ensureReservation returns the job's Reservation, creating it (named after the job's UID, owned by the job,
// recorded in spec.reservationOptions.reservationRef, with the job's finalizer) when the job has none. It
// returns nil when the job failed or must be looked at again.
func (c *Controller) ensureReservation(ctx context.Context, job *schedv1alpha1.PodMigrationJob) (*schedv1alpha1.Reservation, error) {
	if o := job.Spec.ReservationOptions; o != nil && o.ReservationRef != nil {
		r := &schedv1alpha1.Reservation{}
		key := types.NamespacedName{Name: o.ReservationRef.Name}
		err := c.client.Get(ctx, key, r)
		if apierrors.IsNotFound(err) {
			// The cache may not have the Reservation created moments ago yet.
			err = c.apiReader.Get(ctx, key, r)
		}
		if apierrors.IsNotFound(err) || (err == nil && o.ReservationRef.UID != "" && r.UID != o.ReservationRef.UID) {
			return nil, c.fail(ctx, job, schedv1alpha1.PodMigrationJobReasonMissingReservation, fmt.Sprintf("Reservation %q does not exist", key.Name))
		}
		if err != nil {
			return nil, fmt.Errorf("get Reservation %s: %w", key.Name, err)
		}
		if cond := condition(job, schedv1alpha1.PodMigrationJobConditionReservationCreated); cond == nil || cond.Status != schedv1alpha1.PodMigrationJobConditionStatusTrue {
			c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationCreated, schedv1alpha1.PodMigrationJobConditionStatusTrue, "", "Reservation "+r.Name)
			if err := c.updateStatus(ctx, job); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	pod := &corev1.Pod{}
	if err := c.client.Get(ctx, podName(job), pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, c.fail(ctx, job, schedv1alpha1.PodMigrationJobReasonMissingPod, fmt.Sprintf("Pod %q does not exist", podName(job)))
		}
		return nil, fmt.Errorf("get pod %s: %w", podName(job), err)
	}
	r := buildReservation(job, pod, c.ttlOf(job), c.clock.Now())
	if err := c.client.Create(ctx, r); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationCreated, schedv1alpha1.PodMigrationJobConditionStatusFalse,
				schedv1alpha1.PodMigrationJobReasonFailedCreateReservation, "Failed to create Reservation: "+err.Error())
			if uerr := c.updateStatus(ctx, job); uerr != nil {
				return nil, uerr
			}
			c.event(job, corev1.EventTypeWarning, schedv1alpha1.PodMigrationJobReasonFailedCreateReservation, "Failed to create Reservation %q: %v", r.Name, err)
			return nil, fmt.Errorf("create Reservation %s: %w", r.Name, err)
		}
		// Created before a restart or a conflict: take it if it is the job's.
		if err := c.apiReader.Get(ctx, types.NamespacedName{Name: r.Name}, r); err != nil {
			return nil, fmt.Errorf("get Reservation %s: %w", r.Name, err)
		}
		if ref := metav1.GetControllerOf(r); ref == nil || ref.UID != job.UID {
			return nil, c.fail(ctx, job, schedv1alpha1.PodMigrationJobReasonFailedCreateReservation, fmt.Sprintf("Reservation %q exists and is not the job's", r.Name))
		}
	} else {
		c.event(job, corev1.EventTypeNormal, string(schedv1alpha1.PodMigrationJobConditionReservationCreated), "Created Reservation %q", r.Name)
		ctrl.LoggerFrom(ctx).V(2).Info("Created Reservation", "reservation", klog.KObj(r))
	}
	if job.Spec.ReservationOptions == nil {
		job.Spec.ReservationOptions = &schedv1alpha1.PodMigrateReservationOptions{}
	}
	job.Spec.ReservationOptions.ReservationRef = &corev1.ObjectReference{
		Kind: "Reservation", APIVersion: schedv1alpha1.SchemeGroupVersion.String(), Name: r.Name, UID: r.UID,
	}
	controllerutil.AddFinalizer(job, FinalizerReservation)
	status := job.Status.DeepCopy()
	if err := c.client.Update(ctx, job); err != nil {
		return nil, fmt.Errorf("record Reservation %s in PodMigrationJob %s: %w", r.Name, job.Name, err)
	}
	job.Status = *status
	c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationCreated, schedv1alpha1.PodMigrationJobConditionStatusTrue, "", "Reservation "+r.Name)
	if err := c.updateStatus(ctx, job); err != nil {
		return nil, err
	}
	return r, nil
}

// reserveAgain replaces r, which another pod took before the job's pod went, by a new Reservation: it deletes
// r, forgets it in the job (reservationRef, ReservationScheduled) and counts the attempt, so that the next
// round creates the next Reservation.
func (c *Controller) reserveAgain(ctx context.Context, job *schedv1alpha1.PodMigrationJob, r *schedv1alpha1.Reservation) (reconcile.Result, error) {
	taker := "another pod"
	if len(r.Status.CurrentOwners) > 0 {
		o := r.Status.CurrentOwners[0]
		taker = fmt.Sprintf("pod %s/%s", o.Namespace, o.Name)
	}
	msg := fmt.Sprintf("Reservation %q was taken by %s before pod %q went; reserving again", r.Name, taker, podName(job))
	if err := c.deleteReservation(ctx, job); err != nil {
		return reconcile.Result{}, err
	}
	attempt := reservationAttempt(job) + 1
	status := job.Status.DeepCopy()
	metav1.SetMetaDataAnnotation(&job.ObjectMeta, AnnotationReservationAttempt, strconv.Itoa(attempt))
	job.Spec.ReservationOptions.ReservationRef = nil
	if err := c.client.Update(ctx, job); err != nil {
		return reconcile.Result{}, fmt.Errorf("forget the taken Reservation %s in PodMigrationJob %s: %w", r.Name, job.Name, err)
	}
	job.Status = *status
	c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationScheduled, schedv1alpha1.PodMigrationJobConditionStatusFalse, ReasonReservationTaken, msg)
	c.setCondition(job, schedv1alpha1.PodMigrationJobConditionReservationCreated, schedv1alpha1.PodMigrationJobConditionStatusFalse, ReasonReservationTaken, msg)
	job.Status.NodeName = ""
	if err := c.updateStatus(ctx, job); err != nil {
		return reconcile.Result{}, err
	}
	c.event(job, corev1.EventTypeNormal, ReasonReservationTaken, "%s", msg)
	ctrl.LoggerFrom(ctx).V(2).Info("Reserving again", "reservation", klog.KObj(r), "attempt", attempt, "takenBy", taker)
	return reconcile.Result{RequeueAfter: time.Millisecond}, nil
}

// reservationAttempt returns the job's AnnotationReservationAttempt, 1 when it has none (or a malformed one).
func reservationAttempt(job *schedv1alpha1.PodMigrationJob) int {
	n, err := strconv.Atoi(job.Annotations[AnnotationReservationAttempt])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// boundPod returns the replacement pod that was allocated from r and is on a node, or nil.
func (c *Controller) boundPod(ctx context.Context, job *schedv1alpha1.PodMigrationJob, r *schedv1alpha1.Reservation) (*corev1.Pod, error) {
	allocated := func(p *corev1.Pod) bool {
		a, err := extension.GetReservationAllocated(p.Annotations)
		return err == nil && a != nil && a.UID == r.UID && p.Spec.NodeName != "" && p.UID != job.Spec.PodRef.UID
	}
	for _, o := range r.Status.CurrentOwners {
		p := &corev1.Pod{}
		if err := c.client.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, p); err == nil && (o.UID == "" || o.UID == p.UID) && p.UID != job.Spec.PodRef.UID {
			return p, nil
		}
	}
	ns := job.Spec.PodRef.Namespace
	var opts []client.ListOption
	for _, o := range r.Spec.Owners {
		if o.Controller != nil {
			opts = append(opts, client.MatchingFields{indexPodByController: string(o.Controller.UID)})
			if o.Controller.Namespace != "" {
				ns = o.Controller.Namespace
			}
			break
		}
	}
	pods := &corev1.PodList{}
	if err := c.client.List(ctx, pods, append(opts, client.InNamespace(ns))...); err != nil {
		return nil, fmt.Errorf("list pods of namespace %s: %w", ns, err)
	}
	for i := range pods.Items {
		if allocated(&pods.Items[i]) {
			return &pods.Items[i], nil
		}
	}
	return nil, nil
}

// softEvictionSpec is the value of the soft-eviction annotation, Koordinator's SoftEvictionSpec.
type softEvictionSpec struct {
	Timestamp     *metav1.Time          `json:"timestamp,omitempty"`
	DeleteOptions *metav1.DeleteOptions `json:"deleteOptions,omitempty"`
	Initiator     string                `json:"initiator,omitempty"`
	Reason        string                `json:"reason,omitempty"`
}

// evict evicts the job's pod once, and reports whether it is gone. The Eviction condition says how far it
// got: absent or FailedEvict, not asked yet (or refused); Evicting, asked; True, gone. Before asking it reads
// the pod from the apiserver and asks only for a pod that is there, is the job's, is not being deleted and
// (SoftEviction) is not annotated yet, so that neither a stale cache nor a restart evicts twice.
func (c *Controller) evict(ctx context.Context, job *schedv1alpha1.PodMigrationJob) (bool, reconcile.Result, error) {
	cond := condition(job, schedv1alpha1.PodMigrationJobConditionEviction)
	if cond != nil && cond.Status == schedv1alpha1.PodMigrationJobConditionStatusTrue {
		return true, reconcile.Result{}, nil
	}
	name := podName(job)
	pod := &corev1.Pod{}
	err := c.apiReader.Get(ctx, name, pod)
	if apierrors.IsNotFound(err) || (err == nil && job.Spec.PodRef.UID != "" && pod.UID != job.Spec.PodRef.UID) {
		c.setCondition(job, schedv1alpha1.PodMigrationJobConditionEviction, schedv1alpha1.PodMigrationJobConditionStatusTrue,
			schedv1alpha1.PodMigrationJobReasonEvictComplete, fmt.Sprintf("Pod %q has been evicted", name))
		if err := c.updateStatus(ctx, job); err != nil {
			return false, reconcile.Result{}, err
		}
		c.event(job, corev1.EventTypeNormal, schedv1alpha1.PodMigrationJobReasonEvictComplete, "Pod %q has been evicted", name)
		return true, reconcile.Result{}, nil
	}
	if err != nil {
		return false, reconcile.Result{}, fmt.Errorf("get pod %s: %w", name, err)
	}
	policy := c.policyOf(job, pod)
	if pod.DeletionTimestamp != nil || (policy == config.EvictionPolicySoftEviction && pod.Annotations[extension.AnnotationSoftEviction] != "") {
		if cond == nil || cond.Reason != schedv1alpha1.PodMigrationJobReasonEvicting {
			c.setCondition(job, schedv1alpha1.PodMigrationJobConditionEviction, schedv1alpha1.PodMigrationJobConditionStatusFalse,
				schedv1alpha1.PodMigrationJobReasonEvicting, fmt.Sprintf("Pod %q is being evicted", name))
			if err := c.updateStatus(ctx, job); err != nil {
				return false, reconcile.Result{}, err
			}
		}
		return false, reconcile.Result{RequeueAfter: requeueAfter}, nil
	}
	w, err := c.finder.find(ctx, pod)
	if err != nil {
		return false, reconcile.Result{}, err
	}
	now := c.clock.Now()
	if r := c.objects.exceeded(w, now); r != nil {
		ctrl.LoggerFrom(ctx).V(4).Info("Eviction held back by the object limiter", "gate", r.gate, "message", r.message)
		if c.setCondition(job, schedv1alpha1.PodMigrationJobConditionEviction, schedv1alpha1.PodMigrationJobConditionStatusFalse, string(r.gate), r.message) {
			if err := c.updateStatus(ctx, job); err != nil {
				return false, reconcile.Result{}, err
			}
		}
		return false, reconcile.Result{RequeueAfter: min(max(r.retryAfter, requeueAfter/10), 10*requeueAfter)}, nil
	}
	if res := c.evictLimiter.ReserveN(now, 1); !res.OK() || res.DelayFrom(now) > 0 {
		delay := res.DelayFrom(now)
		res.CancelAt(now)
		ctrl.LoggerFrom(ctx).V(4).Info("Eviction held back by evictQPS", "delay", delay)
		return false, reconcile.Result{RequeueAfter: max(delay, 100*time.Millisecond)}, nil
	}
	trigger, reason := triggerAndReason(job)
	if err := c.evictPod(ctx, job, pod, policy, trigger, reason); err != nil {
		result := "error"
		if apierrors.IsTooManyRequests(err) {
			result = "too_many_requests"
		}
		c.metrics.Evictions.WithLabelValues(policy, result).Inc()
		c.metrics.PodsEvicted.WithLabelValues("error", trigger, pod.Namespace, pod.Spec.NodeName).Inc()
		if apierrors.IsNotFound(err) {
			return false, reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
		c.setCondition(job, schedv1alpha1.PodMigrationJobConditionEviction, schedv1alpha1.PodMigrationJobConditionStatusFalse,
			schedv1alpha1.PodMigrationJobReasonFailedEvict, fmt.Sprintf("Failed to evict pod %q: %v", name, err))
		if uerr := c.updateStatus(ctx, job); uerr != nil {
			return false, reconcile.Result{}, uerr
		}
		c.event(job, corev1.EventTypeWarning, schedv1alpha1.PodMigrationJobReasonFailedEvict, "Failed to evict pod %q: %v", name, err)
		if apierrors.IsTooManyRequests(err) {
			// A PodDisruptionBudget refuses for now; try again later.
			return false, reconcile.Result{RequeueAfter: requeueAfter}, nil
		}
		return false, reconcile.Result{}, err
	}
	c.metrics.Evictions.WithLabelValues(policy, "success").Inc()
	c.metrics.PodsEvicted.WithLabelValues("success", trigger, pod.Namespace, pod.Spec.NodeName).Inc()
	if w != nil {
		c.objects.record(w.ref.UID, now)
	}
	msg := fmt.Sprintf("Pod %q evicted from node %q by the reason %q", name, pod.Spec.NodeName, reason)
	c.setCondition(job, schedv1alpha1.PodMigrationJobConditionEviction, schedv1alpha1.PodMigrationJobConditionStatusFalse,
		schedv1alpha1.PodMigrationJobReasonEvicting, msg)
	c.event(job, corev1.EventTypeNormal, schedv1alpha1.PodMigrationJobReasonEvicting, "%s", msg)
	c.recorder.Eventf(pod, job, corev1.EventTypeNormal, "Descheduled", eventAction, "Pod evicted from node %q by the reason %q", pod.Spec.NodeName, reason)
	ctrl.LoggerFrom(ctx).V(1).Info("Evicted pod", "node", pod.Spec.NodeName, "policy", policy, "reason", reason, "trigger", trigger)
	if err := c.updateStatus(ctx, job); err != nil {
		return false, reconcile.Result{}, err
	}
	return false, reconcile.Result{RequeueAfter: requeueAfter}, nil
}

// policyOf returns how the job's pod is evicted: the pod's or the job's koordinator.sh/evict-policy label,
// else args.evictionPolicy.
func (c *Controller) policyOf(job *schedv1alpha1.PodMigrationJob, pod *corev1.Pod) string {
	for _, p := range []string{pod.Labels[LabelEvictPolicy], job.Labels[LabelEvictPolicy]} {
		switch p {
		case config.EvictionPolicyEviction, config.EvictionPolicyDelete, config.EvictionPolicySoftEviction:
			return p
		}
	}
	return c.args.EvictionPolicy
}

// evictPod asks for pod to go by policy: the eviction API (honouring PodDisruptionBudgets), a deletion, or
// the soft-eviction annotation for the workload's own controller.
func (c *Controller) evictPod(ctx context.Context, job *schedv1alpha1.PodMigrationJob, pod *corev1.Pod, policy, trigger, reason string) error {
	opts := job.Spec.DeleteOptions
	if opts == nil {
		opts = c.args.DefaultDeleteOptions
	}
	switch policy {
	case config.EvictionPolicyDelete:
		del := &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}
		if opts != nil {
			del.Raw = opts.DeepCopy()
			del.Raw.Preconditions = del.Preconditions
		}
		if err := c.client.Delete(ctx, pod, del); err != nil {
			return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	case config.EvictionPolicySoftEviction:
		spec, err := json.Marshal(softEvictionSpec{Timestamp: &metav1.Time{Time: c.clock.Now()}, DeleteOptions: opts, Initiator: trigger, Reason: reason})
		if err != nil {
			return fmt.Errorf("encode soft eviction: %w", err)
		}
		patch := client.MergeFrom(pod.DeepCopy())
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[extension.AnnotationSoftEviction] = string(spec)
		if err := c.client.Patch(ctx, pod, patch); err != nil {
			return fmt.Errorf("annotate pod %s/%s for soft eviction: %w", pod.Namespace, pod.Name, err)
		}
	default:
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
		if opts != nil {
			ev.DeleteOptions = opts.DeepCopy()
		} else {
			ev.DeleteOptions = &metav1.DeleteOptions{}
		}
		ev.DeleteOptions.Preconditions = &metav1.Preconditions{UID: &pod.UID}
		if err := c.client.SubResource("eviction").Create(ctx, pod, ev); err != nil {
			return fmt.Errorf("evict pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	return nil
}

// triggerAndReason returns the job's evict-trigger and evict-reason annotations; the reason defaults to the
// trigger, then to NotSet, as Koordinator's.
func triggerAndReason(job *schedv1alpha1.PodMigrationJob) (string, string) {
	trigger, reason := job.Annotations[AnnotationEvictTrigger], job.Annotations[AnnotationEvictReason]
	if reason == "" {
		reason = trigger
	}
	if reason == "" {
		reason = "NotSet"
	}
	return trigger, reason
}

func podName(job *schedv1alpha1.PodMigrationJob) types.NamespacedName {
	return types.NamespacedName{Namespace: job.Spec.PodRef.Namespace, Name: job.Spec.PodRef.Name}
}
