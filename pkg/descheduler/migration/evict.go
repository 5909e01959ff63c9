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
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// Evict migrates pod by creating a PodMigrationJob for it: mode args.defaultJobMode, ttl args.defaultJobTTL,
// args.defaultDeleteOptions, and the eviction's reason, strategy and profile in the job's annotations. It
// returns an error saying why when the pod may not be migrated (Filter, the workload limiter) or the job
// cannot be created. In dry run the job is created too; it ends Succeeded with reason DryRun.
func (c *Controller) Evict(ctx context.Context, pod *corev1.Pod, opts evictions.EvictOptions) error {
	logger := klog.FromContext(ctx)
	if reason := c.refuse(ctx, pod, ""); reason != "" {
		return fmt.Errorf("pod %s/%s may not be migrated: %s", pod.Namespace, pod.Name, reason)
	}
	w, err := c.finder.find(ctx, pod)
	if err != nil {
		return err
	}
	if r := c.objects.exceeded(w, c.clock.Now()); r != nil {
		return errors.New(string(r.gate) + ": " + r.message)
	}
	job := newJob(pod, opts, c.args.DefaultJobMode, c.ttlOf(&schedv1alpha1.PodMigrationJob{}), c.args.DefaultDeleteOptions)
	if err := c.client.Create(ctx, job); err != nil {
		return fmt.Errorf("create PodMigrationJob for pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c.metrics.Jobs.WithLabelValues(string(schedv1alpha1.PodMigrationJobPending), "").Inc()
	logger.V(2).Info("Created PodMigrationJob", "pod", klog.KObj(pod), "podMigrationJob", klog.KObj(job), "reason", opts.Reason,
		"strategy", opts.StrategyName, "profile", opts.ProfileName, "dryRun", c.dryRun)
	return nil
}

// newJob returns the PodMigrationJob that migrates pod for the eviction opts.
func newJob(pod *corev1.Pod, opts evictions.EvictOptions, mode string, ttl time.Duration, del *metav1.DeleteOptions) *schedv1alpha1.PodMigrationJob {
	job := &schedv1alpha1.PodMigrationJob{
		ObjectMeta: metav1.ObjectMeta{
			Name: string(uuid.NewUUID()),
			Annotations: map[string]string{
				AnnotationEvictReason:  opts.Reason,
				AnnotationEvictTrigger: opts.StrategyName,
				AnnotationEvictProfile: opts.ProfileName,
			},
		},
		Spec: schedv1alpha1.PodMigrationJobSpec{
			PodRef: &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Mode:   schedv1alpha1.PodMigrationJobMode(mode),
			TTL:    &metav1.Duration{Duration: ttl},
		},
	}
	if del != nil {
		job.Spec.DeleteOptions = del.DeepCopy()
	}
	return job
}
