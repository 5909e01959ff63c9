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
	"math"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/reporter"
)

// Defaults of a Source.
const (
	// DefaultCollectInterval is the simulated collection interval: the step between samples, koordlet's
	// collect-res-used-interval.
	DefaultCollectInterval = time.Second
	// DefaultMaxPoints is the most samples one aggregate is computed from; longer windows are sampled at a
	// multiple of the collection interval.
	DefaultMaxPoints = 300
)

var (
	_ reporter.Source         = (*Source)(nil)
	_ qosmanager.MetricReader = (*Source)(nil)
)

// Source answers a node's usage statistics from its NodeModel, as the metric cache answers them from samples:
// the samples are the model's values at the multiples (since the Unix epoch) of the collection interval, rounded
// to single precision like the cache's; a window longer than MaxPoints intervals is sampled at the smallest
// multiple of the interval that keeps it within MaxPoints samples. Averages and nearest-rank percentiles are
// computed exactly as metriccache computes them. Nothing is stored per sample: the values of the samples one
// report needs are computed once per window step and kept until ReleaseFrames, so a report costs at most
// MaxPoints evaluations of the model per distinct step. The node and system series have samples from the
// model's Since on, a pod's from its Since (but not before the node's) until its Until.
//
// It answers the series of KindNode, KindSystem and KindPod (by pod UID) for cpu, memory and
// memory-with-page-cache (the model has no page cache: it equals memory); container series are not modelled.
// A Source is safe for concurrent use.
type Source struct {
	clock     clock.PassiveClock
	collect   int64 // ns
	maxPoints int

	mu     sync.Mutex
	model  *NodeModel
	podIdx map[types.UID]int
	frames []*frame
	latest *frame // the moment at the newest collection time, for Latest
}

// NewSource returns a Source without a model that samples every collectInterval (DefaultCollectInterval when
// not positive) and computes an aggregate from at most maxPoints samples (DefaultMaxPoints when not positive).
// clk gives the time of Latest.
func NewSource(clk clock.PassiveClock, collectInterval time.Duration, maxPoints int) *Source {
	if collectInterval <= 0 {
		collectInterval = DefaultCollectInterval
	}
	if maxPoints <= 0 {
		maxPoints = DefaultMaxPoints
	}
	return &Source{clock: clk, collect: int64(collectInterval), maxPoints: maxPoints}
}

// SetModel replaces the model; statistics computed from the old one are dropped. The Source keeps m: the
// caller must not modify it afterwards.
func (s *Source) SetModel(m *NodeModel) {
	idx := make(map[types.UID]int, len(m.Pods))
	for i := range m.Pods {
		idx[m.Pods[i].UID] = i
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = m
	s.podIdx = idx
	s.releaseLocked()
}

// Model returns the model, nil before SetModel. It must not be modified.
func (s *Source) Model() *NodeModel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// ReleaseFrames drops the sample values kept since the last call, returning their memory to a pool shared by
// every Source. Call it once a report is built.
func (s *Source) ReleaseFrames() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *Source) releaseLocked() {
	for _, f := range s.frames {
		framePool.Put(f)
	}
	s.frames = s.frames[:0]
	if s.latest != nil {
		framePool.Put(s.latest)
		s.latest = nil
	}
}

// Aggregate returns the statistics of the samples of key at times t with start < t <= end, false when the
// series has none there (or is not modelled).
func (s *Source) Aggregate(key metriccache.SeriesKey, start, end time.Time) (metriccache.Aggregate, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model == nil || !end.After(start) {
		return metriccache.Aggregate{}, false
	}
	pod, ok := s.series(key)
	if !ok {
		return metriccache.Aggregate{}, false
	}
	endNs, startNs := end.UnixNano(), start.UnixNano()
	step := s.collect * max(ceilDiv(endNs-startNs, s.collect*int64(s.maxPoints)), 1)
	from := (floorDiv(startNs, step) + 1) * step
	f := s.frame(step, from, floorDiv(endNs, step)*step)
	first := max(from, f.first)
	bufp := scratch.Get().(*[]float64)
	defer scratch.Put(bufp)
	values := (*bufp)[:0]
	var sum float64
	var firstT, lastT int64
	for t := first; t <= f.last; t += step {
		v := f.value(int((t-f.first)/step), key, pod)
		if math.IsNaN(v) {
			continue
		}
		if len(values) == 0 {
			firstT = t
		}
		lastT = t
		values = append(values, v)
		sum += v
	}
	*bufp = values
	if len(values) == 0 {
		return metriccache.Aggregate{}, false
	}
	slices.Sort(values)
	return metriccache.Aggregate{
		Avg:   sum / float64(len(values)),
		P50:   nearestRank(values, 50),
		P90:   nearestRank(values, 90),
		P95:   nearestRank(values, 95),
		P99:   nearestRank(values, 99),
		Count: len(values),
		First: time.Unix(0, firstT),
		Last:  time.Unix(0, lastT),
	}, true
}

// Latest returns the newest sample of key at the clock's time: the value at the last multiple of the
// collection interval, or, for a pod that has stopped, its last sample. False when the series has no sample.
func (s *Source) Latest(key metriccache.SeriesKey) (time.Time, float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model == nil {
		return time.Time{}, 0, false
	}
	pod, ok := s.series(key)
	if !ok {
		return time.Time{}, 0, false
	}
	t := floorDiv(s.clock.Now().UnixNano(), s.collect) * s.collect
	if pod >= 0 {
		if u := s.model.Pods[pod].Until; !u.IsZero() && t >= u.UnixNano() {
			// The newest sample is the last one before the pod stopped.
			t = floorDiv(u.UnixNano()-1, s.collect) * s.collect
		}
	}
	var f *frame
	if s.latest != nil && s.latest.first == t {
		f = s.latest
	} else {
		f = framePool.Get().(*frame)
		f.fill(s.model, t, t, s.collect)
		if s.latest != nil && s.latest.first > t {
			// Keep the current moment; this one is for a stopped pod.
			defer framePool.Put(f)
		} else {
			if s.latest != nil {
				framePool.Put(s.latest)
			}
			s.latest = f
		}
	}
	v := f.value(0, key, pod)
	if math.IsNaN(v) {
		return time.Time{}, 0, false
	}
	return time.Unix(0, t), v, true
}

// series resolves key to a pod index (-1 for node and system series) and reports whether it is modelled.
func (s *Source) series(key metriccache.SeriesKey) (int, bool) {
	switch key.Resource {
	case corev1.ResourceCPU, corev1.ResourceMemory, metriccache.ResourceMemoryWithPageCache:
	default:
		return 0, false
	}
	switch key.Kind {
	case metriccache.KindNode, metriccache.KindSystem:
		return -1, key.ID == ""
	case metriccache.KindPod:
		i, ok := s.podIdx[types.UID(key.ID)]
		return i, ok
	}
	return 0, false
}

// frame returns a frame of the samples at multiples of step up to last that covers those from from on (or all
// of the last MaxPoints), computing it if needed; s.mu must be held. A new frame starts at from, or MaxPoints
// samples before last when that is later, so that a short window (the prediction's minute) costs its own samples
// and a report's windows share one frame per step.
func (s *Source) frame(step, from, last int64) *frame {
	for _, f := range s.frames {
		if f.step == step && f.last == last && f.from <= from {
			return f
		}
	}
	first := max(last-int64(s.maxPoints-1)*step, from)
	requested := first
	if since := s.model.Since.UnixNano(); first < since {
		first = min(ceilDiv(since, step)*step, last+step)
	}
	if len(s.frames) == maxFrames {
		// A caller that never releases keeps the newest frames only.
		framePool.Put(s.frames[0])
		s.frames = append(s.frames[:0], s.frames[1:]...)
	}
	f := framePool.Get().(*frame)
	f.fill(s.model, first, last, step)
	f.from = requested
	s.frames = append(s.frames, f)
	return f
}

// maxFrames is the most frames a Source keeps: a report needs one per distinct window step (3 by default).
const maxFrames = 8

// frame holds the values of every series of a model at the times first, first+step, …, last (single
// precision, NaN where a series has no sample).
type frame struct {
	step, first, last int64
	// from is the first time the frame was computed for; first is later when the model starts later.
	from int64
	pods int
	// node and system hold cpu, memory pairs per time.
	node, system []float64
	// pods holds cpu, memory pairs per pod per time.
	podValues []float64
	cpu, mem  []float64 // scratch of NodeModel.eval
}

// framePool holds frames between reports, shared by every Source.
var framePool = sync.Pool{New: func() any { return &frame{} }}

// scratch holds the buffers Aggregate sorts a window's values in.
var scratch = sync.Pool{New: func() any {
	b := make([]float64, 0, DefaultMaxPoints)
	return &b
}}

// fill computes the frame for model m; an empty frame when first > last.
func (f *frame) fill(m *NodeModel, first, last, step int64) {
	f.step, f.first, f.last, f.pods = step, first, last, len(m.Pods)
	n := 0
	if last >= first {
		n = int((last-first)/step) + 1
	}
	f.node = resize(f.node, 2*n)
	f.system = resize(f.system, 2*n)
	f.podValues = resize(f.podValues, 2*n*f.pods)
	f.cpu = resize(f.cpu, f.pods)
	f.mem = resize(f.mem, f.pods)
	since := m.Since.UnixNano()
	for i := range n {
		t := first + int64(i)*step
		mo := m.eval(t, f.cpu, f.mem)
		if t >= since {
			f.node[2*i], f.node[2*i+1] = single(mo.NodeCPU), single(mo.NodeMemory)
			f.system[2*i], f.system[2*i+1] = single(m.SystemCPU), single(m.SystemMemory)
		} else {
			f.node[2*i], f.node[2*i+1] = math.NaN(), math.NaN()
			f.system[2*i], f.system[2*i+1] = math.NaN(), math.NaN()
		}
		row := f.podValues[2*i*f.pods : 2*(i+1)*f.pods]
		for j := range f.pods {
			row[2*j], row[2*j+1] = single(f.cpu[j]), single(f.mem[j])
		}
	}
}

// value returns the value of the series of key (pod index, or -1) at the i-th time of the frame.
func (f *frame) value(i int, key metriccache.SeriesKey, pod int) float64 {
	off := 0
	if key.Resource != corev1.ResourceCPU {
		off = 1
	}
	switch {
	case pod >= 0:
		return f.podValues[2*(i*f.pods+pod)+off]
	case key.Kind == metriccache.KindSystem:
		return f.system[2*i+off]
	}
	return f.node[2*i+off]
}

// single rounds v to single precision, as the metric cache stores samples; NaN stays NaN.
func single(v float64) float64 {
	return float64(float32(v))
}

// resize returns b with length n, reusing its array when large enough.
func resize(b []float64, n int) []float64 {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]float64, n)
}

// ceilDiv returns ⌈a / b⌉ for b > 0.
func ceilDiv(a, b int64) int64 {
	return -floorDiv(-a, b)
}

// nearestRank returns the p-th percentile of the ascending, non-empty sorted: the element of 1-based rank
// ceil(p × n / 100), as metriccache defines it.
func nearestRank(sorted []float64, p int) float64 {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}
