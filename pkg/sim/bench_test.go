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

package sim

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	koordfake "github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/reporter"
)

// benchPods returns the pods of one benchmark node: 5 LS web pods with a diurnal CPU profile, 2 LS pods at
// their default share, and 3 BE pods with bursty CPU; a mix of the profile types at a realistic load.
func benchPods(node string, n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		uid := fmt.Sprintf("%s-pod-%d", node, i)
		var p *corev1.Pod
		switch {
		case i%10 < 5:
			p = boundPod(node, uid, extension.QoSLS,
				`{"cpu":{"type":"diurnal","base":"1","amplitude":"800m","peak":"14h"},"memory":{"type":"constant","value":"2Gi"}}`,
				container(res{"cpu": "2", "memory": "4Gi"}, res{"cpu": "4", "memory": "4Gi"}))
		case i%10 < 7:
			p = boundPod(node, uid, extension.QoSLS, "", container(res{"cpu": "1", "memory": "2Gi"}, nil))
		default:
			p = boundPod(node, uid, extension.QoSBE,
				`{"cpu":{"type":"bursty","base":"500m","burst":"3","probability":0.2,"duration":"5m"}}`,
				container(res{extension.BatchCPU: "2000", extension.BatchMemory: "4Gi"}, res{extension.BatchCPU: "4000", extension.BatchMemory: "8Gi"}))
		}
		pods = append(pods, p)
	}
	return pods
}

// benchCluster returns a cluster of nodes KWOK nodes of 32 CPUs and 128Gi with pods pods each, their
// NodeMetrics (reporting every reportInterval) and NodeSLOs (suppression and eviction on), with its informers
// synced, and its nodes by name.
func benchCluster(b *testing.B, nodes, pods int, reportInterval time.Duration) (*Cluster, *clocktesting.FakeClock, []*simNode) {
	b.Helper()
	var kubeObjs, koordObjs []apiruntime.Object
	for i := range nodes {
		name := fmt.Sprintf("node-%04d", i)
		kubeObjs = append(kubeObjs, kwokNode(name, "32", "128Gi", false))
		for _, p := range benchPods(name, pods) {
			kubeObjs = append(kubeObjs, p)
		}
		nm := nodeMetric(name)
		nm.Spec.CollectPolicy = &slov1alpha1.NodeMetricCollectPolicy{ReportIntervalSeconds: ptr.To(int64(reportInterval / time.Second))}
		koordObjs = append(koordObjs, nm, thresholdSLO(name))
	}
	base := clocktesting.NewFakeClock(realStart)
	clk, err := NewClock(base, day.Add(14*time.Hour), 1)
	if err != nil {
		b.Fatal(err)
	}
	koord := koordfake.NewSimpleClientset(koordObjs...)
	// The fake watch panics when more than 100 events are pending, which a round's 1000 status writes can reach
	// before the informer reads them; the benchmark needs only the initial list of NodeMetrics.
	koord.PrependWatchReactor("nodemetrics", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, watch.NewFake(), nil
	})
	c, err := NewCluster(fake.NewClientset(kubeObjs...), koord, clk, Options{
		Features: features.Koordlet{BECPUSuppress: true, BEMemoryEvict: true},
		History:  time.Hour,
		Recorder: &record.FakeRecorder{},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.LoggerWithValues(klog.Background().V(10))))
	var wg sync.WaitGroup
	b.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	if err := c.start(ctx, &wg); err != nil {
		b.Fatal(err)
	}
	c.mu.Lock()
	list := make([]*simNode, 0, len(c.nodes))
	for _, n := range c.nodes {
		list = append(list, n)
	}
	c.mu.Unlock()
	slices.SortFunc(list, func(a, b *simNode) int { return cmp.Compare(a.name, b.name) })
	if len(list) != nodes {
		b.Fatalf("simulating %d nodes, want %d", len(list), nodes)
	}
	return c, base, list
}

// BenchmarkRound measures one round of every node, a minute of simulated time after the last: each node's
// round brings its model up to date, counts the 60 moments since the last round, runs the eviction rule and,
// with report=true, writes its NodeMetric status (to a fake clientset). After the loop it reports the heap the
// simulated nodes hold, per node, measured by dropping them (informer caches not included).
func BenchmarkRound(b *testing.B) {
	for _, size := range []struct{ nodes, pods int }{{1000, 10}} {
		for _, report := range []bool{true, false} {
			b.Run(fmt.Sprintf("nodes=%d/pods=%d/report=%t", size.nodes, size.pods, report), func(b *testing.B) {
				interval := time.Minute
				if !report {
					interval = 1000 * time.Hour
				}
				c, base, nodes := benchCluster(b, size.nodes, size.pods, interval)
				ctx := klog.NewContext(context.Background(), klog.Background().V(10))
				round := func() {
					base.Step(time.Minute)
					for _, n := range nodes {
						n.round(ctx)
					}
				}
				round() // first rounds: pod states and the first reports
				for _, n := range nodes {
					if n.stats.Reports != 1 {
						b.Fatalf("node %s made %d reports in its first round, want 1", n.name, n.stats.Reports)
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					round()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size.nodes), "ns/node")
				if want := int64(1 + b.N); report && nodes[0].stats.Reports != want {
					b.Fatalf("node %s made %d reports, want %d", nodes[0].name, nodes[0].stats.Reports, want)
				}

				runtime.GC()
				var with, without runtime.MemStats
				runtime.ReadMemStats(&with)
				logger := klog.Background().V(10)
				for _, n := range nodes {
					c.removeNode(logger, n.name)
				}
				nodes = nil
				runtime.GC()
				runtime.ReadMemStats(&without)
				b.ReportMetric(float64(int64(with.HeapAlloc)-int64(without.HeapAlloc))/float64(size.nodes), "heapB/node")
			})
		}
	}
}

// BenchmarkBuild measures building one node's NodeMetric status from its Source, without the API write: the
// node, system and pod averages over 300 s and the 5m, 10m and 30m aggregates, sampled every second (at most
// 300 samples each).
func BenchmarkBuild(b *testing.B) {
	for _, pods := range []int{10, 50} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			podList := benchPods("n", pods)
			now := day.Add(14 * time.Hour)
			model := &NodeModel{CPUCapacity: 32, MemoryCapacity: 128 * gi, SystemCPU: 1.6, SystemMemory: gi, Since: now.Add(-time.Hour),
				LSThresholdPercent: 65, Suppression: &Suppression{Policy: slov1alpha1.CPUSetPolicy, ThresholdPercent: 65}}
			for _, p := range podList {
				m, err := NewPodModel(p)
				if err != nil {
					b.Fatal(err)
				}
				m.Since = model.Since
				model.Pods = append(model.Pods, m)
			}
			src := NewSource(clocktesting.NewFakeClock(now), time.Second, DefaultMaxPoints)
			src.SetModel(model)
			r := reporter.New(nil, "n", src, nil)
			if s := r.Build(slov1alpha1.NodeMetricSpec{}, podList, now); len(s.PodsMetric) != pods || len(s.NodeMetric.AggregatedNodeUsages) != 3 {
				b.Fatalf("report has %d pods and %d aggregates, want %d and 3", len(s.PodsMetric), len(s.NodeMetric.AggregatedNodeUsages), pods)
			}
			src.ReleaseFrames()
			b.ReportAllocs()
			for b.Loop() {
				r.Build(slov1alpha1.NodeMetricSpec{}, podList, now)
				src.ReleaseFrames()
			}
		})
	}
}
