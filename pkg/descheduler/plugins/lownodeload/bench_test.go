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

package lownodeload

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/koord-dev/koord/apis/extension"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// BenchmarkBalance: one LowNodeLoad round over 1000 nodes of 32 cores with 20 pods each (20k pods), every
// tenth node hot. The evictor accepts every pod, so the round also orders and moves pods.
func BenchmarkBalance(b *testing.B) {
	const nodesN, podsPerNode = 1000, 20
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	var metrics []runtime.Object
	for i := range nodesN {
		name := fmt.Sprintf("n%04d", i)
		nodes = append(nodes, cpuNode(name, 32))
		podCPU := "500m" // 10 cores of pods + 4 system: 44%
		if i%10 == 0 {
			podCPU = "1200m" // 24 + 4: 88%
		}
		m := utiltesting.MakeNodeMetric(name).Updated(utiltesting.Now).SystemUsage(res("cpu", "4", "memory", "4Gi"))
		for j := range podsPerNode {
			pn := fmt.Sprintf("%s-p%02d", name, j)
			pods = append(pods, utiltesting.MakePod(pn).Node(name).Phase(corev1.PodRunning).Req(res("cpu", "100m", "memory", "128Mi")).Obj())
			m = m.Pod("default", pn, extension.PriorityNone, res("cpu", podCPU, "memory", "1Gi"))
		}
		metrics = append(metrics, m.Obj())
	}
	h := newFakeHandle(b, pods, metrics...)
	h.recorder = &events.FakeRecorder{} // drops events
	pl, err := New(defaultedArgs(nil), h, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		pl.Balance(ctx, nodes)
	}
	b.ReportMetric(float64(len(h.evictor.evicted))/float64(b.N), "pods/round")
}
