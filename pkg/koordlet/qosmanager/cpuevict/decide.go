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

package cpuevict

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Limits of the satisfaction settings (Koordinator's).
const (
	// MaxLowerPercent is the highest cpuEvictBESatisfactionLowerPercent accepted.
	MaxLowerPercent = 60
	// DefaultUsageThresholdPercent is cpuEvictBEUsageThresholdPercent when unset.
	DefaultUsageThresholdPercent = 90
)

// Sample is the BE pods' CPU at one round, in cores.
type Sample struct {
	// Time is when it was taken.
	Time time.Time
	// Usage is what the BE pods used.
	Usage float64
	// Request is what they requested (batch-cpu).
	Request float64
	// Limit is what they may use: the besteffort cgroup's real limit (the fewer of its CPUs and its CFS quota),
	// or the node's batch-cpu allocatable under evictByAllocatable.
	Limit float64
}

// Thresholds are the satisfaction settings, in percent.
type Thresholds struct {
	// Lower is cpuEvictBESatisfactionLowerPercent: eviction starts below it.
	Lower int64
	// Upper is cpuEvictBESatisfactionUpperPercent: eviction restores it.
	Upper int64
	// Usage is cpuEvictBEUsageThresholdPercent: eviction needs BE usage at least this share of the limit.
	Usage int64
}

// Validate checks what the NodeSLO's validation cannot: the lower percent is at most MaxLowerPercent.
func (t Thresholds) Validate() error {
	if t.Lower > MaxLowerPercent {
		return fmt.Errorf("cpuEvictBESatisfactionLowerPercent %d is above %d", t.Lower, MaxLowerPercent)
	}
	if t.Lower >= t.Upper {
		return fmt.Errorf("cpuEvictBESatisfactionLowerPercent %d is not below cpuEvictBESatisfactionUpperPercent %d", t.Lower, t.Upper)
	}
	return nil
}

// Release returns the batch CPU, in cores, to release for a sample: with satisfaction = Limit / Request, nothing
// unless satisfaction < Lower% and the BE pods use at least Usage% of their limit (a zero limit counts as fully
// used); then Request × (Upper% − satisfaction).
func Release(s Sample, t Thresholds) float64 {
	if s.Request <= 0 {
		return 0
	}
	if s.Limit > 0 && s.Usage*100 < s.Limit*float64(t.Usage) {
		return 0
	}
	satisfaction := s.Limit / s.Request
	if satisfaction*100 >= float64(t.Lower) {
		return 0
	}
	return max(s.Request*(float64(t.Upper)/100-satisfaction), 0)
}

// Average returns the mean of samples (the zero Sample for none), timed at the newest.
func Average(samples []Sample) Sample {
	if len(samples) == 0 {
		return Sample{}
	}
	var a Sample
	for _, s := range samples {
		a.Usage += s.Usage
		a.Request += s.Request
		a.Limit += s.Limit
	}
	n := float64(len(samples))
	return Sample{Time: samples[len(samples)-1].Time, Usage: a.Usage / n, Request: a.Request / n, Limit: a.Limit / n}
}

// ToRelease returns the batch CPU to release from the average over the window and the newest sample: the smaller
// of Release of each, and nothing when either is nothing, so that a brief dip neither starts nor inflates an
// eviction.
func ToRelease(avg, current Sample, t Thresholds) float64 {
	a, c := Release(avg, t), Release(current, t)
	if a <= 0 || c <= 0 {
		return 0
	}
	return min(a, c)
}

// Candidate is a BE pod that may be evicted.
type Candidate struct {
	// Pod is the pod.
	Pod *corev1.Pod
	// EvictionPriority is the koordinator.sh/eviction-priority annotation, 0 when absent or malformed.
	EvictionPriority int32
	// Priority is spec.priority, 0 when unset.
	Priority int32
	// Request is its batch-cpu request in cores, what evicting it releases.
	Request float64
	// Usage is its newest CPU usage sample in cores, 0 when unknown.
	Usage float64
}

// SortCandidates orders candidates for eviction: by koordinator.sh/eviction-priority ascending (0 when absent,
// as in Koordinator); then by priority ascending; then by usage / request descending (the pods that suffer most
// from the lack of CPU); then by namespace and name. Without annotations this is Koordinator's BE order.
func SortCandidates(c []Candidate) {
	ratio := func(x Candidate) float64 {
		if x.Request <= 0 {
			return 0
		}
		return x.Usage / x.Request
	}
	slices.SortFunc(c, func(a, b Candidate) int {
		return cmp.Or(
			cmp.Compare(a.EvictionPriority, b.EvictionPriority),
			cmp.Compare(a.Priority, b.Priority),
			cmp.Compare(ratio(b), ratio(a)),
			strings.Compare(a.Pod.Namespace, b.Pod.Namespace),
			strings.Compare(a.Pod.Name, b.Pod.Name),
		)
	})
}
