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
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The bucket ends used below, from start(n) = first × (1.05^n − 1) / 0.05:
//
//	CPU (first 0.025 cores): 1.0 core is in bucket 22, [0.96263, 1.03576); 3.0 in bucket 39, [2.85238, 3.01999);
//	2.0 in bucket 32, [1.88247, 2.00159); 0 in bucket 0, [0, 0.025).
//	Memory (first 5 MiB): 2 GiB is in bucket 62, [2054559099.6, 2162529934.6).

func TestBuckets(t *testing.T) {
	tests := map[string]struct {
		value      float64
		wantBucket int
		wantStart  float64
	}{
		"zero":                  {value: 0, wantBucket: 0, wantStart: 0},
		"below the first bound": {value: 0.0249, wantBucket: 0, wantStart: 0},
		"at the first bound":    {value: 0.025, wantBucket: 1, wantStart: 0.025},
		// start(2) = 0.025 × (1.05² − 1) / 0.05 = 0.025 × 0.1025 / 0.05 = 0.05125.
		"at the second bound": {value: 0.05125, wantBucket: 2, wantStart: 0.05125},
		"one core":            {value: 1, wantBucket: 22, wantStart: 0.025 * (math.Pow(1.05, 22) - 1) / 0.05},
		"negative":            {value: -1, wantBucket: 0, wantStart: 0},
		"NaN":                 {value: math.NaN(), wantBucket: 0, wantStart: 0},
		// The last bucket starts at or above 1024 cores and takes everything from there.
		"beyond the last": {value: 1e9, wantBucket: 157, wantStart: CPUBuckets.Start(157)},
		"infinite":        {value: math.Inf(1), wantBucket: 157, wantStart: CPUBuckets.Start(157)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := CPUBuckets.Find(tc.value)
			if got != tc.wantBucket {
				t.Fatalf("Find(%v) = %d, want %d", tc.value, got, tc.wantBucket)
			}
			if s := CPUBuckets.Start(got); math.Abs(s-tc.wantStart) > 1e-12 {
				t.Errorf("Start(%d) = %v, want %v", got, s, tc.wantStart)
			}
		})
	}
	// ⌈log_1.05(1024 × 0.05 / 0.025 + 1)⌉ + 1 = ⌈156.25⌉ + 1 = 158 buckets; memory ⌈203.96⌉ + 1 = 205.
	if diff := cmp.Diff([2]int{158, 205}, [2]int{CPUBuckets.Len(), MemoryBuckets.Len()}); diff != "" {
		t.Errorf("bucket counts (-want,+got):\n%s", diff)
	}
	if _, err := NewBuckets(10, 1, 1); err == nil {
		t.Error("NewBuckets accepted a ratio of 1")
	}
}

// at is a sample taken hours after t0, a multiple of the half-lives below, so that the reference time is t0.
type at struct {
	value float64
	hours float64
}

var t0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func TestHistogramPercentile(t *testing.T) {
	end := func(b int) float64 { return CPUBuckets.Start(b + 1) }
	tests := map[string]struct {
		halfLife time.Duration
		samples  []at
		p        float64
		want     float64
	}{
		"empty": {halfLife: 12 * time.Hour, p: 0.95, want: 0},
		// 19 samples of 1 core and one of 3, all of weight 1: total 20, p95 needs 19, reached by the 19 in bucket
		// 22, so p95 is the end of bucket 22.
		"p95 below a single outlier": {
			halfLife: 12 * time.Hour, samples: append(repeatAt(19, 1, 0), at{3, 0}), p: 0.95, want: end(22),
		},
		// p98 needs 19.6: bucket 22 holds 19, so it takes the outlier's bucket 39.
		"p98 reaches the outlier": {
			halfLife: 12 * time.Hour, samples: append(repeatAt(19, 1, 0), at{3, 0}), p: 0.98, want: end(39),
		},
		// Ten samples of 3 cores at t0 weigh 2^0 = 1 each, ten of 1 core a day later weigh 2^(24/12) = 4 each:
		// total 10 + 40 = 50. p80 needs 40, which the 1-core bucket holds alone: end of bucket 22. Undecayed, the
		// 1-core samples would be half the weight and p80 would be the end of bucket 39.
		"decay halves a sample's weight every half-life": {
			halfLife: 12 * time.Hour, samples: append(repeatAt(10, 3, 0), repeatAt(10, 1, 24)...), p: 0.80, want: end(22),
		},
		// Same samples, p95 needs 47.5 > 40: the old 3-core samples still decide it.
		"an old peak still counts above its weight": {
			halfLife: 12 * time.Hour, samples: append(repeatAt(10, 3, 0), repeatAt(10, 1, 24)...), p: 0.95, want: end(39),
		},
		// Two days later the new samples weigh 2^4 = 16 each: total 10 + 160 = 170, p95 needs 161.5 > 160, so the
		// 3-core bucket, but p90 needs 153 ≤ 160: the 1-core bucket.
		"after four half-lives": {
			halfLife: 12 * time.Hour, samples: append(repeatAt(10, 3, 0), repeatAt(10, 1, 48)...), p: 0.90, want: end(22),
		},
		// A zero sample is in bucket 0, whose end is 0.025 cores (Koordinator's idle floor).
		"idle": {halfLife: 12 * time.Hour, samples: repeatAt(5, 0, 0), p: 0.95, want: 0.025},
		// 120 days of samples, one per half-life: far beyond 2^100 of the first weight, so the reference moves
		// forward and every weight is rescaled. The newest sample (3 cores) weighs 2^239 (relative to the first),
		// as much as the 239 older 1-core ones together (2^239 − 1): p40 is the 1-core bucket, p60 the 3-core
		// one.
		"the reference moves forward, p40": {
			halfLife: 12 * time.Hour, samples: append(repeatEvery(239, 1, 12), at{3, 239 * 12}), p: 0.40, want: end(22),
		},
		"the reference moves forward, p60": {
			halfLife: 12 * time.Hour, samples: append(repeatEvery(239, 1, 12), at{3, 239 * 12}), p: 0.60, want: end(39),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := NewHistogram(CPUBuckets, tc.halfLife)
			for _, s := range tc.samples {
				h.Add(s.value, t0.Add(time.Duration(s.hours*float64(time.Hour))))
			}
			if got := h.Percentile(tc.p); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Percentile(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func repeatAt(n int, v, hours float64) []at {
	out := make([]at, n)
	for i := range out {
		out[i] = at{v, hours}
	}
	return out
}

func repeatEvery(n int, v, everyHours float64) []at {
	out := make([]at, n)
	for i := range out {
		out[i] = at{v, float64(i) * everyHours}
	}
	return out
}

func TestHistogramCheckpoint(t *testing.T) {
	h := NewHistogram(MemoryBuckets, 24*time.Hour)
	for i := range 30 {
		h.Add(float64(2<<30), t0.Add(time.Duration(i)*time.Minute))
	}
	h.Add(float64(6<<30), t0.Add(30*time.Minute))
	c := h.Checkpoint()

	t.Run("exact weights restore the same histogram", func(t *testing.T) {
		got := NewHistogram(MemoryBuckets, 24*time.Hour)
		if err := got.Restore(c); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(h, got, cmp.AllowUnexported(Histogram{}, Buckets{})); diff != "" {
			t.Errorf("restored histogram (-want,+got):\n%s", diff)
		}
	})
	t.Run("Koordinator's scaled weights restore the same percentiles", func(t *testing.T) {
		koordinator := *c
		koordinator.ExactBucketWeights = nil
		got := NewHistogram(MemoryBuckets, 24*time.Hour)
		if err := got.Restore(&koordinator); err != nil {
			t.Fatal(err)
		}
		for _, p := range []float64{0.5, 0.95, 0.98, 1} {
			if diff := cmp.Diff(h.Percentile(p), got.Percentile(p)); diff != "" {
				t.Errorf("p%v (-want,+got):\n%s", p*100, diff)
			}
		}
	})
	for name, bad := range map[string]*HistogramCheckpoint{
		"nil":                 nil,
		"bucket out of range": {ReferenceTimestamp: t0, TotalWeight: 1, ExactBucketWeights: map[int]float64{205: 1}},
		"negative bucket":     {ReferenceTimestamp: t0, TotalWeight: 1, BucketWeights: map[int]uint32{-1: 10000}},
		"negative weight":     {ReferenceTimestamp: t0, TotalWeight: 1, ExactBucketWeights: map[int]float64{3: -1}},
		"infinite weight":     {ReferenceTimestamp: t0, TotalWeight: 1, ExactBucketWeights: map[int]float64{3: math.Inf(1)}},
		"NaN total":           {ReferenceTimestamp: t0, TotalWeight: math.NaN(), BucketWeights: map[int]uint32{3: 10000}},
		"no reference time":   {TotalWeight: 1, ExactBucketWeights: map[int]float64{3: 1}},
	} {
		t.Run("rejects "+name, func(t *testing.T) {
			got := NewHistogram(MemoryBuckets, 24*time.Hour)
			got.Add(1<<30, t0)
			if err := got.Restore(bad); err == nil {
				t.Fatal("Restore accepted it")
			}
			if !got.Empty() {
				t.Error("a rejected checkpoint left samples")
			}
		})
	}
}
