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

package reporter

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// BenchmarkBuild builds a report from a full metric cache: 30 minutes of node and system samples and 5 minutes
// of samples for each pod and its 3 containers, at 1 s.
func BenchmarkBuild(b *testing.B) {
	for _, pods := range []int{50} {
		b.Run(fmt.Sprintf("pods=%d/containers=%d", pods, 3*pods), func(b *testing.B) {
			cache := metriccache.New(metriccache.Options{})
			end := now
			series := func(kind metriccache.Kind, id string, samples int) {
				for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, metriccache.ResourceMemoryWithPageCache} {
					for i := range samples {
						cache.Append(metriccache.SeriesKey{Kind: kind, ID: id, Resource: res}, end.Add(-time.Duration(samples-1-i)*time.Second), float64(i%17))
					}
				}
			}
			series(metriccache.KindNode, "", metriccache.DefaultNodeSamples)
			series(metriccache.KindSystem, "", metriccache.DefaultNodeSamples)
			podList := make([]*corev1.Pod, pods)
			for i := range podList {
				uid := fmt.Sprint("uid-", i)
				podList[i] = pod("default", fmt.Sprint("pod-", i), uid, nil)
				series(metriccache.KindPod, uid, metriccache.DefaultPodSamples)
				for c := range 3 {
					series(metriccache.KindContainer, fmt.Sprintf("containerd://%s-%d", uid, c), metriccache.DefaultContainerSamples)
				}
			}
			r := New(nil, nodeName, cache, nil)
			if s := r.Build(slov1alpha1.NodeMetricSpec{}, podList, end); len(s.PodsMetric) != pods || len(s.NodeMetric.AggregatedNodeUsages) != 3 {
				b.Fatalf("report has %d pods and %d aggregates, want %d and 3", len(s.PodsMetric), len(s.NodeMetric.AggregatedNodeUsages), pods)
			}
			b.ReportAllocs()
			for b.Loop() {
				r.Build(slov1alpha1.NodeMetricSpec{}, podList, end)
			}
		})
	}
}
