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
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Kind is what a series measures.
type Kind string

const (
	// KindNode is the node as a whole; the series ID is empty.
	KindNode Kind = "node"
	// KindSystem is the node minus its pods (daemons and kernel); the series ID is empty.
	KindSystem Kind = "system"
	// KindPod is one pod; the series ID is the pod UID.
	KindPod Kind = "pod"
	// KindContainer is one container; the series ID is the container ID as the pod status has it, e.g.
	// "containerd://abc".
	KindContainer Kind = "container"
	// KindHostApp is one host application of the node's NodeSLO (spec.hostApplications: processes outside
	// pods, in a cgroup of their own); the series ID is its name.
	KindHostApp Kind = "hostapp"
)

// ResourceMemoryWithPageCache is the resource of memory series that count the page cache as used, next to
// corev1.ResourceMemory (bytes without the inactive page cache) and corev1.ResourceCPU (cores).
const ResourceMemoryWithPageCache corev1.ResourceName = "memory-with-page-cache"

// SeriesKey names one series.
type SeriesKey struct {
	// Kind is what the series measures.
	Kind Kind
	// ID identifies the pod or container; empty for KindNode and KindSystem.
	ID string
	// Resource is corev1.ResourceCPU (cores), corev1.ResourceMemory (bytes), ResourceMemoryWithPageCache
	// (bytes) or a pressure stall information resource such as ResourcePSICPUSomeAvg10 (percent; see IsPSI).
	Resource corev1.ResourceName
}

// String returns the key as kind/id/resource, for logs and errors.
func (k SeriesKey) String() string {
	return string(k.Kind) + "/" + k.ID + "/" + string(k.Resource)
}

// Aggregate is the statistics of the samples of one series in a window.
type Aggregate struct {
	// Avg is the arithmetic mean.
	Avg float64
	// P50 is the 50th percentile (nearest rank).
	P50 float64
	// P90 is the 90th percentile (nearest rank).
	P90 float64
	// P95 is the 95th percentile (nearest rank).
	P95 float64
	// P99 is the 99th percentile (nearest rank).
	P99 float64
	// Count is the number of samples.
	Count int
	// First is the time of the oldest sample.
	First time.Time
	// Last is the time of the newest sample.
	Last time.Time
}

// Span returns the time the samples cover, Last − First; zero for a single sample.
func (a Aggregate) Span() time.Duration {
	return a.Last.Sub(a.First)
}

// Default ring capacities: 30 minutes of node and system samples and 5 minutes of pod and container samples at
// the default 1 s collection interval.
const (
	// DefaultNodeSamples is the default capacity of node and system series.
	DefaultNodeSamples = 1800
	// DefaultPodSamples is the default capacity of pod series.
	DefaultPodSamples = 300
	// DefaultContainerSamples is the default capacity of container series.
	DefaultContainerSamples = 300
	// DefaultPSISamples is the default capacity of the pressure stall information series of pods, host
	// applications and containers: a minute at the default interval. Each sample is already a 10-second
	// average, so strategies mostly read the newest.
	DefaultPSISamples = 60
)

// Options are the ring capacities, in samples, per series kind. Zero means the default.
type Options struct {
	// NodeSamples is the capacity of KindNode and KindSystem series; DefaultNodeSamples when zero.
	NodeSamples int
	// PodSamples is the capacity of KindPod and KindHostApp series; DefaultPodSamples when zero.
	PodSamples int
	// ContainerSamples is the capacity of KindContainer series and of any other kind; DefaultContainerSamples
	// when zero.
	ContainerSamples int
	// PSISamples is the capacity of the pressure stall information series (IsPSI) of every kind but KindNode
	// and KindSystem, which hold NodeSamples; DefaultPSISamples when zero.
	PSISamples int
}

// Validate returns an error naming every capacity that is negative.
func (o Options) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"nodeSamples", o.NodeSamples}, {"podSamples", o.PodSamples}, {"containerSamples", o.ContainerSamples}, {"psiSamples", o.PSISamples}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("metric cache %s is %d, want 0 (default) or more", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// capacity returns the ring capacity of the series key.
func (o Options) capacity(key SeriesKey) int {
	pick := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	switch key.Kind {
	case KindNode, KindSystem:
		return pick(o.NodeSamples, DefaultNodeSamples)
	}
	if IsPSI(key.Resource) {
		return pick(o.PSISamples, DefaultPSISamples)
	}
	switch key.Kind {
	case KindPod, KindHostApp:
		return pick(o.PodSamples, DefaultPodSamples)
	}
	return pick(o.ContainerSamples, DefaultContainerSamples)
}

// Cache holds the series. The zero value is not usable; call New.
type Cache struct {
	opts Options

	mu     sync.RWMutex
	series map[SeriesKey]*ring
}

// New returns an empty cache with the given capacities. Capacities that are zero or negative take their default;
// call Options.Validate first to reject negative ones.
func New(opts Options) *Cache {
	return &Cache{opts: opts, series: make(map[SeriesKey]*ring)}
}

// Append adds the sample v taken at t to the series key, creating the series on first use. Samples of a series
// must come in time order: a sample at the time of the newest one replaces its value, an older one is dropped.
// NaN and infinite values are dropped. Values are stored as float32 (about 7 significant digits).
func (c *Cache) Append(key SeriesKey, t time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	c.mu.RLock()
	r := c.series[key]
	c.mu.RUnlock()
	if r == nil {
		c.mu.Lock()
		if r = c.series[key]; r == nil {
			r = newRing(c.opts.capacity(key))
			c.series[key] = r
		}
		c.mu.Unlock()
	}
	r.append(t.UnixNano(), float32(v))
}

// Aggregate returns the statistics of the samples of key taken at t with start < t <= end, and false when there
// are none (or no such series).
func (c *Cache) Aggregate(key SeriesKey, start, end time.Time) (Aggregate, bool) {
	r := c.lookup(key)
	if r == nil {
		return Aggregate{}, false
	}
	bufp := scratch.Get().(*[]float64)
	defer func() {
		*bufp = (*bufp)[:0]
		scratch.Put(bufp)
	}()
	values, first, last := r.window(start.UnixNano(), end.UnixNano(), (*bufp)[:0])
	*bufp = values
	if len(values) == 0 {
		return Aggregate{}, false
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	slices.Sort(values)
	return Aggregate{
		Avg:   sum / float64(len(values)),
		P50:   nearestRank(values, 50),
		P90:   nearestRank(values, 90),
		P95:   nearestRank(values, 95),
		P99:   nearestRank(values, 99),
		Count: len(values),
		First: time.Unix(0, first),
		Last:  time.Unix(0, last),
	}, true
}

// Latest returns the newest sample of key, and false when the series does not exist.
func (c *Cache) Latest(key SeriesKey) (t time.Time, v float64, ok bool) {
	r := c.lookup(key)
	if r == nil {
		return time.Time{}, 0, false
	}
	ns, value, ok := r.latest()
	if !ok {
		return time.Time{}, 0, false
	}
	return time.Unix(0, ns), float64(value), true
}

// Retain drops every series for which keep returns false, e.g. those of pods and containers that are gone. keep
// is called with the cache locked and must not call back into it.
func (c *Cache) Retain(keep func(SeriesKey) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.DeleteFunc(c.series, func(k SeriesKey, _ *ring) bool { return !keep(k) })
}

// Len returns the number of series.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.series)
}

// lookup returns the series of key, or nil.
func (c *Cache) lookup(key SeriesKey) *ring {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.series[key]
}

// scratch holds the buffers Aggregate copies a window into, so that a steady stream of queries allocates
// nothing.
var scratch = sync.Pool{New: func() any {
	b := make([]float64, 0, DefaultNodeSamples)
	return &b
}}

// nearestRank returns the p-th percentile of the ascending, non-empty sorted: the element of 1-based rank
// ceil(p × n / 100).
func nearestRank(sorted []float64, p int) float64 {
	n := len(sorted)
	rank := (p*n + 99) / 100
	return sorted[max(rank, 1)-1]
}

// ring is a fixed-size circular buffer of samples in time order.
type ring struct {
	mu     sync.Mutex
	times  []int64 // Unix nanoseconds
	values []float32
	head   int // index the next sample goes to
	n      int // number of samples held
}

// newRing returns an empty ring of the given capacity, allocated in full.
func newRing(capacity int) *ring {
	return &ring{times: make([]int64, capacity), values: make([]float32, capacity)}
}

// index returns the slice index of the i-th oldest sample; r.mu must be held.
func (r *ring) index(i int) int {
	j := r.head - r.n + i
	if j < 0 {
		j += len(r.times)
	}
	return j
}

// append adds a sample, replacing the newest at an equal time and dropping an older one.
func (r *ring) append(t int64, v float32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n > 0 {
		newest := r.index(r.n - 1)
		switch last := r.times[newest]; {
		case t == last:
			r.values[newest] = v
			return
		case t < last:
			return
		}
	}
	r.times[r.head] = t
	r.values[r.head] = v
	r.head++
	if r.head == len(r.times) {
		r.head = 0
	}
	if r.n < len(r.times) {
		r.n++
	}
}

// window appends to dst the values of the samples at start < t <= end, oldest first, and returns it with the
// times of the first and last of them.
func (r *ring) window(start, end int64, dst []float64) (values []float64, first, last int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lo := sort.Search(r.n, func(i int) bool { return r.times[r.index(i)] > start })
	hi := sort.Search(r.n, func(i int) bool { return r.times[r.index(i)] > end })
	if lo >= hi {
		return dst, 0, 0
	}
	for i := lo; i < hi; i++ {
		dst = append(dst, float64(r.values[r.index(i)]))
	}
	return dst, r.times[r.index(lo)], r.times[r.index(hi-1)]
}

// latest returns the newest sample.
func (r *ring) latest() (int64, float32, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		return 0, 0, false
	}
	i := r.index(r.n - 1)
	return r.times[i], r.values[i], true
}
