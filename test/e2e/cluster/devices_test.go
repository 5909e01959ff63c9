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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
)

// TestGPUSharingDeployment: on the local cluster's simulated GPUs (2 per node, reported by the node agents
// and turned into node resources by koord-manager), a Deployment of 4 pods of half a GPU
// (koordinator.sh/gpu: 50, which the pod webhook turns into gpu-core, gpu-memory-ratio and gpu.shared) on one
// node runs, each pod annotated with its GPU, two pods per GPU.
func TestGPUSharingDeployment(t *testing.T) {
	ctx := t.Context()
	node := cluster.NodeName(1)
	eventually(ctx, t, workloadTimeout, "the node's GPU resources from its Device", func(ctx context.Context) (bool, string) {
		n, err := env.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		q := n.Status.Allocatable[extension.ResourceGPUMemoryRatio]
		return q.Value() == 200, fmt.Sprintf("gpu-memory-ratio %s", q.String())
	})

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-gpu"}}
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns.Name, metav1.DeleteOptions{})
	})
	gpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), extension.ResourceGPU: resource.MustParse("50")}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "inference", Namespace: ns.Name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "inference"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "inference"}},
				Spec: corev1.PodSpec{
					SchedulerName: "koord-scheduler",
					NodeSelector:  map[string]string{corev1.LabelHostname: node},
					Containers: []corev1.Container{{Name: "app", Image: "inference:1",
						Resources: corev1.ResourceRequirements{Requests: gpu, Limits: gpu}}},
				},
			},
		},
	}
	if _, err := env.kube.AppsV1().Deployments(ns.Name).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	perGPU := map[int32]int{}
	eventually(ctx, t, workloadTimeout, "4 replicas running with a GPU each", func(ctx context.Context) (bool, string) {
		pods, err := env.kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: "app=inference"})
		if err != nil {
			return false, err.Error()
		}
		clear(perGPU)
		running := 0
		for _, p := range pods.Items {
			alloc, err := extension.GetDeviceAllocations(p.Annotations)
			if p.Status.Phase != corev1.PodRunning || err != nil || len(alloc[extension.DeviceTypeGPU]) != 1 {
				return false, fmt.Sprintf("pod %s: %s, device-allocated %v (%v)", p.Name, p.Status.Phase, alloc, err)
			}
			perGPU[alloc[extension.DeviceTypeGPU][0].Minor]++
			running++
		}
		return running == 4, fmt.Sprintf("%d pods running", running)
	})
	if perGPU[0] != 2 || perGPU[1] != 2 {
		t.Errorf("pods per GPU %v, want 2 on each of GPUs 0 and 1", perGPU)
	}
}
