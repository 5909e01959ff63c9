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

package coscheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

func preemptionPod(edit func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p", Labels: map[string]string{}},
		Spec: corev1.PodSpec{
			Priority: ptr.To[int32](5000),
			Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			}}},
		},
	}
	if edit != nil {
		edit(p)
	}
	return p
}

// TestAlike: members are alike when requests, priority and placement constraints are equal.
func TestAlike(t *testing.T) {
	tests := map[string]struct {
		edit func(*corev1.Pod)
		want bool
	}{
		"same":       {want: true},
		"other name": {edit: func(p *corev1.Pod) { p.Name, p.UID = "q", "q" }, want: true},
		"equal quantity": {edit: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("4000m")
		}, want: true},
		"more cpu": {edit: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("5")
		}},
		"other priority": {edit: func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](9000) }},
		"node selector":  {edit: func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }},
		"toleration": {edit: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
		}},
		"affinity": {edit: func(p *corev1.Pod) { p.Spec.Affinity = &corev1.Affinity{} }},
		"spread": {edit: func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1}}
		}},
		"init container": {edit: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}}}}
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := alike(preemptionPod(nil), preemptionPod(tc.edit)); got != tc.want {
				t.Errorf("alike = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEligibleVictim: lower priority, not of the gang group, not terminating, not protected by label.
func TestEligibleVictim(t *testing.T) {
	group := cache.Group{Members: map[types.UID]bool{"member": true}}
	tests := map[string]struct {
		edit func(*corev1.Pod)
		want bool
	}{
		"lower priority":      {want: true},
		"equal priority":      {edit: func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](9000) }},
		"higher":              {edit: func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](9500) }},
		"gang member":         {edit: func(p *corev1.Pod) { p.UID = "member" }},
		"terminating":         {edit: func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }},
		"disable-preemptible": {edit: func(p *corev1.Pod) { p.Labels[extension.LabelDisablePreemptible] = "true" }},
		"disable-preemptible false": {
			edit: func(p *corev1.Pod) { p.Labels[extension.LabelDisablePreemptible] = "false" }, want: true,
		},
		"quota non-preemptible": {edit: func(p *corev1.Pod) { p.Labels[extension.LabelPreemptible] = "false" }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := eligibleVictim(preemptionPod(tc.edit), 9000, group); got != tc.want {
				t.Errorf("eligibleVictim = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPreemptionPolicy: Koordinator's label wins over the spec; PreemptLowerPriority by default.
func TestPreemptionPolicy(t *testing.T) {
	never := corev1.PreemptNever
	tests := map[string]struct {
		edit func(*corev1.Pod)
		want corev1.PreemptionPolicy
	}{
		"default": {want: corev1.PreemptLowerPriority},
		"spec":    {edit: func(p *corev1.Pod) { p.Spec.PreemptionPolicy = &never }, want: corev1.PreemptNever},
		"label":   {edit: func(p *corev1.Pod) { p.Labels[extension.LabelPodPreemptionPolicy] = "Never" }, want: corev1.PreemptNever},
		"label over spec": {edit: func(p *corev1.Pod) {
			p.Spec.PreemptionPolicy = &never
			p.Labels[extension.LabelPodPreemptionPolicy] = string(corev1.PreemptLowerPriority)
		}, want: corev1.PreemptLowerPriority},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := preemptionPolicy(preemptionPod(tc.edit)); got != tc.want {
				t.Errorf("preemptionPolicy = %q, want %q", got, tc.want)
			}
		})
	}
}
