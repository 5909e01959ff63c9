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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// arbitrate runs one arbitration round: it sorts the Pending jobs not let through yet (sortCandidates) and,
// in that order, fails those whose pod may not be migrated at all, leaves Pending (with status.reason naming
// the limit and status.message the numbers) those a limit holds back, and lets the others through by
// annotating them, counting each against the limits of the jobs after it.
func (c *Controller) arbitrate(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	jobs := &schedv1alpha1.PodMigrationJobList{}
	if err := c.client.List(ctx, jobs); err != nil {
		return fmt.Errorf("list PodMigrationJobs: %w", err)
	}
	c.countPhases(jobs.Items)
	migrating, err := c.migrationsOf(ctx, jobs.Items, true)
	if err != nil {
		return err
	}
	var waiting []candidate
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if !isPending(j) || j.Spec.Paused || j.DeletionTimestamp != nil || c.hasPassed(j) || j.Spec.PodRef == nil {
			continue
		}
		cand := candidate{job: j}
		pod := &corev1.Pod{}
		if err := c.client.Get(ctx, podName(j), pod); err == nil {
			cand.pod = pod
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("get pod %s: %w", podName(j), err)
		}
		waiting = append(waiting, cand)
	}
	if len(waiting) == 0 {
		return nil
	}
	perWorkload := map[types.UID]int{}
	for _, m := range migrating {
		perWorkload[m.workload]++
	}
	sortCandidates(waiting, perWorkload)
	passed := 0
	for _, cand := range waiting {
		m, err := c.arbitrateOne(ctx, cand, migrating)
		if err != nil {
			logger.Error(err, "Arbitration of PodMigrationJob failed", "podMigrationJob", klog.KObj(cand.job))
			continue
		}
		if m != nil {
			migrating = append(migrating, *m)
			passed++
		}
	}
	logger.V(3).Info("Arbitrated PodMigrationJobs", "waiting", len(waiting), "passed", passed, "migrating", len(migrating))
	return nil
}

// arbitrateOne decides about one waiting job and returns the migration it starts, or nil.
func (c *Controller) arbitrateOne(ctx context.Context, cand candidate, migrating []migration) (*migration, error) {
	job := cand.job
	m := &migration{pod: podName(job), podUID: job.Spec.PodRef.UID}
	if cand.pod != nil {
		if reason := c.refuse(ctx, cand.pod, job.Name); reason != "" {
			return nil, c.fail(ctx, job, ReasonForbiddenMigratePod, fmt.Sprintf("Pod %q is forbidden to migrate: %s", podName(job), reason))
		}
		w, err := c.finder.find(ctx, cand.pod)
		if err != nil {
			return nil, err
		}
		r := c.limits.check(cand.pod, w, migrating)
		if r == nil {
			r = c.objects.exceeded(w, c.clock.Now())
		}
		if r != nil {
			klog.FromContext(ctx).V(4).Info("PodMigrationJob held back", "podMigrationJob", klog.KObj(job), "limit", r.gate, "message", r.message)
			if job.Status.Reason == string(r.gate) && job.Status.Message == r.message && job.Status.Phase == schedv1alpha1.PodMigrationJobPending {
				return nil, nil
			}
			job.Status.Phase, job.Status.Reason, job.Status.Message = schedv1alpha1.PodMigrationJobPending, string(r.gate), r.message
			return nil, c.updateStatus(ctx, job)
		}
		m.podUID, m.node = cand.pod.UID, cand.pod.Spec.NodeName
		if w != nil {
			m.workload = w.ref.UID
		}
	}
	metav1.SetMetaDataAnnotation(&job.ObjectMeta, AnnotationPassedArbitration, "true")
	if m.node != "" {
		metav1.SetMetaDataAnnotation(&job.ObjectMeta, AnnotationPodNode, m.node)
	}
	if m.workload != "" {
		metav1.SetMetaDataAnnotation(&job.ObjectMeta, AnnotationWorkload, string(m.workload))
	}
	if err := c.client.Update(ctx, job); err != nil {
		return nil, fmt.Errorf("mark PodMigrationJob %s passed: %w", job.Name, err)
	}
	c.mu.Lock()
	c.passed[job.UID] = true
	c.mu.Unlock()
	c.event(job, corev1.EventTypeNormal, "PassedArbitration", "Pod %q may be migrated", podName(job))
	return m, nil
}

// hasPassed reports whether arbitration let job through, by its annotation or, before the cache shows that,
// by this controller's memory.
func (c *Controller) hasPassed(job *schedv1alpha1.PodMigrationJob) bool {
	if job.Annotations[AnnotationPassedArbitration] == "true" {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.passed[job.UID]
}

// migrations returns the migrations in progress from the cache; see migrationsOf.
func (c *Controller) migrations(ctx context.Context, arbitrating bool) ([]migration, error) {
	jobs := &schedv1alpha1.PodMigrationJobList{}
	if err := c.client.List(ctx, jobs); err != nil {
		return nil, fmt.Errorf("list PodMigrationJobs: %w", err)
	}
	return c.migrationsOf(ctx, jobs.Items, arbitrating)
}

// migrationsOf returns the migrations in progress among jobs: Running jobs, and Pending ones that arbitration
// let through (arbitrating) or all Pending ones (for the descheduler's filters, as Koordinator's). It forgets
// the jobs it remembered as passed once the cache shows them so.
func (c *Controller) migrationsOf(ctx context.Context, jobs []schedv1alpha1.PodMigrationJob, arbitrating bool) ([]migration, error) {
	c.mu.Lock()
	for i := range jobs {
		if jobs[i].Annotations[AnnotationPassedArbitration] == "true" || !isPending(&jobs[i]) {
			delete(c.passed, jobs[i].UID)
		}
	}
	c.mu.Unlock()
	var out []migration
	for i := range jobs {
		j := &jobs[i]
		if isFinished(j) || j.Spec.PodRef == nil {
			continue
		}
		if isPending(j) && arbitrating && !c.hasPassed(j) {
			continue
		}
		m := migration{pod: podName(j), podUID: j.Spec.PodRef.UID, node: j.Annotations[AnnotationPodNode], workload: types.UID(j.Annotations[AnnotationWorkload])}
		if m.node == "" || m.workload == "" {
			pod := &corev1.Pod{}
			if err := c.client.Get(ctx, m.pod, pod); err == nil && (m.podUID == "" || m.podUID == pod.UID) {
				m.podUID = pod.UID
				if m.node == "" {
					m.node = pod.Spec.NodeName
				}
				if m.workload == "" {
					w, err := c.finder.find(ctx, pod)
					if err != nil {
						return nil, err
					}
					if w != nil {
						m.workload = w.ref.UID
					}
				}
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// countPhases sets the jobs-by-phase gauge.
func (c *Controller) countPhases(jobs []schedv1alpha1.PodMigrationJob) {
	counts := map[schedv1alpha1.PodMigrationJobPhase]int{
		schedv1alpha1.PodMigrationJobPending: 0, schedv1alpha1.PodMigrationJobRunning: 0, schedv1alpha1.PodMigrationJobSucceeded: 0,
		schedv1alpha1.PodMigrationJobFailed: 0, schedv1alpha1.PodMigrationJobAborted: 0,
	}
	for i := range jobs {
		p := jobs[i].Status.Phase
		if p == "" {
			p = schedv1alpha1.PodMigrationJobPending
		}
		counts[p]++
	}
	for p, n := range counts {
		c.metrics.Current.WithLabelValues(string(p)).Set(float64(n))
	}
}
