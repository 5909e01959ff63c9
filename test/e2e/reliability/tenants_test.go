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

package reliability

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/apis/extension"
	schedsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	koordconfig "github.com/koord-dev/koord/config"
	"github.com/koord-dev/koord/pkg/sim"
)

// The quota tenants of the workload: two children of a parent of 16 CPU (20 at most), tenant-a with a min of
// 4 and tenant-b with a min of 12. Every cycle tenant-a borrows (16 pods of 1 CPU), then tenant-b asks for its
// min (12 pods): tenant-a's runtime falls to 8 and koord-scheduler's revoke controller evicts its over-use after
// quotaRevokeDelay.
const (
	tenantParent     = "reliability-tenants"
	tenantA, tenantB = "tenant-a", "tenant-b"
	// quotaRevokeDelay is the revoke controller's delayEvictTime in the suite's scheduler configuration.
	quotaRevokeDelay = 10 * time.Second
	// tenantCycleInterval is how often a cycle starts; a cycle's pods are gone before the next.
	tenantCycleInterval = 90 * time.Second
)

// tenantQuotas returns the parent and the two children, parent first.
func tenantQuotas() []*schedsigsv1alpha1.ElasticQuota {
	// Memory is plenty (the pods ask 256Mi each): CPU is what the tenants contend for.
	quota := func(name string, minCPU, maxCPU, minMemory string, labels map[string]string) *schedsigsv1alpha1.ElasticQuota {
		return &schedsigsv1alpha1.ElasticQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
			Spec: schedsigsv1alpha1.ElasticQuotaSpec{
				Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(minCPU), corev1.ResourceMemory: resource.MustParse(minMemory)},
				Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(maxCPU), corev1.ResourceMemory: resource.MustParse("64Gi")},
			},
		}
	}
	child := map[string]string{extension.LabelQuotaParent: tenantParent}
	return []*schedsigsv1alpha1.ElasticQuota{
		quota(tenantParent, "16", "16", "64Gi", map[string]string{extension.LabelQuotaIsParent: "true"}),
		quota(tenantA, "4", "20", "16Gi", child),
		quota(tenantB, "12", "20", "16Gi", child),
	}
}

// createTenantQuotas creates the tenants' quotas.
func createTenantQuotas(ctx context.Context) error {
	for _, q := range tenantQuotas() {
		if _, err := env.koord.SchedulingSigsV1alpha1().ElasticQuotas(namespace).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create ElasticQuota %s: %w", q.Name, err)
		}
	}
	return nil
}

// deleteTenantQuotas deletes the tenants' quotas, children first (a parent with children is refused), once
// their pods are gone (a quota with pods is refused).
func deleteTenantQuotas(ctx context.Context) error {
	quotas := tenantQuotas()
	var errs []error
	for i := len(quotas) - 1; i >= 0; i-- {
		name := quotas[i].Name
		errs = append(errs, waitFor(ctx, time.Minute, "ElasticQuota "+name+" deleted", func(ctx context.Context) (bool, error) {
			err := env.koord.SchedulingSigsV1alpha1().ElasticQuotas(namespace).Delete(ctx, name, metav1.DeleteOptions{})
			return err == nil || apierrors.IsNotFound(err), err
		}))
	}
	return errors.Join(errs...)
}

// tenantPod returns a pod of 1 CPU charged to quota.
func tenantPod(name, quota string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{"app": "tenant", extension.LabelQuotaName: quota}},
		Spec: corev1.PodSpec{
			SchedulerName: "koord-scheduler",
			Containers: []corev1.Container{{Name: "job", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
}

// tenantCycle is one borrow and reclaim: tenant-a's 16 pods, tenant-b's 12 pods 15 s later, all deleted 80 s
// after the start: long enough after the reclaim (the revoke delay and the invariant's settle time, 40 s) that a
// revoke controller that did not evict would be caught.
func (c *churn) tenantCycle(ctx context.Context, i int) error {
	var errs []error
	for p := range 16 {
		name := fmt.Sprintf("%s-%d-%d", tenantA, i, p)
		if err := c.create(ctx, tenantPod(name, tenantA)); err != nil {
			errs = append(errs, err)
			continue
		}
		c.deleteLater(ctx, 80*time.Second, name)
	}
	c.wg.Go(func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(15 * time.Second):
		}
		for p := range 12 {
			name := fmt.Sprintf("%s-%d-%d", tenantB, i, p)
			if err := c.create(ctx, tenantPod(name, tenantB)); err != nil {
				if ctx.Err() == nil {
					c.failed.Add(1)
				}
				continue
			}
			c.deleteLater(ctx, 65*time.Second, name)
		}
	})
	return errors.Join(errs...)
}

// memoryHog returns an LS pod pinned to node, without a memory limit, that uses 100Gi of the node's memory (the
// simulated agents follow its usage annotation, capped by the pod's limits: hence none): the node goes above
// memoryEvictThresholdPercent (70 percent of 128Gi) and its agent evicts the BE pods there, never the hog.
func memoryHog(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels:      map[string]string{"app": "hog", extension.LabelPodQoS: string(extension.QoSLS)},
			Annotations: map[string]string{sim.AnnotationUsage: `{"memory": {"type": "constant", "value": "100Gi"}}`}},
		Spec: corev1.PodSpec{
			SchedulerName: "koord-scheduler",
			Affinity:      onNode(node),
			Containers: []corev1.Container{{Name: "cache", Image: "redis", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
}

// schedulerConfigWithRevoke returns the shipped koord-scheduler configuration with the ElasticQuota plugin's
// revoke controller on (monitorAllQuotas, delayEvictTime quotaRevokeDelay), written to path.
func schedulerConfigWithRevoke(path string) error {
	data, err := fs.ReadFile(koordconfig.FS, "scheduler/koord-scheduler-config.yaml")
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("decode the scheduler configuration: %w", err)
	}
	profiles, _ := cfg["profiles"].([]any)
	if len(profiles) == 0 {
		return errors.New("the scheduler configuration has no profiles")
	}
	for _, p := range profiles {
		profile, _ := p.(map[string]any)
		if profile == nil {
			return errors.New("a profile of the scheduler configuration is not an object")
		}
		pluginConfig, _ := profile["pluginConfig"].([]any)
		profile["pluginConfig"] = append(pluginConfig, map[string]any{
			"name": "ElasticQuota",
			"args": map[string]any{"monitorAllQuotas": true, "delayEvictTime": quotaRevokeDelay.String()},
		})
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}
