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

package memoryevict

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// LowerBufferPercent is how far below memoryEvictThresholdPercent eviction brings usage when
// memoryEvictLowerPercent is not set.
const LowerBufferPercent = 2

// NeedRelease returns the memory, in bytes, to release from a node of capacity bytes that uses used bytes:
// nothing below thresholdPercent; at or above it, enough to come back to lowerPercent, i.e.
// capacity × (usage% − lower%) = used − capacity × lowerPercent/100.
func NeedRelease(capacity, used, thresholdPercent, lowerPercent int64) (int64, bool) {
	if capacity <= 0 || used*100 < capacity*thresholdPercent {
		return 0, false
	}
	return max(used-capacity*lowerPercent/100, 0), true
}

// Candidate is a BE pod that may be evicted.
type Candidate struct {
	// Pod is the pod.
	Pod *corev1.Pod
	// EvictionPriority is the koordinator.sh/eviction-priority annotation, 0 when absent or malformed.
	EvictionPriority int32
	// Priority is spec.priority, 0 when unset.
	Priority int32
	// Memory is its newest memory usage sample in bytes, 0 when unknown.
	Memory int64
}

// SortCandidates orders candidates for eviction: by koordinator.sh/eviction-priority ascending (0 when absent,
// as in Koordinator, so a negative value goes before unannotated pods and a positive one after them); then by
// priority ascending; then by memory usage descending (so that fewer evictions release the memory); then by
// namespace and name, so that the order is stable. Without annotations this is Koordinator's BE order.
func SortCandidates(c []Candidate) {
	slices.SortFunc(c, func(a, b Candidate) int {
		return cmp.Or(
			cmp.Compare(a.EvictionPriority, b.EvictionPriority),
			cmp.Compare(a.Priority, b.Priority),
			cmp.Compare(b.Memory, a.Memory),
			strings.Compare(a.Pod.Namespace, b.Pod.Namespace),
			strings.Compare(a.Pod.Name, b.Pod.Name),
		)
	})
}
