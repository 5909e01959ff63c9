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
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
)

// TestLSRDeploymentGetsDisjointCPUs: the simulated nodes report their topology (2 sockets × 8 cores × 2
// threads for 32 CPUs) as NodeResourceTopologies, and koord-scheduler gives the 3 replicas of an LSR Deployment
// on one node disjoint whole cores, which their resource-status says.
func TestLSRDeploymentGetsDisjointCPUs(t *testing.T) {
	ctx := t.Context()
	node := cluster.NodeName(0)
	eventually(ctx, t, workloadTimeout, "the node's NodeResourceTopology with 32 CPUs on 2 NUMA nodes", func(ctx context.Context) (bool, string) {
		nrt, err := env.koord.TopologyV1alpha1().NodeResourceTopologies().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		topo, err := extension.GetCPUTopology(nrt.Annotations)
		if err != nil || topo == nil {
			return false, fmt.Sprintf("cpu-topology: %v", err)
		}
		return len(topo.Detail) == 32 && len(nrt.Zones) == 2, fmt.Sprintf("%d CPUs, %d zones", len(topo.Detail), len(nrt.Zones))
	})

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-numa"}}
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns.Name, metav1.DeleteOptions{})
	})
	labels := map[string]string{"app": "lsr", extension.LabelPodQoS: string(extension.QoSLSR)}
	resources := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "lsr", Namespace: ns.Name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "lsr"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SchedulerName:     "koord-scheduler",
					PriorityClassName: string(extension.PriorityProd),
					NodeSelector:      map[string]string{corev1.LabelHostname: node},
					Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27",
						Resources: corev1.ResourceRequirements{Requests: resources, Limits: resources}}},
				},
			},
		},
	}
	if _, err := env.kube.AppsV1().Deployments(ns.Name).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var sets []cpuset.CPUSet
	eventually(ctx, t, workloadTimeout, "3 replicas bound with a cpuset each", func(ctx context.Context) (bool, string) {
		pods, err := env.kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: "app=lsr"})
		if err != nil {
			return false, err.Error()
		}
		sets = sets[:0]
		for _, p := range pods.Items {
			status, err := extension.GetResourceStatus(p.Annotations)
			if p.Spec.NodeName == "" || err != nil || status == nil || status.CPUSet == "" {
				return false, fmt.Sprintf("pod %s: node %q, resource-status %v (%v)", p.Name, p.Spec.NodeName, status, err)
			}
			s, err := cpuset.Parse(status.CPUSet)
			if err != nil {
				return false, err.Error()
			}
			sets = append(sets, s)
		}
		return len(sets) == 3, fmt.Sprintf("%d pods with a cpuset", len(sets))
	})
	for i := range sets {
		if sets[i].Size() != 4 {
			t.Errorf("replica %d got CPUs %s, want 4", i, sets[i])
		}
		for j := range i {
			if !sets[i].Intersection(sets[j]).IsEmpty() {
				t.Errorf("replicas %d and %d share CPUs: %s and %s", j, i, sets[j], sets[i])
			}
		}
	}
}
