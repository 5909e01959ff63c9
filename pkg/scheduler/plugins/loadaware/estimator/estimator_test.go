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

package estimator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// list builds a resource list from "name=quantity" pairs.
func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func podWith(requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "c",
			Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
		}}},
	}
}

func batchPod(requests, limits corev1.ResourceList) *corev1.Pod {
	p := podWith(requests, limits)
	p.Spec.Priority = ptr.To(extension.PriorityBatchValueDefault)
	p.Labels = map[string]string{extension.LabelPodQoS: string(extension.QoSBE)}
	return p
}

func TestEstimate(t *testing.T) {
	defaultFactors := map[corev1.ResourceName]int64{corev1.ResourceCPU: 85, corev1.ResourceMemory: 70}
	resources := quantity.Names{corev1.ResourceCPU, corev1.ResourceMemory}
	tests := map[string]struct {
		pod     *corev1.Pod
		factors map[corev1.ResourceName]int64
		custom  map[corev1.ResourceName]int64
		want    quantity.Vector
	}{
		"request only": {
			pod:  podWith(list("cpu", "1", "memory", "1Gi"), nil),
			want: quantity.Vector{850, 751619277}, // 0.7 Gi rounded
		},
		"limit above request wins": {
			pod:  podWith(list("cpu", "1", "memory", "1Gi"), list("cpu", "2", "memory", "2Gi")),
			want: quantity.Vector{1700, 1503238554},
		},
		"rounded to the nearest unit": {
			pod:  podWith(list("cpu", "5m", "memory", "3"), nil),
			want: quantity.Vector{4, 2},
		},
		"nothing requested: 250m and 200Mi": {
			pod:  podWith(nil, nil),
			want: quantity.Vector{DefaultMilliCPURequest, DefaultMemoryRequest},
		},
		"factor above 100 capped at the limit": {
			pod:     podWith(list("cpu", "1"), list("cpu", "1")),
			factors: map[corev1.ResourceName]int64{corev1.ResourceCPU: 150},
			want:    quantity.Vector{1000, 0},
		},
		"factor above 100 without a limit is not capped": {
			pod:     podWith(list("cpu", "1"), nil),
			factors: map[corev1.ResourceName]int64{corev1.ResourceCPU: 150},
			want:    quantity.Vector{1500, 0},
		},
		"resource without a factor is 0": {
			pod:     podWith(list("cpu", "1", "memory", "1Gi"), nil),
			factors: map[corev1.ResourceName]int64{corev1.ResourceCPU: 100},
			want:    quantity.Vector{1000, 0},
		},
		"custom factors override per resource": {
			pod:    podWith(list("cpu", "1", "memory", "1000"), nil),
			custom: map[corev1.ResourceName]int64{corev1.ResourceMemory: 10},
			want:   quantity.Vector{850, 100},
		},
		"batch pod from batch resources (batch-cpu in milli-cores)": {
			pod:  batchPod(list(string(extension.BatchCPU), "2000", string(extension.BatchMemory), "1Gi"), nil),
			want: quantity.Vector{1700, 751619277},
		},
		"batch pod without batch resources: defaults": {
			pod:  batchPod(nil, nil),
			want: quantity.Vector{DefaultMilliCPURequest, DefaultMemoryRequest},
		},
		"batch pod requesting cpu and memory instead": {
			pod:  batchPod(list("cpu", "1", "memory", "1000"), nil),
			want: quantity.Vector{850, 700},
		},
		"mid pod from mid resources": {
			pod: func() *corev1.Pod {
				p := podWith(list(string(extension.MidCPU), "1000", string(extension.MidMemory), "1000"), nil)
				p.Labels = map[string]string{extension.LabelPodPriorityClass: string(extension.PriorityMid)}
				return p
			}(),
			want: quantity.Vector{850, 700},
		},
		"mid pod without mid resources: nothing, as Koordinator": {
			pod: func() *corev1.Pod {
				p := podWith(list("cpu", "1", "memory", "1Gi"), nil)
				p.Labels = map[string]string{extension.LabelPodPriorityClass: string(extension.PriorityMid)}
				return p
			}(),
			want: quantity.Vector{0, 0},
		},
		"free pod: nothing, as Koordinator": {
			pod: func() *corev1.Pod {
				p := podWith(list("cpu", "1", "memory", "1Gi"), nil)
				p.Labels = map[string]string{extension.LabelPodPriorityClass: string(extension.PriorityFree)}
				return p
			}(),
			want: quantity.Vector{0, 0},
		},
		"init containers and overhead count as the scheduler counts them": {
			pod: func() *corev1.Pod {
				p := podWith(list("cpu", "1"), nil)
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: list("cpu", "3")}}}
				p.Spec.Overhead = list("cpu", "100m")
				return p
			}(),
			want: quantity.Vector{2635, DefaultMemoryRequest},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			factors := tc.factors
			if factors == nil {
				factors = defaultFactors
			}
			got := New(resources, factors).Estimate(tc.pod, tc.custom)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Estimate (-want,+got):\n%s", diff)
			}
		})
	}
}

func BenchmarkEstimate(b *testing.B) {
	e := New(quantity.Names{corev1.ResourceCPU, corev1.ResourceMemory}, map[corev1.ResourceName]int64{corev1.ResourceCPU: 85, corev1.ResourceMemory: 70})
	pod := podWith(list("cpu", "1", "memory", "1Gi"), list("cpu", "2", "memory", "2Gi"))
	b.ReportAllocs()
	for b.Loop() {
		e.Estimate(pod, nil)
	}
}
