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

package metriccache

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

var base = time.Unix(1_700_000_000, 0)

// at returns the time i seconds after base.
func at(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }

var (
	nodeCPU = SeriesKey{Kind: KindNode, Resource: corev1.ResourceCPU}
	podCPU  = SeriesKey{Kind: KindPod, ID: "uid-a", Resource: corev1.ResourceCPU}
	ctrMem  = SeriesKey{Kind: KindContainer, ID: "containerd://abc", Resource: corev1.ResourceMemory}
)

func TestRingWrapAround(t *testing.T) {
	c := New(Options{ContainerSamples: 4})
	for i := 1; i <= 10; i++ {
		c.Append(ctrMem, at(i), float64(i))
	}
	got, ok := c.Aggregate(ctrMem, at(0), at(100))
	if !ok {
		t.Fatal("Aggregate found no samples after 10 appends")
	}
	want := Aggregate{Avg: 8.5, P50: 8, P90: 10, P95: 10, P99: 10, Count: 4, First: at(7), Last: at(10)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Aggregate after wrap-around (-want,+got):\n%s", diff)
	}
	// A window inside the ring, across the physical end of the slice (samples 8 and 9 sit at indices 3 and 0).
	got, _ = c.Aggregate(ctrMem, at(7), at(9))
	want = Aggregate{Avg: 8.5, P50: 8, P90: 9, P95: 9, P99: 9, Count: 2, First: at(8), Last: at(9)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Aggregate across the slice end (-want,+got):\n%s", diff)
	}
	lt, lv, ok := c.Latest(ctrMem)
	if diff := cmp.Diff([]any{at(10), 10.0, true}, []any{lt, lv, ok}); diff != "" {
		t.Errorf("Latest (-want,+got):\n%s", diff)
	}
}

func TestAggregateWindow(t *testing.T) {
	c := New(Options{})
	for i := 1; i <= 10; i++ {
		c.Append(nodeCPU, at(i), float64(i))
	}
	type result struct {
		Count       int
		Avg         float64
		First, Last time.Time
		OK          bool
	}
	tests := map[string]struct {
		key        SeriesKey
		start, end time.Time
		want       result
	}{
		"everything": {
			key: nodeCPU, start: at(0), end: at(10),
			want: result{Count: 10, Avg: 5.5, First: at(1), Last: at(10), OK: true},
		},
		"start-exclusive-end-inclusive": {
			key: nodeCPU, start: at(3), end: at(6),
			want: result{Count: 3, Avg: 5, First: at(4), Last: at(6), OK: true},
		},
		"between-samples": {
			key: nodeCPU, start: at(3).Add(time.Millisecond), end: at(6).Add(-time.Millisecond),
			want: result{Count: 2, Avg: 4.5, First: at(4), Last: at(5), OK: true},
		},
		"end-before-first": {
			key: nodeCPU, start: at(-5), end: at(0),
		},
		"start-at-last": {
			key: nodeCPU, start: at(10), end: at(20),
		},
		"empty-window": {
			key: nodeCPU, start: at(5), end: at(5),
		},
		"inverted-window": {
			key: nodeCPU, start: at(8), end: at(2),
		},
		"single-sample": {
			key: nodeCPU, start: at(9), end: at(10),
			want: result{Count: 1, Avg: 10, First: at(10), Last: at(10), OK: true},
		},
		"unknown-series": {
			key: podCPU, start: at(0), end: at(10),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, ok := c.Aggregate(tc.key, tc.start, tc.end)
			got := result{Count: a.Count, Avg: a.Avg, First: a.First, Last: a.Last, OK: ok}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Aggregate(%s, %s, %s) (-want,+got):\n%s", tc.key, tc.start, tc.end, diff)
			}
		})
	}
}

func TestPercentiles(t *testing.T) {
	seq := func(from, to int) []float64 {
		var out []float64
		for v := from; from <= to && v <= to; v++ {
			out = append(out, float64(v))
		}
		for v := from; from > to && v >= to; v-- {
			out = append(out, float64(v))
		}
		return out
	}
	// Nearest rank: rank = ceil(p/100 × n), 1-based, over the sorted samples.
	tests := map[string]struct {
		values []float64
		want   Aggregate
	}{
		"one-sample": {
			values: []float64{2.5},
			want:   Aggregate{Avg: 2.5, P50: 2.5, P90: 2.5, P95: 2.5, P99: 2.5, Count: 1},
		},
		"three-unsorted": {
			// sorted 10 20 30: p50 rank ceil(1.5)=2, p90 ceil(2.7)=3, p95 ceil(2.85)=3, p99 ceil(2.97)=3.
			values: []float64{30, 10, 20},
			want:   Aggregate{Avg: 20, P50: 20, P90: 30, P95: 30, P99: 30, Count: 3},
		},
		"ten": {
			// p50 rank 5, p90 rank 9, p95 rank ceil(9.5)=10, p99 rank ceil(9.9)=10.
			values: seq(1, 10),
			want:   Aggregate{Avg: 5.5, P50: 5, P90: 9, P95: 10, P99: 10, Count: 10},
		},
		"twenty-descending": {
			// p50 rank 10, p90 rank 18, p95 rank 19, p99 rank ceil(19.8)=20.
			values: seq(20, 1),
			want:   Aggregate{Avg: 10.5, P50: 10, P90: 18, P95: 19, P99: 20, Count: 20},
		},
		"hundred": {
			values: seq(1, 100),
			want:   Aggregate{Avg: 50.5, P50: 50, P90: 90, P95: 95, P99: 99, Count: 100},
		},
		"spike": {
			// 99 samples of 1 then one of 1000: p99 is rank 99, still 1; only the mean sees the spike.
			values: append(slices.Repeat([]float64{1}, 99), 1000),
			want:   Aggregate{Avg: 10.99, P50: 1, P90: 1, P95: 1, P99: 1, Count: 100},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := New(Options{})
			for i, v := range tc.values {
				c.Append(nodeCPU, at(i+1), v)
			}
			got, ok := c.Aggregate(nodeCPU, at(0), at(len(tc.values)))
			if !ok {
				t.Fatal("Aggregate found no samples")
			}
			tc.want.First, tc.want.Last = at(1), at(len(tc.values))
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(approx)); diff != "" {
				t.Errorf("Aggregate (-want,+got):\n%s", diff)
			}
		})
	}
}

// approx compares floats to 1e-9 relative, enough for sums of float32-exact values.
func approx(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestAppendOrder(t *testing.T) {
	tests := map[string]struct {
		times  []int
		values []float64
		want   []float64 // values of the window (0, 100], oldest first, checked through Count/Avg/First/Last
		first  int
		last   int
	}{
		"equal-time-replaces": {
			times: []int{1, 2, 2}, values: []float64{1, 2, 5},
			want: []float64{1, 5}, first: 1, last: 2,
		},
		"older-dropped": {
			times: []int{1, 3, 2, 4}, values: []float64{1, 3, 100, 4},
			want: []float64{1, 3, 4}, first: 1, last: 4,
		},
		"nan-and-inf-dropped": {
			times: []int{1, 2, 3, 4}, values: []float64{1, math.NaN(), math.Inf(1), 3},
			want: []float64{1, 3}, first: 1, last: 4,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := New(Options{})
			for i := range tc.times {
				c.Append(podCPU, at(tc.times[i]), tc.values[i])
			}
			got, ok := c.Aggregate(podCPU, at(0), at(100))
			var sum float64
			for _, v := range tc.want {
				sum += v
			}
			want := []any{len(tc.want), sum / float64(len(tc.want)), at(tc.first), at(tc.last), true}
			if diff := cmp.Diff(want, []any{got.Count, got.Avg, got.First, got.Last, ok}); diff != "" {
				t.Errorf("count, avg, first, last, ok (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestLatestUnknown(t *testing.T) {
	c := New(Options{})
	if lt, lv, ok := c.Latest(podCPU); ok {
		t.Errorf("Latest of an unknown series = %v, %v, true; want ok false", lt, lv)
	}
}

func TestRetain(t *testing.T) {
	c := New(Options{})
	keys := []SeriesKey{
		nodeCPU,
		{Kind: KindSystem, Resource: corev1.ResourceCPU},
		{Kind: KindPod, ID: "live", Resource: corev1.ResourceCPU},
		{Kind: KindPod, ID: "gone", Resource: corev1.ResourceCPU},
		{Kind: KindPod, ID: "gone", Resource: corev1.ResourceMemory},
		{Kind: KindContainer, ID: "containerd://gone", Resource: corev1.ResourceMemory},
	}
	for _, k := range keys {
		c.Append(k, at(1), 1)
	}
	c.Retain(func(k SeriesKey) bool { return k.ID != "gone" && k.ID != "containerd://gone" })
	if diff := cmp.Diff(3, c.Len()); diff != "" {
		t.Errorf("Len after Retain (-want,+got):\n%s", diff)
	}
	var got []bool
	for _, k := range keys {
		_, ok := c.Aggregate(k, at(0), at(1))
		got = append(got, ok)
	}
	if diff := cmp.Diff([]bool{true, true, true, false, false, false}, got); diff != "" {
		t.Errorf("series found after Retain (-want,+got):\n%s", diff)
	}
	// A dropped series starts afresh when it comes back.
	c.Append(keys[3], at(2), 7)
	a, _ := c.Aggregate(keys[3], at(0), at(2))
	if diff := cmp.Diff(1, a.Count); diff != "" {
		t.Errorf("count of a re-created series (-want,+got):\n%s", diff)
	}
}

func TestCapacityByKind(t *testing.T) {
	tests := map[string]struct {
		opts Options
		want map[Kind]int
	}{
		"defaults": {
			want: map[Kind]int{KindNode: 1800, KindSystem: 1800, KindPod: 300, KindContainer: 300, "other": 300},
		},
		"custom": {
			opts: Options{NodeSamples: 60, PodSamples: 20, ContainerSamples: 10},
			want: map[Kind]int{KindNode: 60, KindSystem: 60, KindPod: 20, KindContainer: 10, "other": 10},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := New(tc.opts)
			got := map[Kind]int{}
			for kind := range tc.want {
				k := SeriesKey{Kind: kind, ID: "x", Resource: corev1.ResourceCPU}
				for i := range 5000 {
					c.Append(k, at(i), 1)
				}
				a, _ := c.Aggregate(k, at(-1), at(5000))
				got[kind] = a.Count
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("samples kept per kind (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := map[string]struct {
		opts Options
		want string
	}{
		"zero":  {},
		"valid": {opts: Options{NodeSamples: 1, PodSamples: 2, ContainerSamples: 3}},
		"negative": {
			opts: Options{NodeSamples: -1, ContainerSamples: -3},
			want: "metric cache nodeSamples is -1, want 0 (default) or more\n" +
				"metric cache containerSamples is -3, want 0 (default) or more",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got string
			if err := tc.opts.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestMemoryBounded(t *testing.T) {
	const capacity = 50
	c := New(Options{PodSamples: capacity})
	c.Append(podCPU, at(0), 0)
	r := c.lookup(podCPU)
	wantCaps := []int{capacity, capacity}
	if diff := cmp.Diff(wantCaps, []int{cap(r.times), cap(r.values)}); diff != "" {
		t.Fatalf("ring capacity after the first sample (-want,+got):\n%s", diff)
	}
	for i := 1; i < 10*capacity; i++ {
		c.Append(podCPU, at(i), float64(i))
	}
	if diff := cmp.Diff(wantCaps, []int{cap(r.times), cap(r.values)}); diff != "" {
		t.Errorf("ring capacity after 10× capacity samples (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(capacity, r.n); diff != "" {
		t.Errorf("samples held (-want,+got):\n%s", diff)
	}
	i := 10 * capacity
	allocs := testing.AllocsPerRun(100, func() {
		c.Append(podCPU, at(i), 1)
		i++
	})
	if allocs != 0 {
		t.Errorf("Append to an existing series allocated %v times per call, want 0", allocs)
	}
}

func TestConcurrentUse(t *testing.T) {
	const (
		writers = 4
		samples = 500
	)
	c := New(Options{PodSamples: 100, NodeSamples: 100})
	ctx := t.Context()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range samples {
				c.Append(SeriesKey{Kind: KindPod, ID: fmt.Sprint("pod-", w), Resource: corev1.ResourceCPU}, at(i), float64(i))
				c.Append(SeriesKey{Kind: KindPod, ID: "churn", Resource: corev1.ResourceCPU}, at(i), 1)
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			for w := range writers {
				c.Aggregate(SeriesKey{Kind: KindPod, ID: fmt.Sprint("pod-", w), Resource: corev1.ResourceCPU}, at(0), at(samples))
			}
			c.Latest(podCPU)
			c.Len()
		}
	})
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			c.Retain(func(k SeriesKey) bool { return k.ID != "churn" })
		}
	})
	wg.Wait()
	close(stop)
	readers.Wait()

	for w := range writers {
		a, ok := c.Aggregate(SeriesKey{Kind: KindPod, ID: fmt.Sprint("pod-", w), Resource: corev1.ResourceCPU}, at(-1), at(samples))
		got := []any{ok, a.Count, a.First, a.Last}
		if diff := cmp.Diff([]any{true, 100, at(samples - 100), at(samples - 1)}, got); diff != "" {
			t.Errorf("writer %d: ok, count, first, last (-want,+got):\n%s", w, diff)
		}
	}
}
