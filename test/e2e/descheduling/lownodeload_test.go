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

package descheduling_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/sim"
	"github.com/koord-dev/koord/test/e2e/localcluster"
)

const (
	namespace = metav1.NamespaceDefault
	// replicas pods of podCPU cores of usage each (requesting 1 core) make two 32-core nodes 87.5% busy.
	replicas = 16
	podCPU   = "3.5"
	// maxUnavailable is the test configuration's maxUnavailablePerWorkload.
	maxUnavailable = 4
	// coolTimeout bounds how long the descheduler has to bring every node under the high threshold.
	coolTimeout = 5 * time.Minute
)

// TestHotNodesCool makes two of the ten nodes hot with one Deployment and checks that koord-descheduler moves its
// pods to cool nodes until every node is under LowNodeLoad's high CPU threshold, that the spread of node usage
// shrinks, that the Deployment never has more pods unavailable than maxUnavailablePerWorkload, and that every
// PodMigrationJob ends leaving no Reservation holding resources. koord-descheduler is killed (SIGKILL) and
// started again while the first migration runs.
func TestHotNodesCool(t *testing.T) {
	ctx := t.Context()
	names := env.c.NodeNames()
	hot := names[:2]

	// Only the two hot nodes take the Deployment: the others are cordoned while it is placed.
	for _, n := range names[2:] {
		setUnschedulable(ctx, t, n, true)
	}
	// Migrations run for about a second on simulated nodes, so a poll can miss the Running phase;
	// a watch opened before the first job exists sees every transition.
	jobRunning := watchForRunningJob(ctx, t)
	deployment := hotDeployment()
	if _, err := env.kube.AppsV1().Deployments(namespace).Create(ctx, deployment, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the Deployment: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		_ = env.kube.AppsV1().Deployments(namespace).Delete(ctx, deployment.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
	})
	localcluster.Eventually(ctx, t, time.Second, 2*time.Minute, "the Deployment available on the two hot nodes", func(ctx context.Context) (bool, string) {
		d, err := env.kube.AppsV1().Deployments(namespace).Get(ctx, deployment.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.AvailableReplicas == replicas, fmt.Sprintf("%d of %d available", d.Status.AvailableReplicas, replicas)
	})
	for _, n := range names[2:] {
		setUnschedulable(ctx, t, n, false)
	}

	var before map[string]float64
	localcluster.Eventually(ctx, t, time.Second, time.Minute, "both hot nodes reported above the high threshold", func(ctx context.Context) (bool, string) {
		usage, err := cpuUsagePercent(ctx)
		if err != nil {
			return false, err.Error()
		}
		before = usage
		return usage[hot[0]] > highCPU && usage[hot[1]] > highCPU, describe(usage)
	})
	t.Logf("CPU usage before: %s", describe(before))

	// Kill koord-descheduler while the first migration runs.
	select {
	case <-jobRunning:
	case <-time.After(2 * time.Minute):
		jobs, err := migrationJobs(ctx)
		t.Fatalf("no PodMigrationJob seen Running within 2m; %d jobs now (list error: %v)", len(jobs), err)
	}
	if err := env.c.Restart(ctx, "koord-descheduler"); err != nil {
		t.Fatalf("restart koord-descheduler: %v", err)
	}

	var after map[string]float64
	worstUnavailable := int32(0)
	localcluster.Eventually(ctx, t, time.Second, coolTimeout, "every node under the high threshold with every migration ended", func(ctx context.Context) (bool, string) {
		d, err := env.kube.AppsV1().Deployments(namespace).Get(ctx, deployment.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		worstUnavailable = max(worstUnavailable, replicas-d.Status.AvailableReplicas)
		usage, err := cpuUsagePercent(ctx)
		if err != nil {
			return false, err.Error()
		}
		after = usage
		jobs, err := migrationJobs(ctx)
		if err != nil {
			return false, err.Error()
		}
		var open []string
		for _, j := range jobs {
			if j.Status.Phase != schedv1alpha1.PodMigrationJobSucceeded && j.Status.Phase != schedv1alpha1.PodMigrationJobFailed {
				open = append(open, fmt.Sprintf("%s (pod %s, created %s, phase %q, status %q, reason %q, message %q, annotations %v)",
					j.Name, j.Spec.PodRef.Name, j.CreationTimestamp.Format(time.TimeOnly), j.Status.Phase, j.Status.Status,
					j.Status.Reason, j.Status.Message, j.Annotations))
			}
		}
		cool := !slices.ContainsFunc(names, func(n string) bool { return usage[n] >= highCPU })
		return cool && len(open) == 0 && len(jobs) > 0, fmt.Sprintf("%s; %d jobs, %d not ended: %s", describe(usage), len(jobs), len(open), strings.Join(open, "; "))
	})
	t.Logf("CPU usage after: %s", describe(after))

	spreadBefore, spreadAfter := stddev(before), stddev(after)
	t.Logf("Spread of node CPU usage (standard deviation, percent of allocatable): %.1f before, %.1f after; hottest node %.1f%% before, %.1f%% after",
		spreadBefore, spreadAfter, slices.Max(values(before)), slices.Max(values(after)))
	if spreadAfter >= spreadBefore {
		t.Errorf("spread of node CPU usage %.1f after, want below %.1f before", spreadAfter, spreadBefore)
	}
	if worstUnavailable > maxUnavailable {
		t.Errorf("the Deployment had %d pods unavailable at once, want at most maxUnavailablePerWorkload %d", worstUnavailable, maxUnavailable)
	}

	jobs, err := migrationJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	succeeded := 0
	for _, j := range jobs {
		if j.Status.Phase == schedv1alpha1.PodMigrationJobSucceeded {
			succeeded++
		} else {
			t.Logf("PodMigrationJob %s ended %s: %s %s", j.Name, j.Status.Phase, j.Status.Reason, j.Status.Message)
		}
	}
	t.Logf("%d PodMigrationJobs, %d succeeded; the Deployment had at most %d pods unavailable", len(jobs), succeeded, worstUnavailable)
	if succeeded == 0 {
		t.Errorf("no PodMigrationJob succeeded")
	}
	reservations, err := env.koord.SchedulingV1alpha1().Reservations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reservations.Items {
		if r.Spec.Template == nil || r.Spec.Template.Namespace != namespace {
			continue
		}
		if r.Status.Phase != schedv1alpha1.ReservationSucceeded && r.Status.Phase != schedv1alpha1.ReservationFailed {
			t.Errorf("Reservation %s left holding resources (phase %q) after every migration ended", r.Name, r.Status.Phase)
		}
	}
	// Every pod of the Deployment still runs, once.
	pods, err := env.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + deployment.Name})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	if running != replicas {
		t.Errorf("%d pods of the Deployment run, want %d", running, replicas)
	}
}

// hotDeployment returns the Deployment that makes its nodes hot: each pod requests one core and uses podCPU.
func hotDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "hot"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hot", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      labels,
					Annotations: map[string]string{sim.AnnotationUsage: fmt.Sprintf(`{"cpu": {"type": "constant", "value": %q}}`, podCPU)},
				},
				Spec: corev1.PodSpec{
					SchedulerName: "koord-scheduler",
					Containers: []corev1.Container{{
						Name:  "main",
						Image: "busybox",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("1"),
							corev1.ResourceMemory: resource.MustParse("1Gi"),
						}},
					}},
					TerminationGracePeriodSeconds: ptr.To[int64](0),
				},
			},
		},
	}
}

// setUnschedulable cordons or uncordons the node.
func setUnschedulable(ctx context.Context, t *testing.T, node string, unschedulable bool) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)
	if _, err := env.kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("set node %s unschedulable=%t: %v", node, unschedulable, err)
	}
	if unschedulable {
		t.Cleanup(func() { setUnschedulable(context.WithoutCancel(ctx), t, node, false) })
	}
}

// cpuUsagePercent returns every node's CPU usage as its NodeMetric last reported it, in percent of the node's
// allocatable CPU.
func cpuUsagePercent(ctx context.Context) (map[string]float64, error) {
	usage := map[string]float64{}
	for _, name := range env.c.NodeNames() {
		node, err := env.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		nm, err := env.koord.SloV1alpha1().NodeMetrics().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if nm.Status.NodeMetric == nil {
			return nil, fmt.Errorf("NodeMetric %s has no usage yet", name)
		}
		used := nm.Status.NodeMetric.NodeUsage.ResourceList.Cpu().MilliValue()
		usage[name] = 100 * float64(used) / float64(node.Status.Allocatable.Cpu().MilliValue())
	}
	return usage, nil
}

// migrationJobs returns the PodMigrationJobs of the test's pods.
func migrationJobs(ctx context.Context) ([]schedv1alpha1.PodMigrationJob, error) {
	list, err := env.koord.SchedulingV1alpha1().PodMigrationJobs().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(j schedv1alpha1.PodMigrationJob) bool {
		return j.Spec.PodRef == nil || j.Spec.PodRef.Namespace != namespace
	}), nil
}

// watchForRunningJob watches PodMigrationJobs of the test namespace and closes the returned
// channel when one is seen in the Running phase. The watch ends with the test.
func watchForRunningJob(ctx context.Context, t *testing.T) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	running := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	jobs := env.koord.SchedulingV1alpha1().PodMigrationJobs()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return jobs.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return jobs.Watch(ctx, opts)
		},
	}
	go func() {
		defer close(done)
		_, err := watchtools.UntilWithSync(ctx, lw, &schedv1alpha1.PodMigrationJob{}, nil, func(e watch.Event) (bool, error) {
			j, ok := e.Object.(*schedv1alpha1.PodMigrationJob)
			return ok && j.Spec.PodRef != nil && j.Spec.PodRef.Namespace == namespace &&
				j.Status.Phase == schedv1alpha1.PodMigrationJobRunning, nil
		})
		if err == nil {
			close(running)
		}
	}()
	return running
}

// describe prints node usage in node order, e.g. "koord-node-0 87.5%, koord-node-1 86.9%, ...".
func describe(usage map[string]float64) string {
	parts := make([]string, 0, len(usage))
	for i := range len(usage) {
		name := cluster.NodeName(i)
		parts = append(parts, fmt.Sprintf("%s %.1f%%", name, usage[name]))
	}
	return strings.Join(parts, ", ")
}

// values returns the usage figures.
func values(usage map[string]float64) []float64 {
	out := make([]float64, 0, len(usage))
	for _, v := range usage {
		out = append(out, v)
	}
	return out
}

// stddev is the population standard deviation of the usage figures.
func stddev(usage map[string]float64) float64 {
	var sum, sq float64
	for _, v := range usage {
		sum += v
	}
	mean := sum / float64(len(usage))
	for _, v := range usage {
		sq += (v - mean) * (v - mean)
	}
	return math.Sqrt(sq / float64(len(usage)))
}
