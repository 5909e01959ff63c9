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
	"errors"
	"fmt"
	"math"
	"time"
)

// Buckets is an exponential bucket layout: bucket 0 covers [0, First), and bucket n ≥ 1 starts at
// First × (Ratio^n − 1) / (Ratio − 1), each bucket Ratio times as wide as the one before. Values at or above the
// start of the last bucket fall into it. A Buckets is immutable and shared by every histogram that uses it.
type Buckets struct {
	first, ratio float64
	n            int
	starts       []float64
	logRatio     float64
}

// NewBuckets returns the layout whose first bucket is first wide, whose buckets grow by ratio (above 1), with
// as many buckets as it takes for the last one to start at or above max.
func NewBuckets(max, first, ratio float64) (*Buckets, error) {
	if !(max > 0) || !(first > 0) || !(ratio > 1) || math.IsInf(max, 0) || math.IsInf(ratio, 0) {
		return nil, fmt.Errorf("bucket layout: max %v and first %v must be above 0 and finite, ratio %v above 1", max, first, ratio)
	}
	b := &Buckets{first: first, ratio: ratio, logRatio: math.Log(ratio)}
	b.n = int(math.Ceil(math.Log(max*(ratio-1)/first+1)/b.logRatio)) + 1
	b.starts = make([]float64, b.n)
	for i := 1; i < b.n; i++ {
		b.starts[i] = first * (math.Pow(ratio, float64(i)) - 1) / (ratio - 1)
	}
	return b, nil
}

// Len returns the number of buckets.
func (b *Buckets) Len() int { return b.n }

// Start returns where bucket i starts.
func (b *Buckets) Start(i int) float64 { return b.starts[i] }

// Find returns the bucket of v: 0 below First (and for NaN), the last bucket from its start on.
func (b *Buckets) Find(v float64) int {
	switch {
	case !(v >= b.first):
		return 0
	case v >= b.starts[b.n-1]:
		return b.n - 1
	}
	i := min(int(math.Log(v*(b.ratio-1)/b.first+1)/b.logRatio), b.n-1)
	// The logarithm can land one bucket off at a boundary; the starts decide.
	for i < b.n-1 && v >= b.starts[i+1] {
		i++
	}
	for i > 0 && v < b.starts[i] {
		i--
	}
	return i
}

// Koordinator's layouts (pkg/koordlet/prediction/predict_server.go): CPU from 0.025 to 1024 cores and memory
// from 5 MiB to 2 TiB, each bucket 5 % wider than the one before.
var (
	// CPUBuckets is the layout of CPU histograms, in cores.
	CPUBuckets = mustBuckets(1024, 0.025, 1.05)
	// MemoryBuckets is the layout of memory histograms, in bytes.
	MemoryBuckets = mustBuckets(1<<41, 5<<20, 1.05)
)

func mustBuckets(max, first, ratio float64) *Buckets {
	b, err := NewBuckets(max, first, ratio)
	if err != nil {
		panic(err)
	}
	return b
}

// epsilon is the weight below which a bucket counts as empty, as in Koordinator (0.001 × its minimal sample
// weight of 0.1).
const epsilon = 1e-4

// maxDecayExponent bounds how many half-lives a sample may be younger than the reference time before the
// reference moves forward, so that weights stay far from overflowing.
const maxDecayExponent = 100

// Histogram is a histogram of samples whose weights decay exponentially with their age: a sample added at time
// t weighs 2^((t − ref) / halfLife), so that a sample one half-life older than another weighs half as much.
// Only relative weights matter; when new samples would outweigh the reference by more than 2^100, every weight
// is scaled down and the reference moves forward. The zero value is not usable; call NewHistogram. A Histogram
// is not safe for concurrent use.
//
// Only the buckets from the lowest to the highest that ever took a sample are stored (weights[i] is bucket
// off + i), so a model of a steady pod holds a few buckets, not the layout's hundreds.
type Histogram struct {
	buckets  *Buckets
	halfLife time.Duration
	off      int
	weights  []float64
	total    float64
	// lo and hi bound the buckets with a weight of at least epsilon; lo > hi when there are none.
	lo, hi int
	// ref is the reference time; zero before the first sample.
	ref time.Time
}

// NewHistogram returns an empty histogram over the bucket layout b whose weights halve every halfLife (above 0).
func NewHistogram(b *Buckets, halfLife time.Duration) *Histogram {
	return &Histogram{buckets: b, halfLife: halfLife, lo: b.Len(), hi: -1}
}

// weight returns the weight of bucket i.
func (h *Histogram) weight(i int) float64 {
	if i < h.off || i >= h.off+len(h.weights) {
		return 0
	}
	return h.weights[i-h.off]
}

// addWeight adds w to bucket i, growing the stored range to hold it.
func (h *Histogram) addWeight(i int, w float64) {
	switch {
	case len(h.weights) == 0:
		h.off = i
		h.weights = append(h.weights[:0], 0)
	case i < h.off:
		grown := make([]float64, h.off+len(h.weights)-i)
		copy(grown[h.off-i:], h.weights)
		h.weights, h.off = grown, i
	case i >= h.off+len(h.weights):
		h.weights = append(h.weights, make([]float64, i-h.off-len(h.weights)+1)...)
	}
	h.weights[i-h.off] += w
}

// Empty reports whether the histogram has no sample of any weight.
func (h *Histogram) Empty() bool { return h.lo > h.hi }

// Add adds the sample v taken at t with weight 1 (before decay).
func (h *Histogram) Add(v float64, t time.Time) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	w := h.decay(t)
	i := h.buckets.Find(v)
	h.addWeight(i, w)
	h.total += w
	if h.weight(i) >= epsilon {
		h.lo, h.hi = min(h.lo, i), max(h.hi, i)
	}
}

// decay returns the weight of a sample at t, moving the reference first when it is zero or too far behind.
func (h *Histogram) decay(t time.Time) float64 {
	if h.ref.IsZero() {
		h.ref = t.Truncate(h.halfLife)
	} else if t.Sub(h.ref) > time.Duration(maxDecayExponent)*h.halfLife {
		h.shift(t.Truncate(h.halfLife))
	}
	return math.Exp2(float64(t.Sub(h.ref)) / float64(h.halfLife))
}

// shift moves the reference to ref, scaling the weights so that they keep their relative values.
func (h *Histogram) shift(ref time.Time) {
	scale := math.Exp2(-float64(ref.Sub(h.ref)) / float64(h.halfLife))
	h.total = 0
	for i := range h.weights {
		h.weights[i] *= scale
		h.total += h.weights[i]
	}
	h.ref = ref
	h.bounds()
}

// bounds recomputes lo and hi.
func (h *Histogram) bounds() {
	h.lo, h.hi = h.buckets.Len(), -1
	for i, w := range h.weights {
		if w >= epsilon {
			h.lo, h.hi = min(h.lo, h.off+i), max(h.hi, h.off+i)
		}
	}
}

// Percentile returns the p-th quantile (0 ≤ p ≤ 1) as Koordinator's histograms define it: the end of the first
// bucket at which the cumulative weight reaches p of the total (the start of the last bucket when it is that
// one); 0 when the histogram is empty.
func (h *Histogram) Percentile(p float64) float64 {
	if h.Empty() {
		return 0
	}
	threshold := p * h.total
	sum := 0.0
	i := h.lo
	for ; i < h.hi; i++ {
		sum += h.weight(i)
		if sum >= threshold {
			break
		}
	}
	if i < h.buckets.Len()-1 {
		return h.buckets.Start(i + 1)
	}
	return h.buckets.Start(i)
}

// maxCheckpointWeight is what the heaviest bucket of a checkpoint's bucketWeights is scaled to, as in
// Koordinator.
const maxCheckpointWeight = 10000

// HistogramCheckpoint is a histogram as a checkpoint stores it: Koordinator's fields (the reference time, each
// bucket's weight scaled so that the heaviest is 10000, and the total weight), so that either agent reads the
// other's checkpoints, plus the exact weights, which Koord reads when present so that a restored histogram is the
// one saved.
type HistogramCheckpoint struct {
	// ReferenceTimestamp is the reference time of the weights.
	ReferenceTimestamp time.Time `json:"referenceTimestamp,omitempty"`
	// BucketWeights are the weights by bucket, scaled to at most 10000 and rounded (Koordinator's format).
	BucketWeights map[int]uint32 `json:"bucketWeights,omitempty"`
	// TotalWeight is the sum of the weights, which scales BucketWeights back.
	TotalWeight float64 `json:"totalWeight,omitempty"`
	// ExactBucketWeights are the weights by bucket as they are; Koord's own.
	ExactBucketWeights map[int]float64 `json:"exactBucketWeights,omitempty"`
}

// Checkpoint returns the histogram as a checkpoint.
func (h *Histogram) Checkpoint() *HistogramCheckpoint {
	c := &HistogramCheckpoint{ReferenceTimestamp: h.ref, TotalWeight: h.total}
	if h.Empty() {
		return c
	}
	heaviest := 0.0
	for i := h.lo; i <= h.hi; i++ {
		heaviest = max(heaviest, h.weight(i))
	}
	c.BucketWeights = make(map[int]uint32, h.hi-h.lo+1)
	c.ExactBucketWeights = make(map[int]float64, h.hi-h.lo+1)
	for i := h.lo; i <= h.hi; i++ {
		w := h.weight(i)
		if w <= 0 {
			continue
		}
		c.ExactBucketWeights[i] = w
		if scaled := uint32(math.Round(w / heaviest * maxCheckpointWeight)); scaled > 0 {
			c.BucketWeights[i] = scaled
		}
	}
	return c
}

// Restore replaces the histogram's samples with those of c. It returns an error, and leaves the histogram
// empty, when c is not a valid checkpoint of this layout: a bucket out of range, or a weight or total that is
// negative or not finite.
func (h *Histogram) Restore(c *HistogramCheckpoint) error {
	_ = h.reset(nil)
	if c == nil {
		return errors.New("no histogram")
	}
	if math.IsNaN(c.TotalWeight) || math.IsInf(c.TotalWeight, 0) || c.TotalWeight < 0 {
		return fmt.Errorf("total weight %v is not a non-negative number", c.TotalWeight)
	}
	inRange := func(i int) error {
		if i < 0 || i >= h.buckets.Len() {
			return fmt.Errorf("bucket %d is outside the %d buckets", i, h.buckets.Len())
		}
		return nil
	}
	if len(c.ExactBucketWeights) > 0 {
		for i, w := range c.ExactBucketWeights {
			if err := inRange(i); err != nil {
				return h.reset(err)
			}
			if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				return h.reset(fmt.Errorf("bucket %d has weight %v", i, w))
			}
			h.addWeight(i, w)
			h.total += w
		}
	} else {
		// Koordinator's scaled weights: the total weight spread in proportion.
		var sum uint64
		for i, w := range c.BucketWeights {
			if err := inRange(i); err != nil {
				return h.reset(err)
			}
			sum += uint64(w)
		}
		for i, w := range c.BucketWeights {
			if sum > 0 {
				v := float64(w) / float64(sum) * c.TotalWeight
				h.addWeight(i, v)
				h.total += v
			}
		}
	}
	if math.IsInf(h.total, 0) {
		return h.reset(errors.New("the weights add up beyond a float64"))
	}
	if h.total > 0 {
		if c.ReferenceTimestamp.IsZero() {
			return h.reset(errors.New("weights without a reference time"))
		}
		h.ref = c.ReferenceTimestamp
	}
	h.bounds()
	return nil
}

// reset empties the histogram and returns err.
func (h *Histogram) reset(err error) error {
	h.weights, h.off = h.weights[:0], 0
	h.total, h.ref = 0, time.Time{}
	h.lo, h.hi = h.buckets.Len(), -1
	return err
}
