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

package nodenumaresource

import (
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
)

// allocationKey is everything of a request and a node's labels an allocation depends on, besides the node's
// usage: what allocationOn memoizes allocations under.
type allocationKey struct {
	shape
	milliCPU, memory                       int64
	nodeBindPolicy, nodeStrategy, nodeNUMA string
}

func keyOf(req *request, labels map[string]string) allocationKey {
	return allocationKey{
		shape:    req.shape,
		milliCPU: req.amounts[corev1.ResourceCPU], memory: req.amounts[corev1.ResourceMemory],
		nodeBindPolicy: labels[extension.LabelNodeCPUBindPolicy], nodeStrategy: labels[extension.LabelNodeNUMAAllocateStrategy],
		nodeNUMA: labels[extension.LabelNUMATopologyPolicy],
	}
}

// allocated is what a node gives a request, or why it cannot.
type allocated struct {
	alloc *allocation
	err   error
}

// allocationsKey keys a node's memoized allocations in its cache.Usage's Derived.
type allocationsKey struct{}

// allocationsOf returns the allocations memoized with u, a memoized Usage.
func allocationsOf(u cache.Usage) *allocations {
	if v, ok := u.Derived.Load(allocationsKey{}); ok {
		return v.(*allocations)
	}
	v, _ := u.Derived.LoadOrStore(allocationsKey{}, &allocations{})
	return v.(*allocations)
}

// allocations memoizes a node's last allocations by request, for the Usage they were made on.
type allocations struct {
	mu      sync.Mutex
	entries [memoizedAllocations]struct {
		key allocationKey
		allocated
	}
	// n is how many entries were put; the next one replaces entries[n % memoizedAllocations].
	n int
}

// memoizedAllocations bounds the allocations memoized per node: pods of a workload ask the same, and a node
// whose usage does not change for long must not gather one entry per request ever seen.
const memoizedAllocations = 8

// get returns the answer memoized for key, if any.
func (m *allocations) get(key allocationKey) (allocated, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range min(m.n, memoizedAllocations) {
		if m.entries[i].key == key {
			return m.entries[i].allocated, true
		}
	}
	return allocated{}, false
}

// put memoizes a under key, in place of the oldest answer when the memo is full.
func (m *allocations) put(key allocationKey, a allocated) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &m.entries[m.n%memoizedAllocations]
	e.key, e.allocated = key, a
	m.n++
}
