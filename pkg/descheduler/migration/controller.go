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

// Package migration is Koordinator's MigrationController for koord-descheduler: it carries out
// PodMigrationJobs (arbitrating which may run, reserving room for the replacement pod, evicting the pod and
// waiting for the replacement), and it is the descheduler's evictor plugin, turning evictions into jobs.
//
// All the state of a job is in the job: its phase, conditions, annotations set by arbitration, and the
// Reservation it records in spec.reservationOptions.reservationRef. A controller started after a crash picks
// every job up where it was.
package migration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

// Name is the plugin name of the MigrationController.
const Name = config.MigrationControllerName

// Annotations of PodMigrationJobs, Koordinator's where it has them.
const (
	// AnnotationEvictReason is why the job's pod is evicted (the descheduler's EvictOptions.Reason).
	AnnotationEvictReason = "koordinator.sh/evict-reason"
	// AnnotationEvictTrigger is the strategy (plugin) that asked for the eviction.
	AnnotationEvictTrigger = "koordinator.sh/evict-trigger"
	// AnnotationEvictProfile is the descheduler profile that asked for the eviction.
	AnnotationEvictProfile = "koordinator.sh/evict-profile"
	// LabelEvictPolicy, on a pod or a job, overrides args.evictionPolicy for it.
	LabelEvictPolicy = "koordinator.sh/evict-policy"
	// AnnotationPassedArbitration ("true") marks a Pending job that arbitration let through.
	AnnotationPassedArbitration = "descheduler.koordinator.sh/passed-arbitration"
	// AnnotationWorkload is the UID of the workload of the job's pod, recorded when arbitration lets the job
	// through, so that the limits still count the job after the pod is gone.
	AnnotationWorkload = "descheduler.koordinator.sh/workload-uid"
	// AnnotationPodNode is the node of the job's pod when arbitration let the job through.
	AnnotationPodNode = "descheduler.koordinator.sh/pod-node"
	// FinalizerReservation keeps a job that created a Reservation until the Reservation is cleaned up.
	FinalizerReservation = "descheduler.koordinator.sh/reservation"
	// AnnotationReservationAttempt counts the Reservations a job made (Koord's; absent for the first): a
	// Reservation another pod of the workload took before the job's pod went is replaced by a new one, named
	// after the first with "-<attempt>".
	AnnotationReservationAttempt = "descheduler.koord.dev/reservation-attempt"
)

// Reasons and condition types of PodMigrationJobs beyond those of the API, Koordinator's.
const (
	ReasonForbiddenMigratePod  = "ForbiddenMigratePod"
	ReasonDryRun               = "DryRun"
	ReasonWaitForBoundPodReady = "WaitForBoundPodReady"
	ReasonReservationExpired   = "ReservationExpired"
	// ReasonReplacedWithoutReservation ends a Succeeded job whose pod was evicted and replaced without its
	// Reservation, which is deleted.
	ReasonReplacedWithoutReservation = "ReplacedWithoutReservation"
	// ReasonReservationTaken: another pod of the workload took the job's Reservation before the job's pod
	// went (as when several of its pods migrate at once); the job reserves again.
	ReasonReservationTaken = "ReservationTaken"
	// ConditionBoundPodReady tells whether the replacement pod is ready.
	ConditionBoundPodReady schedv1alpha1.PodMigrationJobConditionType = "BoundPodReady"
	// statusComplete is status.status of a Succeeded job.
	statusComplete = "Complete"
)

// eventAction is the action of the controller's events.
const eventAction = "Migrating"

// requeueAfter is how soon a job that waits for something the watches may miss is looked at again.
const requeueAfter = 3 * time.Second

// defaultJobRetention is how long after its ttl a job is deleted, Koordinator's.
const defaultJobRetention = 5 * time.Minute

// Field indexes of the manager's cache.
const (
	indexPodByNode       = "migration.spec.nodeName"
	indexPodByController = "migration.controller.uid"
	indexJobByPod        = "migration.spec.podRef"
)

// Options are what the MigrationController takes besides its args.
type Options struct {
	// Clock tells the time. Default: the real clock.
	Clock clock.WithTicker
	// DryRun is the DeschedulerConfiguration's dryRun; ORed with args.dryRun.
	DryRun bool
	// EventRecorder records the events of jobs and pods. Default: the manager's, as koord-descheduler.
	EventRecorder events.EventRecorder
	// JobRetention is how long after its ttl a job is deleted (Koordinator deletes jobs 5m after their ttl).
	// 0: 5m; negative: jobs are not deleted.
	JobRetention time.Duration
	// Metrics are recorded; nil: private, unregistered ones.
	Metrics *Metrics
}

// Controller is the MigrationController: the reconciler of PodMigrationJobs, their arbitration, and the
// descheduler's evictor plugin.
type Controller struct {
	args      *config.MigrationControllerArgs
	skip      map[config.EvictionGate]bool
	client    client.Client
	apiReader client.Reader
	clock     clock.WithTicker
	dryRun    bool
	recorder  events.EventRecorder
	logger    logr.Logger
	retention time.Duration
	metrics   *Metrics

	finder       *workloadFinder
	limits       *limits
	objects      *objectLimiter
	evictLimiter *rate.Limiter

	// passed holds the jobs arbitration let through that the cache may not show yet.
	mu     sync.Mutex
	passed map[types.UID]bool
}

var (
	_ frameworktypes.EvictorPlugin = &Controller{}
	_ reconcile.Reconciler         = &Controller{}
)

// New builds the MigrationController on mgr and registers with it the reconciler, the arbitration (when
// args.arbitrationArgs.enabled) and the deletion of old jobs, all running in the leader only. args arrive
// defaulted and validated.
func New(mgr ctrl.Manager, args *config.MigrationControllerArgs, o Options) (*Controller, error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.EventRecorder == nil {
		o.EventRecorder = mgr.GetEventRecorder(Creator)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.JobRetention == 0 {
		o.JobRetention = defaultJobRetention
	}
	skip := map[config.EvictionGate]bool{}
	for _, g := range args.SkipEvictionGates {
		skip[g] = true
	}
	qps := config.DefaultEvictQPS
	if args.EvictQPS != nil {
		qps = args.EvictQPS.Value
	}
	limit := rate.Limit(qps)
	if qps <= 0 {
		limit = rate.Inf
	}
	c := &Controller{
		args:         args,
		skip:         skip,
		client:       mgr.GetClient(),
		apiReader:    mgr.GetAPIReader(),
		clock:        o.Clock,
		dryRun:       o.DryRun || args.DryRun,
		recorder:     o.EventRecorder,
		logger:       mgr.GetLogger().WithName(Name),
		retention:    o.JobRetention,
		metrics:      o.Metrics,
		finder:       &workloadFinder{c: mgr.GetClient()},
		limits:       &limits{args: args, skip: skip},
		objects:      newObjectLimiter(args),
		evictLimiter: rate.NewLimiter(limit, max(int(ptr.Deref(args.EvictBurst, 1)), 1)),
		passed:       map[types.UID]bool{},
	}
	if err := c.addIndexes(mgr); err != nil {
		return nil, err
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&schedv1alpha1.PodMigrationJob{}).
		Watches(&schedv1alpha1.Reservation{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(),
			&schedv1alpha1.PodMigrationJob{}, handler.OnlyControllerOwner())).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(c.jobsOfPod)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: int(ptr.Deref(args.MaxConcurrentReconciles, 1)),
			// A process may build the controller more than once (tests, a restarted manager).
			SkipNameValidation: ptr.To(true),
		}).
		Complete(c)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", Name, err)
	}
	if a := args.ArbitrationArgs; a != nil && a.Enabled {
		interval := config.DefaultArbitrationInterval
		if a.Interval != nil && a.Interval.Duration > 0 {
			interval = a.Interval.Duration
		}
		if err := mgr.Add(&loop{name: "arbitration", interval: interval, clock: c.clock, logger: c.logger, run: c.arbitrate}); err != nil {
			return nil, fmt.Errorf("add arbitration: %w", err)
		}
	}
	if c.retention > 0 {
		if err := mgr.Add(&loop{name: "job garbage collection", interval: time.Minute, clock: c.clock, logger: c.logger, run: c.collectGarbage}); err != nil {
			return nil, fmt.Errorf("add job garbage collection: %w", err)
		}
	}
	return c, nil
}

// Name returns the plugin name.
func (c *Controller) Name() string { return Name }

// index is a field index of the manager's cache.
type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// indexes are the field indexes the controller looks objects up by.
var indexes = []index{
	{&corev1.Pod{}, indexPodByNode, func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	}},
	{&corev1.Pod{}, indexPodByController, func(o client.Object) []string {
		if ref := metav1.GetControllerOf(o); ref != nil {
			return []string{string(ref.UID)}
		}
		return nil
	}},
	{&schedv1alpha1.PodMigrationJob{}, indexJobByPod, func(o client.Object) []string {
		if ref := o.(*schedv1alpha1.PodMigrationJob).Spec.PodRef; ref != nil {
			return []string{ref.Namespace + "/" + ref.Name}
		}
		return nil
	}},
}

func (c *Controller) addIndexes(mgr ctrl.Manager) error {
	// IndexField uses its context only to wait for the cache; New runs before the manager starts.
	ctx := context.Background()
	for _, i := range indexes {
		if err := mgr.GetFieldIndexer().IndexField(ctx, i.obj, i.field, i.extract); err != nil {
			return fmt.Errorf("index %T by %s: %w", i.obj, i.field, err)
		}
	}
	return nil
}

// jobsOfPod maps a pod to the jobs that migrate it and, for a pod allocated from a Reservation, to the job
// that owns the Reservation.
func (c *Controller) jobsOfPod(ctx context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	jobs := &schedv1alpha1.PodMigrationJobList{}
	if err := c.client.List(ctx, jobs, client.MatchingFields{indexJobByPod: o.GetNamespace() + "/" + o.GetName()}); err == nil {
		for i := range jobs.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: jobs.Items[i].Name}})
		}
	}
	if a, err := extension.GetReservationAllocated(o.GetAnnotations()); err == nil && a != nil {
		r := &schedv1alpha1.Reservation{}
		if err := c.client.Get(ctx, types.NamespacedName{Name: a.Name}, r); err == nil {
			if ref := metav1.GetControllerOf(r); ref != nil && ref.Kind == "PodMigrationJob" {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: ref.Name}})
			}
		}
	}
	return reqs
}

// Reconcile moves one PodMigrationJob forward from where its status says it is.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	job := &schedv1alpha1.PodMigrationJob{}
	if err := c.client.Get(ctx, req.NamespacedName, job); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("pod", klog.KRef(podRefOf(job).Namespace, podRefOf(job).Name)))
	ctrl.LoggerFrom(ctx).V(5).Info("Reconciling a PodMigrationJob", "phase", job.Status.Phase, "status", job.Status.Status, "resourceVersion", job.ResourceVersion)
	res, err := c.reconcile(ctx, job)
	if apierrors.IsConflict(err) {
		// The cache was behind our own last write: look again once it has caught up.
		return reconcile.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	return res, err
}

func (c *Controller) reconcile(ctx context.Context, job *schedv1alpha1.PodMigrationJob) (reconcile.Result, error) {
	if job.DeletionTimestamp != nil || isFinished(job) {
		return reconcile.Result{}, c.finalize(ctx, job)
	}
	if job.Spec.Paused {
		return reconcile.Result{}, nil
	}
	if job.Spec.PodRef == nil || job.Spec.PodRef.Namespace == "" || job.Spec.PodRef.Name == "" {
		return reconcile.Result{}, c.fail(ctx, job, "InvalidPodRef", "spec.podRef does not name a pod")
	}
	ttl := c.ttlOf(job)
	left := job.CreationTimestamp.Add(ttl).Sub(c.clock.Now())
	if left <= 0 {
		return reconcile.Result{}, c.fail(ctx, job, schedv1alpha1.PodMigrationJobReasonTimeout,
			fmt.Sprintf("Job timed out after %s while %s", ttl, stepOf(job)))
	}
	res, err := c.run(ctx, job)
	if err == nil && !isFinished(job) && (res.RequeueAfter == 0 || res.RequeueAfter > left) {
		// Look again when the ttl runs out.
		res.RequeueAfter = left
	}
	return res, err
}

// ttlOf returns how long job may take: spec.ttl, else args.defaultJobTTL.
func (c *Controller) ttlOf(job *schedv1alpha1.PodMigrationJob) time.Duration {
	if job.Spec.TTL != nil && job.Spec.TTL.Duration > 0 {
		return job.Spec.TTL.Duration
	}
	if c.args.DefaultJobTTL != nil && c.args.DefaultJobTTL.Duration > 0 {
		return c.args.DefaultJobTTL.Duration
	}
	return config.DefaultJobTTL
}

// stepOf describes what job was doing, for timeout messages.
func stepOf(job *schedv1alpha1.PodMigrationJob) string {
	if job.Status.Phase == "" || job.Status.Phase == schedv1alpha1.PodMigrationJobPending {
		if job.Status.Reason != "" {
			return "pending (" + job.Status.Reason + ": " + job.Status.Message + ")"
		}
		return "pending arbitration"
	}
	switch schedv1alpha1.PodMigrationJobConditionType(job.Status.Status) {
	case schedv1alpha1.PodMigrationJobConditionReservationCreated:
		return "waiting for the Reservation to be scheduled"
	case schedv1alpha1.PodMigrationJobConditionReservationScheduled:
		return "evicting the pod"
	case schedv1alpha1.PodMigrationJobConditionEviction:
		if c := condition(job, schedv1alpha1.PodMigrationJobConditionEviction); c != nil && c.Status == schedv1alpha1.PodMigrationJobConditionStatusTrue {
			return "waiting for the replacement pod to bind the Reservation"
		}
		return "waiting for the pod to be evicted"
	case schedv1alpha1.PodMigrationJobConditionReservationPodBoundReservation, schedv1alpha1.PodMigrationJobConditionReservationBound:
		return "waiting for the replacement pod to bind the Reservation"
	case ConditionBoundPodReady:
		return "waiting for the replacement pod to be ready"
	}
	return "starting"
}

// isFinished reports whether job is Succeeded, Failed or Aborted.
func isFinished(job *schedv1alpha1.PodMigrationJob) bool {
	switch job.Status.Phase {
	case schedv1alpha1.PodMigrationJobSucceeded, schedv1alpha1.PodMigrationJobFailed, schedv1alpha1.PodMigrationJobAborted:
		return true
	}
	return false
}

// isPending reports whether job has not started.
func isPending(job *schedv1alpha1.PodMigrationJob) bool {
	return job.Status.Phase == "" || job.Status.Phase == schedv1alpha1.PodMigrationJobPending
}

func podRefOf(job *schedv1alpha1.PodMigrationJob) corev1.ObjectReference {
	if job.Spec.PodRef == nil {
		return corev1.ObjectReference{}
	}
	return *job.Spec.PodRef
}

// condition returns job's condition of type t, or nil.
func condition(job *schedv1alpha1.PodMigrationJob, t schedv1alpha1.PodMigrationJobConditionType) *schedv1alpha1.PodMigrationJobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == t {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// setCondition sets job's condition t and makes it the job's current step, as Koordinator's updateCondition.
// It reports whether anything changed.
func (c *Controller) setCondition(job *schedv1alpha1.PodMigrationJob, t schedv1alpha1.PodMigrationJobConditionType,
	status schedv1alpha1.PodMigrationJobConditionStatus, reason, message string) bool {
	now := metav1.NewTime(c.clock.Now())
	changed := job.Status.Status != string(t) || job.Status.Reason != reason || job.Status.Message != message
	job.Status.Status, job.Status.Reason, job.Status.Message = string(t), reason, message
	if old := condition(job, t); old != nil {
		if old.Status == status && old.Reason == reason && old.Message == message {
			return changed
		}
		if old.Status != status {
			old.LastTransitionTime = now
		}
		old.Status, old.Reason, old.Message, old.LastProbeTime = status, reason, message, now
		return true
	}
	job.Status.Conditions = append(job.Status.Conditions, schedv1alpha1.PodMigrationJobCondition{
		Type: t, Status: status, Reason: reason, Message: message, LastProbeTime: now, LastTransitionTime: now,
	})
	return true
}

// updateStatus writes job's status.
func (c *Controller) updateStatus(ctx context.Context, job *schedv1alpha1.PodMigrationJob) error {
	if err := c.client.Status().Update(ctx, job); err != nil {
		return fmt.Errorf("update status of PodMigrationJob %s: %w", job.Name, err)
	}
	return nil
}

// event records an event on the job.
func (c *Controller) event(job *schedv1alpha1.PodMigrationJob, eventType, reason, format string, args ...any) {
	c.recorder.Eventf(job, nil, eventType, reason, eventAction, format, args...)
}

// fail ends job with phase Failed, then cleans up its Reservation.
func (c *Controller) fail(ctx context.Context, job *schedv1alpha1.PodMigrationJob, reason, message string) error {
	return c.finish(ctx, job, schedv1alpha1.PodMigrationJobFailed, reason, message, corev1.EventTypeWarning)
}

// succeed ends job with phase Succeeded.
func (c *Controller) succeed(ctx context.Context, job *schedv1alpha1.PodMigrationJob, reason, message string) error {
	return c.finish(ctx, job, schedv1alpha1.PodMigrationJobSucceeded, reason, message, corev1.EventTypeNormal)
}

func (c *Controller) finish(ctx context.Context, job *schedv1alpha1.PodMigrationJob, phase schedv1alpha1.PodMigrationJobPhase, reason, message, eventType string) error {
	job.Status.Phase, job.Status.Reason, job.Status.Message = phase, reason, message
	if phase == schedv1alpha1.PodMigrationJobSucceeded {
		job.Status.Status = statusComplete
	}
	if err := c.updateStatus(ctx, job); err != nil {
		return err
	}
	c.metrics.Jobs.WithLabelValues(string(phase), reason).Inc()
	eventReason := reason
	if eventReason == "" {
		eventReason = statusComplete
	}
	c.event(job, eventType, eventReason, "%s", message)
	ctrl.LoggerFrom(ctx).V(2).Info("PodMigrationJob finished", "phase", phase, "reason", reason, "message", message)
	return c.finalize(ctx, job)
}

// finalize cleans up after a finished or deleted job: it deletes the Reservation the job created unless the
// job Succeeded (the replacement pod uses it), then drops the job's finalizer.
func (c *Controller) finalize(ctx context.Context, job *schedv1alpha1.PodMigrationJob) error {
	if job.Status.Phase != schedv1alpha1.PodMigrationJobSucceeded || job.DeletionTimestamp != nil {
		if err := c.deleteReservation(ctx, job); err != nil {
			return err
		}
	}
	if !controllerutil.RemoveFinalizer(job, FinalizerReservation) {
		return nil
	}
	if err := c.client.Update(ctx, job); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of PodMigrationJob %s: %w", job.Name, err)
	}
	return nil
}

// deleteReservation deletes the job's Reservation if the job created it (the job is its controller).
func (c *Controller) deleteReservation(ctx context.Context, job *schedv1alpha1.PodMigrationJob) error {
	o := job.Spec.ReservationOptions
	name := string(job.UID)
	if o != nil && o.ReservationRef != nil {
		name = o.ReservationRef.Name
	} else if !controllerutil.ContainsFinalizer(job, FinalizerReservation) {
		return nil
	}
	r := &schedv1alpha1.Reservation{}
	// Read the apiserver: a Reservation created moments ago may not be in the cache.
	if err := c.apiReader.Get(ctx, types.NamespacedName{Name: name}, r); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ref := metav1.GetControllerOf(r); ref == nil || ref.UID != job.UID {
		return nil
	}
	err := c.client.Delete(ctx, r, client.Preconditions{UID: &r.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Reservation %s: %w", r.Name, err)
	}
	if err == nil {
		c.event(job, corev1.EventTypeNormal, "ReservationDeleted", "Deleted Reservation %q", r.Name)
	}
	return nil
}

// loop runs a function every interval in the leader.
type loop struct {
	name     string
	interval time.Duration
	clock    clock.WithTicker
	logger   logr.Logger
	run      func(ctx context.Context) error
}

// NeedLeaderElection makes the loop run in the leader only.
func (l *loop) NeedLeaderElection() bool { return true }

// Start runs the loop until ctx ends.
func (l *loop) Start(ctx context.Context) error {
	logger := l.logger.WithValues("loop", l.name)
	ctx = logr.NewContext(ctx, logger)
	t := l.clock.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			if err := l.run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				logger.Error(err, "Loop round failed")
			}
		}
	}
}
