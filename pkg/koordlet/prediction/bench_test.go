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

package prediction

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// benchNode is a node of pods with a minute of usage samples, one a second (koordlet's default collection), in
// the metric cache.
func benchNode(b *testing.B, pods int) (*Server, []*corev1.Pod, time.Time) {
	b.Helper()
	cache := metriccache.New(metriccache.Options{})
	end := start.Add(time.Hour)
	var list []*corev1.Pod
	for i := range pods {
		pc := extension.PriorityProd
		if i%3 == 2 {
			pc = extension.PriorityBatch
		}
		p := testPod(fmt.Sprintf("pod-%03d", i), pc, "1", "2Gi", start.Add(-48*time.Hour))
		list = append(list, p)
		for s := range 60 {
			at := end.Add(-time.Duration(s) * time.Second)
			cache.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(p.UID), Resource: corev1.ResourceCPU}, at, 0.2+float64(s%7)/10)
			cache.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(p.UID), Resource: corev1.ResourceMemory}, at, float64(gi)+float64(s)*1e6)
		}
	}
	for s := range 60 {
		at := end.Add(-time.Duration(s) * time.Second)
		cache.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU}, at, 60)
		cache.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceMemory}, at, float64(200*gi))
	}
	in := &fakeInputs{node: testNode(), pods: list}
	return NewServer(DefaultConfig(), cache, in), list, end
}

// BenchmarkTrain measures a training round (the P90 of a minute of samples of every pod and the node, and a
// sample into each model) and a prediction for the report.
func BenchmarkTrain(b *testing.B) {
	for _, pods := range []int{150} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			s, _, end := benchNode(b, pods)
			ctx := context.Background()
			s.train(ctx, s.in.Pods(), end) // the models exist: the round measured adds to them
			b.ReportAllocs()
			for b.Loop() {
				s.train(ctx, s.in.Pods(), end)
			}
		})
	}
}

// BenchmarkPredict measures the prediction of one report.
func BenchmarkPredict(b *testing.B) {
	s, pods, end := benchNode(b, 150)
	s.train(context.Background(), pods, end)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Predict(pods, end); err != nil {
			b.Fatal(err)
		}
	}
}
