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

package elasticquota

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// BenchmarkCycle runs the plugin's part of one scheduling cycle (PreFilter, Filter on one node, Reserve,
// Unreserve) for a pod of one of 20 quotas (4 parents of 4 leaves) with 1000 pods. requestChanged=true
// makes a pending pod come and go before each cycle, so that every PreFilter recomputes the runtime quotas.
func BenchmarkCycle(b *testing.B) {
	for _, changed := range []bool{false, true} {
		b.Run(fmt.Sprintf("quotas=20/pods=1000/requestChanged=%v", changed), func(b *testing.B) {
			var quotas []*schedv1alpha1.ElasticQuota
			for p := range 4 {
				parent := fmt.Sprintf("p%d", p)
				pq := quota(parent, "", rl("cpu", "100", "memory", "100Gi"), rl("cpu", "1000", "memory", "1000Gi"))
				pq.Labels["quota.scheduling.koordinator.sh/is-parent"] = "true"
				quotas = append(quotas, pq)
				for l := range 4 {
					quotas = append(quotas, quota(fmt.Sprintf("%s-l%d", parent, l), parent, rl("cpu", "20", "memory", "20Gi"), rl("cpu", "500", "memory", "500Gi")))
				}
			}
			var pods []*corev1.Pod
			for i := range 1000 {
				nodeName := ""
				if i%2 == 0 {
					nodeName = "n1"
				}
				pods = append(pods, pod(fmt.Sprintf("pod-%d", i), fmt.Sprintf("p%d-l%d", i%4, (i/4)%4), 0, nodeName, rl("cpu", "1", "memory", "1Gi")))
			}
			incoming := pod("incoming", "p0-l0", 0, "", rl("cpu", "1", "memory", "1Gi"))
			other := pod("other", "p1-l1", 0, "", rl("cpu", "1", "memory", "1Gi"))
			f := newFixture(b, argsWith(b, nil), quotas, []*corev1.Node{node("n1", rl("cpu", "2000", "memory", "2000Gi", "pods", "2000"))}, append(pods, incoming))
			b.ReportAllocs()
			for b.Loop() {
				if changed {
					f.plugin.manager.UpdatePod(other)
					f.plugin.manager.DeletePod(other.UID)
				}
				cycle := framework.NewCycleState()
				if _, s := f.plugin.PreFilter(f.ctx, cycle, incoming, nil); !s.IsSuccess() {
					b.Fatalf("PreFilter = %v", s)
				}
				if s := f.plugin.Filter(f.ctx, cycle, incoming, nil); !s.IsSuccess() {
					b.Fatalf("Filter = %v", s)
				}
				f.plugin.Reserve(f.ctx, cycle, incoming, "n1")
				f.plugin.Unreserve(f.ctx, cycle, incoming, "n1")
			}
		})
	}
}
