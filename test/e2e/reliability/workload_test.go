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
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota"
)

// namespace holds the workload.
const namespace = metav1.NamespaceDefault

// churn is the workload that runs while faults are injected: an LS Deployment scaled between 6 and 10 replicas,
// a BE pod on batch resources created every second and deleted 20 s later, a gang of three created every 20 s
// and deleted 15 s later, a Reservation every 30 s with the pod it is for created 3 s later (both deleted 25 s
// later), a PodMigrationJob of one of the Deployment's pods every 40 s, a borrow and reclaim between two quota
// tenants every 90 s (tenantCycle: the revoke controller evicts the borrower's over-use), and an LS pod using
// 100Gi of a node's memory every 45 s, on each node in turn, deleted 30 s later (the node's agent evicts the BE
// pods there). Errors of its own requests are counted, not fatal: an apiserver or webhook fault makes some fail.
type churn struct {
	wg      sync.WaitGroup
	created atomic.Int64
	deleted atomic.Int64
	failed  atomic.Int64
	// revoked and evicted are, once stop returns, the pods koord-scheduler's revoke controller evicted and the
	// BE pods the node agents evicted: the quota tenants and the memory hogs must have made both happen, or the
	// invariants about them were checked on nothing.
	revoked, evicted int
}

// startChurn creates the Deployment and starts the loops until ctx ends; Stop waits for them.
func startChurn(ctx context.Context) (*churn, error) {
	c := &churn{}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](6),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", extension.LabelPodQoS: string(extension.QoSLS)}},
				Spec: corev1.PodSpec{
					SchedulerName: "koord-scheduler",
					Containers: []corev1.Container{{Name: "web", Image: "nginx", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
					}}},
					TerminationGracePeriodSeconds: ptr.To[int64](0),
				},
			},
		},
	}
	if _, err := env.kube.AppsV1().Deployments(namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create the Deployment: %w", err)
	}
	if err := createTenantQuotas(ctx); err != nil {
		return nil, err
	}
	c.loop(ctx, tenantCycleInterval, c.tenantCycle)
	c.loop(ctx, 45*time.Second, func(ctx context.Context, i int) error {
		nodes := env.c.NodeNames()
		name := fmt.Sprintf("hog-%d", i)
		if err := c.create(ctx, memoryHog(name, nodes[i%len(nodes)])); err != nil {
			return err
		}
		c.deleteLater(ctx, 30*time.Second, name)
		return nil
	})
	c.loop(ctx, 15*time.Second, func(ctx context.Context, i int) error {
		replicas := int32(6 + 4*(i%2))
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
		_, err := env.kube.AppsV1().Deployments(namespace).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	})
	c.loop(ctx, time.Second, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("be-%d", i)
		if err := c.create(ctx, bePod(name)); err != nil {
			return err
		}
		c.deleteLater(ctx, 20*time.Second, name)
		return nil
	})
	c.loop(ctx, 20*time.Second, func(ctx context.Context, i int) error {
		for m := range 3 {
			name := fmt.Sprintf("gang-%d-%d", i, m)
			if err := c.create(ctx, gangPod(name, fmt.Sprintf("gang-%d", i), 3)); err != nil {
				return err
			}
			c.deleteLater(ctx, 15*time.Second, name)
		}
		return nil
	})
	c.loop(ctx, 30*time.Second, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("reserved-%d", i)
		r := reservation(name)
		if _, err := env.koord.SchedulingV1alpha1().Reservations().Create(ctx, r, metav1.CreateOptions{}); err != nil {
			return err
		}
		c.wg.Go(func() {
			select {
			case <-ctx.Done():
			case <-time.After(3 * time.Second):
				if err := c.create(ctx, reservedPod(name)); err != nil && ctx.Err() == nil {
					c.failed.Add(1)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(25 * time.Second):
			}
			bg := context.WithoutCancel(ctx)
			_ = env.kube.CoreV1().Pods(namespace).Delete(bg, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			_ = env.koord.SchedulingV1alpha1().Reservations().Delete(bg, name, metav1.DeleteOptions{})
		})
		return nil
	})
	c.loop(ctx, 40*time.Second, func(ctx context.Context, i int) error {
		pods, err := env.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
				continue
			}
			job := &schedv1alpha1.PodMigrationJob{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("migrate-%d", i)},
				Spec: schedv1alpha1.PodMigrationJobSpec{PodRef: &corev1.ObjectReference{Namespace: namespace, Name: p.Name},
					Mode: schedv1alpha1.PodMigrationJobModeReservationFirst, TTL: &metav1.Duration{Duration: 2 * time.Minute}},
			}
			_, err := env.koord.SchedulingV1alpha1().PodMigrationJobs().Create(ctx, job, metav1.CreateOptions{})
			return err
		}
		return nil
	})
	return c, nil
}

// reservation returns a Reservation of 200m and 256Mi for the pod of the same name.
func reservation(name string) *schedv1alpha1.Reservation {
	return &schedv1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: schedv1alpha1.ReservationSpec{
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace},
				Spec: corev1.PodSpec{SchedulerName: "koord-scheduler", Containers: []corev1.Container{{Name: "c", Image: "pause",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}}},
			},
			Owners:       []schedv1alpha1.ReservationOwner{{Object: &corev1.ObjectReference{Kind: "Pod", Namespace: namespace, Name: name}}},
			TTL:          &metav1.Duration{Duration: 2 * time.Minute},
			AllocateOnce: ptr.To(true),
		},
	}
}

// reservedPod returns the pod a reservation of the same name is for.
func reservedPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": "reserved"}},
		Spec: corev1.PodSpec{SchedulerName: "koord-scheduler", TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}}},
	}
}

// loop runs f every interval until ctx ends, counting its errors.
func (c *churn) loop(ctx context.Context, interval time.Duration, f func(ctx context.Context, i int) error) {
	c.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for i := 0; ; i++ {
			if err := f(ctx, i); err != nil && ctx.Err() == nil {
				c.failed.Add(1)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// create creates pod.
func (c *churn) create(ctx context.Context, pod *corev1.Pod) error {
	if _, err := env.kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	c.created.Add(1)
	return nil
}

// deleteLater deletes the pod name after d, or when ctx ends.
func (c *churn) deleteLater(ctx context.Context, d time.Duration, name string) {
	c.wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
		err := env.kube.CoreV1().Pods(namespace).Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		switch {
		case err == nil:
			c.deleted.Add(1)
		case !apierrors.IsNotFound(err):
			c.failed.Add(1)
		}
	})
}

// stop waits for the loops, which end with the context given to startChurn, and deletes the Deployment. The
// PodMigrationJobs stay for the invariants to see them end; cleanUp deletes them.
func (c *churn) stop(ctx context.Context) {
	c.wg.Wait()
	events, err := env.kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", elasticquota.ReasonQuotaOverUsedRevoked).String()})
	if err == nil {
		c.revoked = len(events.Items)
	}
	c.evicted = int(env.c.Sim().Snapshot().Total.Evictions)
	_ = env.kube.AppsV1().Deployments(namespace).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
}

// cleanUp deletes the PodMigrationJobs and the quotas the workload created.
func (c *churn) cleanUp(ctx context.Context) {
	_ = env.koord.SchedulingV1alpha1().PodMigrationJobs().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_ = deleteTenantQuotas(ctx)
}

// bePod returns a BE pod on batch resources.
func bePod(name string) *corev1.Pod {
	batch := corev1.ResourceList{extension.BatchCPU: resource.MustParse("500"), extension.BatchMemory: resource.MustParse("512Mi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{extension.LabelPodQoS: string(extension.QoSBE), "app": "be"}},
		Spec: corev1.PodSpec{
			SchedulerName:     "koord-scheduler",
			PriorityClassName: string(extension.PriorityBatch),
			Containers: []corev1.Container{{Name: "work", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: batch, Limits: batch}}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
}

// onNode is the affinity that pins a pod to node, through the scheduler (unlike spec.nodeName).
func onNode(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

// gangPod returns a member of the gang of min members.
func gangPod(name, gang string, min int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": "gang"},
			Annotations: map[string]string{extension.AnnotationGangName: gang, extension.AnnotationGangMinNum: fmt.Sprint(min),
				extension.AnnotationGangWaitTime: "60s"}},
		Spec: corev1.PodSpec{
			SchedulerName: "koord-scheduler",
			Containers: []corev1.Container{{Name: "worker", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
}
