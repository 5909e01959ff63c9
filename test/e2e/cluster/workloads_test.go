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

package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// workloadTimeout bounds each step of the workload test: a controller reacting, a scheduler binding, KWOK
// running or completing a pod.
const workloadTimeout = time.Minute

// TestWorkloadControllers: the local cluster is a whole cluster. What `kubectl create deployment` and `kubectl
// create job` create gets pods from kube-controller-manager, which kube-scheduler (default-scheduler) binds and
// the fake nodes run; the Job completes; deleting the Deployment removes its ReplicaSet and pods (garbage
// collection); deleting the namespace removes what is left in it.
func TestWorkloadControllers(t *testing.T) {
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-workloads"}}
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns.Name, metav1.DeleteOptions{})
	})

	labels := map[string]string{"app": "web"}
	// What `kubectl create deployment web --image=nginx:1.27 --replicas=2` creates.
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns.Name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := env.kube.AppsV1().Deployments(ns.Name).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What `kubectl create job pi --image=busybox:1.37` creates, with two completions.
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: ns.Name},
		Spec: batchv1.JobSpec{
			Completions: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "pi", Image: "busybox:1.37"}},
			}},
		},
	}
	if _, err := env.kube.BatchV1().Jobs(ns.Name).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(ctx, t, workloadTimeout, "the Deployment's two pods bound by default-scheduler and running", func(ctx context.Context) (bool, string) {
		d, err := env.kube.AppsV1().Deployments(ns.Name).Get(ctx, deploy.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.AvailableReplicas == 2, fmt.Sprintf("available %d of 2, conditions %v", d.Status.AvailableReplicas, d.Status.Conditions)
	})
	pods, err := env.kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.SchedulerName != corev1.DefaultSchedulerName || p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: scheduler %q, node %q, phase %s; want bound by %s and running", p.Name, p.Spec.SchedulerName,
				p.Spec.NodeName, p.Status.Phase, corev1.DefaultSchedulerName)
		}
	}

	eventually(ctx, t, workloadTimeout, "the Job complete", func(ctx context.Context) (bool, string) {
		j, err := env.kube.BatchV1().Jobs(ns.Name).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("succeeded %d, active %d, conditions %v", j.Status.Succeeded, j.Status.Active, j.Status.Conditions)
	})

	if err := env.kube.AppsV1().Deployments(ns.Name).Delete(ctx, deploy.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, workloadTimeout, "the Deployment's ReplicaSet and pods garbage-collected", func(ctx context.Context) (bool, string) {
		rs, err := env.kube.AppsV1().ReplicaSets(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		pods, err := env.kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		return len(rs.Items) == 0 && len(pods.Items) == 0, fmt.Sprintf("%d ReplicaSets, %d pods", len(rs.Items), len(pods.Items))
	})

	if err := env.kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, workloadTimeout, "the namespace deleted with what is left in it", func(ctx context.Context) (bool, string) {
		got, err := env.kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("phase %s, conditions %v", got.Status.Phase, got.Status.Conditions)
	})
}
