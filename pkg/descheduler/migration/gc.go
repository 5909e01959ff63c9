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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// collectGarbage deletes, as Koordinator's scavenger, the jobs created longer ago than their ttl plus the
// retention. A job still running by then has timed out; its finalizer has the reconciler delete its
// Reservation before the job goes.
func (c *Controller) collectGarbage(ctx context.Context) error {
	jobs := &schedv1alpha1.PodMigrationJobList{}
	if err := c.client.List(ctx, jobs); err != nil {
		return fmt.Errorf("list PodMigrationJobs: %w", err)
	}
	now := c.clock.Now()
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if j.DeletionTimestamp != nil || now.Sub(j.CreationTimestamp.Time) < c.ttlOf(j)+c.retention {
			continue
		}
		if err := c.client.Delete(ctx, j, client.Preconditions{UID: &j.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete PodMigrationJob %s: %w", j.Name, err)
		}
		klog.FromContext(ctx).V(4).Info("Deleted old PodMigrationJob", "podMigrationJob", klog.KObj(j), "phase", j.Status.Phase)
	}
	return nil
}
