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
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// gi is a GiB in bytes.
const gi = int64(1) << 30

// start is when the recorded series begin; the pods are created two days before unless a test says otherwise.
var start = time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)

// fakeInputs is the node and its pods; safe for concurrent use.
type fakeInputs struct {
	mu   sync.Mutex
	node *corev1.Node
	pods []*corev1.Pod
}

func (f *fakeInputs) Node() *corev1.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.node
}

func (f *fakeInputs) Pods() []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods
}

// testNode has 32 cores and 128 GiB allocatable.
func testNode() *corev1.Node {
	return utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "32", "memory", "128Gi")).Obj()
}

// testPod is a running pod of class pc with the requests, created at created.
func testPod(name string, pc extension.PriorityClass, cpu, memory string, created time.Time) *corev1.Pod {
	return utiltesting.MakePod(name).Label(extension.LabelPodPriorityClass, string(pc)).
		Req(utiltesting.Resources("cpu", cpu, "memory", memory)).Created(created).Phase(corev1.PodRunning).Obj()
}

// recorded is a pod's usage, one value per minute (cores and bytes).
type recorded struct {
	cpu, memory []float64
}

// steady is n minutes of the same usage.
func steady(n int, cpu float64, memory int64) recorded {
	return recorded{cpu: fill(n, cpu), memory: fill(n, float64(memory))}
}

func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// then appends b's minutes to a's.
func (a recorded) then(b recorded) recorded {
	return recorded{cpu: append(append([]float64(nil), a.cpu...), b.cpu...), memory: append(append([]float64(nil), a.memory...), b.memory...)}
}

// player records usage series into a metric cache, one sample a minute, as koordlet's collector would (the P90
// of a minute with one sample is that sample), and trains the server after each minute.
type player struct {
	cache *metriccache.Cache
	s     *Server
	// sysCPU and sysMemory are the usage outside pods, added to the node's.
	sysCPU    float64
	sysMemory float64
}

func newPlayer(s *Server, cache *metriccache.Cache) *player {
	return &player{cache: cache, s: s, sysCPU: 0.5, sysMemory: float64(gi)}
}

// play records minutes [from, from+len) of the series, by pod UID, and trains after each.
func (p *player) play(t *testing.T, from time.Time, series map[string]recorded) time.Time {
	t.Helper()
	n := -1
	for uid, r := range series {
		if n >= 0 && len(r.cpu) != n || len(r.memory) != len(r.cpu) {
			t.Fatalf("series of %s has %d/%d minutes, others %d", uid, len(r.cpu), len(r.memory), n)
		}
		n = len(r.cpu)
	}
	ctx := testContext(t)
	now := from
	for i := range n {
		now = from.Add(time.Duration(i+1) * time.Minute)
		nodeCPU, nodeMemory := p.sysCPU, p.sysMemory
		for uid, r := range series {
			p.cache.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: uid, Resource: corev1.ResourceCPU}, now, r.cpu[i])
			p.cache.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: uid, Resource: corev1.ResourceMemory}, now, r.memory[i])
			nodeCPU += r.cpu[i]
			nodeMemory += r.memory[i]
		}
		p.cache.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU}, now, nodeCPU)
		p.cache.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceMemory}, now, nodeMemory)
		p.s.TrainUntil(ctx, now)
	}
	return now
}

// newTestServer returns a server with the default configuration, no checkpoints, and its cache.
func newTestServer(in Inputs, opts ...Option) (*Server, *metriccache.Cache) {
	cache := metriccache.New(metriccache.Options{})
	return NewServer(DefaultConfig(), cache, in, opts...), cache
}

// The expected peaks below come from the bucket ends of the series' values (start(n + 1) of the value's bucket
// n, start(n) = first × (1.05^n − 1) / 0.05), truncated to milli-cores and bytes, times 1.1 (the 10 % margin),
// truncated again:
//
//	CPU     0 → bucket 0, end 0.025 → 25m            0.5 → bucket 14, end 0.53946 → 539m
//	        1.5 → bucket 28, end 1.55807 → 1558m → ×1.1 1713m
//	        2.0 → bucket 32, end 2.00159 → 2001m → ×1.1 2201m
//	        3.5 → bucket 42, end 3.57483 → 3574m      4.5 → bucket 47, end 4.70063 → 4700m
//	memory  0 → bucket 0, end 5 MiB = 5242880
//	        1 GiB → bucket 49, end 1097586419
//	        2 GiB → bucket 62, end 2162529934 → ×1.1 2378782927
//	        3 GiB → bucket 70, end 3245106456 → ×1.1 3569617101
//	        5 GiB → bucket 81, end 5624717773        7 GiB → bucket 88, end 7573321380
//
// The node's system usage is 0.5 cores and 1 GiB throughout.
func TestCompute(t *testing.T) {
	old := start.Add(-48 * time.Hour)
	// web-0: 50 minutes at 1 core, then 10 at 2 cores (a sixth of the weight, above the 5 % over p95 whatever
	// its age within the hour): p95 2001m, peak 2201m. 2 GiB throughout: peak 2378782927.
	web0 := testPod("web-0", extension.PriorityProd, "4", "8Gi", old)
	web0Usage := steady(50, 1, 2*gi).then(steady(10, 2, 2*gi))
	// web-1: 1.5 cores and 3 GiB throughout: peaks 1713m and 3569617101.
	web1 := testPod("web-1", extension.PriorityProd, "4", "8Gi", old)
	web1Usage := steady(60, 1.5, 3*gi)
	// Pod predictor over web-0 and web-1:
	//   Peak        = 2201 + 1713 = 3914m;  2378782927 + 3569617101 = 5948400028
	//   Reclaimable = (4000 − 2201) + (4000 − 1713) = 4086m;  2 × 8 GiB − 5948400028 = 11231469156
	//                 (below Allocatable − Peak: 28086m, 131490553444)
	podEstimate := Estimate{Reclaimable: Amounts{4086, 11231469156}, Peak: Amounts{3914, 5948400028}}
	// Priority predictor: the prod tier is 2.5 cores for 50 minutes and 3.5 for 10, 5 GiB throughout: p95
	// 3574m, p98 5624717773. The system is 0.5 cores and 1 GiB: 539m and 1097586419. No pod without a class:
	// the idle bucket, 25m and 5242880.
	//   Peak        = (539 + 3574 + 25) × 1.1 = 4138 × 1.1 = 4551m
	//                 (1097586419 + 5624717773 + 5242880) × 1.1 = 6727547072 × 1.1 = 7400301779
	//   Reclaimable = 8000 − 4551 = 3449m;  16 GiB − 7400301779 = 9779567405
	priorityEstimate := Estimate{Reclaimable: Amounts{3449, 9779567405}, Peak: Amounts{4551, 7400301779}}

	tests := map[string]struct {
		pods   []*corev1.Pod
		series map[string]recorded
		// reported are the pods the report passes (those with usage); all of pods when nil.
		reported []*corev1.Pod
		want     Prediction
	}{
		"two prod pods": {
			pods:   []*corev1.Pod{web0, web1},
			series: map[string]recorded{"web-0": web0Usage, "web-1": web1Usage},
			want: Prediction{
				Pod: podEstimate, Priority: priorityEstimate,
				// min(4086, 3449) = 3449m, min(11231469156, 9779567405); max of the peaks.
				Min: Estimate{Reclaimable: Amounts{3449, 9779567405}, Peak: Amounts{4551, 7400301779}},
			},
		},
		// web-2 (2 cores, 4 GiB requested; 1 core and 2 GiB used) was created an hour ago, within the 24h cold
		// start: the pod predictor counts its request in the peak and reclaims nothing from it; the priority
		// predictor counts its request and its usage in the prod tier (3.5 and 4.5 cores: p95 4700m; 7 GiB:
		// 7573321380).
		"a pod in its cold start": {
			pods: []*corev1.Pod{web0, web1, testPod("web-2", extension.PriorityProd, "2", "4Gi", start.Add(-time.Hour))},
			series: map[string]recorded{
				"web-0": web0Usage, "web-1": web1Usage, "web-2": steady(60, 1, 2*gi),
			},
			want: Prediction{
				// Peak = 3914 + 2000 = 5914m;  5948400028 + 4 GiB = 10243367324.
				Pod: Estimate{Reclaimable: podEstimate.Reclaimable, Peak: Amounts{5914, 10243367324}},
				// Peak = (539 + 4700 + 25) × 1.1 = 5264 × 1.1 = 5790m;
				//        (1097586419 + 7573321380 + 5242880) × 1.1 = 8676150679 × 1.1 = 9543765746.
				// Reclaimable = 10000 − 5790 = 4210m;  20 GiB − 9543765746 = 11931070734.
				Priority: Estimate{Reclaimable: Amounts{4210, 11931070734}, Peak: Amounts{5790, 9543765746}},
				Min:      Estimate{Reclaimable: Amounts{4086, 11231469156}, Peak: Amounts{5914, 10243367324}},
			},
		},
		// A koord-batch and a koord-mid pod are neither predictor's business: their usage goes to their own
		// classes' models and to neither the prod tier nor the system.
		"pods of other classes": {
			pods: []*corev1.Pod{web0, web1,
				testPod("etl-0", extension.PriorityBatch, "8", "16Gi", old), testPod("api-0", extension.PriorityMid, "2", "4Gi", old)},
			series: map[string]recorded{
				"web-0": web0Usage, "web-1": web1Usage, "etl-0": steady(60, 6, 12*gi), "api-0": steady(60, 1, gi),
			},
			want: Prediction{
				Pod: podEstimate, Priority: priorityEstimate,
				Min: Estimate{Reclaimable: Amounts{3449, 9779567405}, Peak: Amounts{4551, 7400301779}},
			},
		},
		// A terminating prod pod reclaims nothing and its request does not count (its usage still trained the
		// prod tier: the same peaks as "a pod in its cold start" on the priority side, without web-2's request).
		"a terminating pod": {
			pods: []*corev1.Pod{web0, web1, terminating(testPod("web-2", extension.PriorityProd, "2", "4Gi", old))},
			series: map[string]recorded{
				"web-0": web0Usage, "web-1": web1Usage, "web-2": steady(60, 1, 2*gi),
			},
			want: Prediction{
				Pod: podEstimate,
				// Reclaimable = 8000 − 5790 = 2210m;  16 GiB − 9543765746 = 7636103438.
				Priority: Estimate{Reclaimable: Amounts{2210, 7636103438}, Peak: Amounts{5790, 9543765746}},
				Min:      Estimate{Reclaimable: Amounts{2210, 7636103438}, Peak: Amounts{5790, 9543765746}},
			},
		},
		// A prod pod the report has usage for but no model (it started after the last training round) counts
		// like a pod in its cold start in the pod predictor.
		"a pod without a model": {
			pods:     []*corev1.Pod{web0, web1},
			series:   map[string]recorded{"web-0": web0Usage, "web-1": web1Usage},
			reported: []*corev1.Pod{web0, web1, testPod("web-9", extension.PriorityProd, "1", "1Gi", old)},
			want: Prediction{
				// Peak = 3914 + 1000 = 4914m;  5948400028 + 1 GiB = 7022141852.
				Pod: Estimate{Reclaimable: podEstimate.Reclaimable, Peak: Amounts{4914, 7022141852}},
				// Reclaimable = 9000 − 4551 = 4449m;  17 GiB − 7400301779 = 18253611008 − 7400301779 = 10853309229.
				Priority: Estimate{Reclaimable: Amounts{4449, 10853309229}, Peak: Amounts{4551, 7400301779}},
				Min:      Estimate{Reclaimable: Amounts{4086, 10853309229}, Peak: Amounts{4914, 7400301779}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := &fakeInputs{node: testNode(), pods: tc.pods}
			s, cache := newTestServer(in)
			now := newPlayer(s, cache).play(t, start, tc.series)
			reported := tc.reported
			if reported == nil {
				reported = tc.pods
			}
			got, err := s.Compute(in.Node(), reported, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("prediction (-want,+got):\n%s", diff)
			}
		})
	}
}

func terminating(p *corev1.Pod) *corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: start}
	return p
}

// TestComputeForgetsOldPeaks: a pod that used 3 cores for 12 hours and then 1 core for 72. The 720 samples of
// the first 12 hours weigh Σ 2^(k/720) ≈ 720/ln 2 × (2 − 1) ≈ 1039 (12h CPU half-life, one sample a minute),
// the 4320 of the last 72 hours ≈ 720/ln 2 × (2^7 − 2) ≈ 130,880: the 3-core samples are 0.8 % of the weight,
// below the 5 % above p95, so p95 is the end of the 1-core bucket, 1035m (peak 1138m). Counted without decay
// they would be 14 % of the samples, and p95 would be 3019m.
func TestComputeForgetsOldPeaks(t *testing.T) {
	pod := testPod("web-0", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour))
	in := &fakeInputs{node: testNode(), pods: []*corev1.Pod{pod}}
	s, cache := newTestServer(in)
	now := newPlayer(s, cache).play(t, start, map[string]recorded{
		"web-0": steady(12*60, 3, 2*gi).then(steady(72*60, 1, 2*gi)),
	})
	got, err := s.Compute(in.Node(), in.Pods(), now)
	if err != nil {
		t.Fatal(err)
	}
	// Reclaimable = 4000 − 1138 = 2862m.
	if diff := cmp.Diff(Estimate{Reclaimable: Amounts{2862, 8*gi - 2378782927}, Peak: Amounts{1138, 2378782927}}, got.Pod); diff != "" {
		t.Errorf("pod predictor (-want,+got):\n%s", diff)
	}
}

func TestComputeWithoutModels(t *testing.T) {
	in := &fakeInputs{node: testNode(), pods: []*corev1.Pod{testPod("web-0", extension.PriorityProd, "4", "8Gi", start)}}
	s, _ := newTestServer(in)
	_, err := s.Compute(in.Node(), in.Pods(), start)
	if !errors.Is(err, ErrNoPrediction) {
		t.Errorf("Compute before any training = %v, want ErrNoPrediction", err)
	}
	if _, err := s.Compute(nil, in.Pods(), start); !errors.Is(err, ErrNoPrediction) {
		t.Errorf("Compute without the node = %v, want ErrNoPrediction", err)
	}
}

func TestComputeRawAllocatable(t *testing.T) {
	// The raw allocatable (2 cores) caps the pod predictor: Allocatable − Peak = 2000 − (2201 + 1713) < 0 → 0.
	pods := []*corev1.Pod{
		testPod("web-0", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour)),
		testPod("web-1", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour)),
	}
	node := testNode()
	node.Annotations = map[string]string{extension.AnnotationNodeRawAllocatable: `{"cpu": "2", "memory": "128Gi"}`}
	in := &fakeInputs{node: node, pods: pods}
	s, cache := newTestServer(in)
	now := newPlayer(s, cache).play(t, start, map[string]recorded{
		"web-0": steady(50, 1, 2*gi).then(steady(10, 2, 2*gi)), "web-1": steady(60, 1.5, 3*gi),
	})
	got, err := s.Compute(node, pods, now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(int64(0), got.Min.Reclaimable.CPU); diff != "" {
		t.Errorf("reclaimable CPU (-want,+got):\n%s", diff)
	}
}

func TestTrainUntil(t *testing.T) {
	tests := map[string]struct {
		// calls are the times TrainUntil is called at, in seconds after start.
		calls []int
		// wantRounds is how many rounds trained (the node has usage in every minute).
		wantRounds int
	}{
		"once a minute":                  {calls: []int{60, 120, 180}, wantRounds: 3},
		"often: each minute trains once": {calls: []int{60, 70, 80, 119, 120, 121}, wantRounds: 2},
		"late: missed minutes catch up":  {calls: []int{60, 300}, wantRounds: 5},
		"far behind: at most 60 rounds":  {calls: []int{60, 60 + 3600*3}, wantRounds: 61},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			in := &fakeInputs{node: testNode()}
			s, cache := newTestServer(in)
			last := tc.calls[len(tc.calls)-1]
			// A node sample every minute (the cache keeps 1800 node samples: a sample a second would not reach
			// back three hours).
			for sec := 60; sec <= last; sec += 60 {
				at := start.Add(time.Duration(sec) * time.Second)
				cache.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU}, at, 1)
				cache.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceMemory}, at, float64(gi))
			}
			for _, sec := range tc.calls {
				s.TrainUntil(ctx, start.Add(time.Duration(sec)*time.Second))
			}
			if got := testutil.ToFloat64(s.metrics.trainings); got != float64(tc.wantRounds) {
				t.Errorf("rounds trained = %v, want %d", got, tc.wantRounds)
			}
		})
	}
}

func TestTrainingWithoutNodeUsageTrainsNothing(t *testing.T) {
	pods := []*corev1.Pod{testPod("web-0", extension.PriorityProd, "4", "8Gi", start)}
	in := &fakeInputs{node: testNode(), pods: pods}
	s, cache := newTestServer(in)
	at := start.Add(time.Minute)
	cache.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: "web-0", Resource: corev1.ResourceCPU}, at, 1)
	cache.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: "web-0", Resource: corev1.ResourceMemory}, at, float64(gi))
	s.TrainUntil(testContext(t), at)
	if got := s.Models(); got != 0 {
		t.Errorf("models after a round without node usage = %d, want 0", got)
	}
}

func TestGCBoundsModelsAsPodsChurn(t *testing.T) {
	ctx := testContext(t)
	in := &fakeInputs{node: testNode()}
	s, cache := newTestServer(in)
	// A pod a minute, each running for two minutes, over six hours: 360 pods seen.
	for minute := 1; minute <= 360; minute++ {
		now := start.Add(time.Duration(minute) * time.Minute)
		var pods []*corev1.Pod
		for _, id := range []int{minute - 1, minute} {
			uid := "pod-" + strconv.Itoa(id)
			pods = append(pods, testPod(uid, extension.PriorityProd, "1", "1Gi", start))
			cache.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: uid, Resource: corev1.ResourceCPU}, now, 0.5)
			cache.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: uid, Resource: corev1.ResourceMemory}, now, float64(gi))
		}
		cache.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU}, now, 2)
		cache.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceMemory}, now, float64(3*gi))
		in.mu.Lock()
		in.pods = pods
		in.mu.Unlock()
		s.TrainUntil(ctx, now)
		s.GC(ctx, now)
	}
	// The pods of the last 30 minutes (a model expires 30 minutes after its last sample), plus the current
	// one: 32 at most; plus the node's 7 (the node, 5 priority classes, the system).
	if got := s.Models(); got > 32+7 {
		t.Errorf("models after 360 pods came and went = %d, want at most %d", got, 32+7)
	}
	if got := s.Models(); got < 7 {
		t.Errorf("models = %d: the node's models were dropped", got)
	}
}

// logsOf returns a context whose logger keeps what is logged, and the buffer.
func logsOf(t *testing.T) (ktesting.Underlier, klog.Logger) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	return logger.GetSink().(ktesting.Underlier), logger
}

// testContext returns the test's context with a logger writing to the test's log.
func testContext(t *testing.T) context.Context {
	_, ctx := ktesting.NewTestContext(t)
	return ctx
}

// TestRestart: a koordlet trains for a day and checkpoints; the next one restores the checkpoints and reports
// the same prediction at once, and then trains on from there as the first would have. A koordlet without the
// checkpoints has no prediction until it has trained, and then one from a single minute.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	pods := []*corev1.Pod{
		testPod("web-0", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour)),
		testPod("web-1", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour)),
	}
	series := map[string]recorded{
		// A day: web-0 peaks at 3.5 cores for two hours, web-1 is steady.
		"web-0": steady(10*60, 1, 2*gi).then(steady(2*60, 3.5, 4*gi)).then(steady(12*60, 1, 2*gi)),
		"web-1": steady(24*60, 1.5, 3*gi),
	}
	in := &fakeInputs{node: testNode(), pods: pods}
	clk := clocktesting.NewFakeClock(start)
	first, cache := newTestServer(in, WithStore(NewStore(dir)), WithClock(clk))
	ctx := testContext(t)
	first.Restore(ctx)
	p := newPlayer(first, cache)
	now := p.play(t, start, series)
	clk.SetTime(now)
	first.Checkpoint(ctx, now, true)
	before, err := first.Compute(in.Node(), pods, now)
	if err != nil {
		t.Fatal(err)
	}
	// The day's peak is in the prediction: web-0's p95 is the 3.5-core bucket (2 of 24 hours), not 1 core.
	if before.Pod.Peak.CPU < 3500 {
		t.Fatalf("before the restart the pod peak is %dm; the series' peak of 3.5 cores is missing", before.Pod.Peak.CPU)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// web-0, web-1, the node, 5 priority classes and the system.
	if len(files) != 9 {
		t.Errorf("checkpoint files = %d, want 9", len(files))
	}

	// A restart ten minutes later: the new server has the same prediction before it trains at all.
	restarted := now.Add(10 * time.Minute)
	second := NewServer(DefaultConfig(), metriccache.New(metriccache.Options{}), in, WithStore(NewStore(dir)),
		WithClock(clocktesting.NewFakeClock(restarted)))
	second.Restore(ctx)
	after, err := second.Compute(in.Node(), pods, restarted)
	if err != nil {
		t.Fatalf("no prediction right after the restart: %v", err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("prediction after the restart (-before,+after):\n%s", diff)
	}
	// It trains on from the restored models: the same next minute gives both the same models.
	next := map[string]recorded{"web-0": steady(1, 1, 2*gi), "web-1": steady(1, 1.5, 3*gi)}
	newPlayer(first, cache).play(t, restarted, next)
	second2 := newPlayer(second, second.src.(*metriccache.Cache))
	second2.play(t, restarted, next)
	a, _ := first.Compute(in.Node(), pods, restarted.Add(time.Minute))
	b, _ := second.Compute(in.Node(), pods, restarted.Add(time.Minute))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("after a minute more (-never restarted,+restarted):\n%s", diff)
	}

	// Without the checkpoints: nothing until a round trains, then a prediction from one minute, which has lost
	// the day's peak.
	fresh := NewServer(DefaultConfig(), metriccache.New(metriccache.Options{}), in, WithStore(NewStore(t.TempDir())))
	fresh.Restore(ctx)
	if _, err := fresh.Compute(in.Node(), pods, restarted); !errors.Is(err, ErrNoPrediction) {
		t.Errorf("a fresh server predicts before training: %v", err)
	}
	newPlayer(fresh, fresh.src.(*metriccache.Cache)).play(t, restarted, next)
	got, err := fresh.Compute(in.Node(), pods, restarted.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got.Pod.Peak.CPU >= 3500 {
		t.Errorf("a fresh server's pod peak is %dm: it cannot know the day's peak", got.Pod.Peak.CPU)
	}
}

func TestRestoreBadCheckpoints(t *testing.T) {
	pods := []*corev1.Pod{testPod("web-0", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour))}
	in := &fakeInputs{node: testNode(), pods: pods}
	dir := t.TempDir()
	// A valid checkpoint set to start from.
	src, cache := newTestServer(in, WithStore(NewStore(dir)))
	ctx := testContext(t)
	now := newPlayer(src, cache).play(t, start, map[string]recorded{"web-0": steady(10, 1, 2*gi)})
	src.Checkpoint(ctx, now, true)

	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(NodeItemUID(SystemItem), "{not json")                                                                // corrupt
	write(NodeItemUID(string(extension.PriorityProd)), `{"CPU": {"bucketWeights": {"999": 1}}, "Memory": {}}`) // out of range
	write("gone-pod", `{"CPU": {}, "Memory": {}}`)                                                             // a pod no longer on the node
	write(".web-0-123"+tmpSuffix, "half written")                                                              // an interrupted write

	u, logger := logsOf(t)
	s := NewServer(DefaultConfig(), metriccache.New(metriccache.Options{}), in, WithStore(NewStore(dir)))
	s.Restore(klog.NewContext(t.Context(), logger))

	logs := u.GetBuffer().String()
	for _, want := range [][]string{
		{"Discarded a corrupt prediction checkpoint; its model starts afresh", `model="__node-sys__"`},
		{"Discarded a corrupt prediction checkpoint; its model starts afresh", `model="__node-koord-prod__"`},
		{"Restored the prediction models", "restored=6", "discarded=3"},
	} {
		if !hasLine(logs, want...) {
			t.Errorf("no log line says %q:\n%s", want, logs)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	wantNames := []string{"__node-__", "__node-koord-batch__", "__node-koord-free__", "__node-koord-mid__", "__node__", "web-0"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("files left (-want,+got):\n%s", diff)
	}
	// The corrupt models start afresh: no prediction until a round trains them again, then one.
	if _, err := s.Compute(in.Node(), pods, now); !errors.Is(err, ErrNoPrediction) {
		t.Errorf("Compute with the system model discarded = %v, want ErrNoPrediction", err)
	}
	newPlayer(s, s.src.(*metriccache.Cache)).play(t, now, map[string]recorded{"web-0": steady(1, 1, 2*gi)})
	if _, err := s.Compute(in.Node(), pods, now.Add(time.Minute)); err != nil {
		t.Errorf("no prediction after training: %v", err)
	}
}

func TestUnwritableCheckpointDirectory(t *testing.T) {
	// A directory under a regular file cannot be created, even by root.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pods := []*corev1.Pod{testPod("web-0", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour))}
	in := &fakeInputs{node: testNode(), pods: pods}
	u, logger := logsOf(t)
	ctx := klog.NewContext(t.Context(), logger)
	s, cache := newTestServer(in, WithStore(NewStore(filepath.Join(file, "checkpoints"))))
	s.Restore(ctx)
	if !strings.Contains(u.GetBuffer().String(), "Prediction checkpoints are off: the models start afresh and live in memory only") {
		t.Errorf("no log line says checkpoints are off:\n%s", u.GetBuffer().String())
	}
	now := newPlayer(s, cache).play(t, start, map[string]recorded{"web-0": steady(10, 1, 2*gi)})
	s.Checkpoint(ctx, now, true)
	if _, err := s.Compute(in.Node(), pods, now); err != nil {
		t.Errorf("no prediction in memory: %v", err)
	}
}

func TestCheckpointFailureIsLoggedOnceAndRetried(t *testing.T) {
	dir := t.TempDir()
	pods := []*corev1.Pod{testPod("web-0", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour))}
	in := &fakeInputs{node: testNode(), pods: pods}
	u, logger := logsOf(t)
	ctx := klog.NewContext(t.Context(), logger)
	s, cache := newTestServer(in, WithStore(NewStore(dir)))
	s.Restore(ctx)
	now := newPlayer(s, cache).play(t, start, map[string]recorded{"web-0": steady(10, 1, 2*gi)})
	// The directory goes away after the start.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	s.Checkpoint(ctx, now, true)
	s.Checkpoint(ctx, now.Add(time.Hour), true)
	if got := strings.Count(u.GetBuffer().String(), "Could not write prediction checkpoints"); got != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", got, u.GetBuffer().String())
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s.Checkpoint(ctx, now.Add(2*time.Hour), true)
	files, _ := os.ReadDir(dir)
	if len(files) != 8 {
		t.Errorf("files after the directory came back = %d, want 8 (web-0 and the node's 7)", len(files))
	}
}

func TestCheckpointSchedule(t *testing.T) {
	dir := t.TempDir()
	var pods []*corev1.Pod
	series := map[string]recorded{}
	for i := range 20 {
		name := "web-" + string(rune('a'+i))
		pods = append(pods, testPod(name, extension.PriorityProd, "1", "1Gi", start))
		series[name] = steady(1, 0.5, gi)
	}
	in := &fakeInputs{node: testNode(), pods: pods}
	s, cache := newTestServer(in, WithStore(NewStore(dir)))
	ctx := testContext(t)
	s.Restore(ctx)
	now := newPlayer(s, cache).play(t, start, series)
	count := func() int {
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(files)
	}
	// 27 models changed, never written: 12 a round.
	s.Checkpoint(ctx, now, false)
	if got := count(); got != 12 {
		t.Errorf("after the first round: %d files, want 12", got)
	}
	s.Checkpoint(ctx, now.Add(time.Minute), false)
	s.Checkpoint(ctx, now.Add(2*time.Minute), false)
	if got := count(); got != 27 {
		t.Errorf("after three rounds: %d files, want 27", got)
	}
	// Nothing changed since: nothing is due, even after the interval.
	for _, f := range mustReadDir(t, dir) {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	s.Checkpoint(ctx, now.Add(time.Hour), false)
	if got := count(); got != 0 {
		t.Errorf("unchanged models written again: %d files", got)
	}
}

// hasLine reports whether a line of logs contains every part.
func hasLine(logs string, parts ...string) bool {
	for _, line := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
