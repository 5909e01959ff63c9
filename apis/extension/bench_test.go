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

package extension

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// These helpers run once per pod per scheduling cycle or agent pass; the benchmarks keep them cheap.

func BenchmarkGetPodQoSClassWithDefault(b *testing.B) {
	pods := map[string]*corev1.Pod{
		"source=label": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelPodQoS: string(QoSBE)}}},
		"source=kube-qos": {Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}}}},
	}
	for name, pod := range pods {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = GetPodQoSClassWithDefault(pod)
			}
		})
	}
}

func BenchmarkGetPodPriorityClassWithDefault(b *testing.B) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Priority: new(int32(5500))}}
	b.ReportAllocs()
	for b.Loop() {
		_ = GetPodPriorityClassWithDefault(pod)
	}
}

func BenchmarkParseCPUSet(b *testing.B) {
	for name, cpus := range map[string]string{"form=range": "0-63", "form=list": "0-3,8-11,16,18,20-27,40-47,60"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseCPUSet(cpus); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGetResourceStatus(b *testing.B) {
	annotations := map[string]string{
		AnnotationResourceStatus: `{"cpuset":"0-3,32-35","numaNodeResources":[{"node":0,"resources":{"cpu":"4","memory":"8Gi"}}]}`,
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := GetResourceStatus(annotations); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetCustomUsageThresholds(b *testing.B) {
	annotations := map[string]string{
		AnnotationNodeUsageThresholds: `{"usageThresholds":{"cpu":65,"memory":95},"aggregatedUsage":{"usageThresholds":{"cpu":70},"usageAggregationType":"p95","usageAggregatedDuration":"5m"}}`,
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := GetCustomUsageThresholds(annotations); err != nil {
			b.Fatal(err)
		}
	}
}
