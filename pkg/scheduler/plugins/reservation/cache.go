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

package reservation

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// resvInfo is the immutable view of one placed reservation that a scheduling cycle works on.
type resvInfo struct {
	uid           types.UID
	name          string
	node          string
	labels        map[string]string
	owners        []ownerMatcher
	taints        []corev1.Taint
	policy        schedv1alpha1.ReservationAllocatePolicy
	allocateOnce  bool
	unschedulable bool
	// order is the reservation-order label; 0 when missing or not a positive integer.
	order       int64
	allocatable resources
	allocated   resources
	ownerCount  int
	// held is what the reservation keeps from pods that may not use it: allocatable − allocated, nothing once
	// an allocate-once reservation has its owner.
	held resources
}

// acceptsOwners reports whether new owner pods may allocate the reservation.
func (r *resvInfo) acceptsOwners() bool {
	return !r.unschedulable && !(r.allocateOnce && r.ownerCount > 0)
}

// unallocated returns allocatable − allocated of resource name.
func (r *resvInfo) unallocated(name corev1.ResourceName) int64 {
	return max(0, r.allocatable[name]-r.allocated[name])
}

// Snapshot is the immutable state of the placed reservations that one scheduling cycle reads.
type Snapshot struct {
	byNode map[string][]*resvInfo
	all    []*resvInfo
}

// onNode returns the reservations placed on node.
func (s *Snapshot) onNode(node string) []*resvInfo { return s.byNode[node] }

// entry is a placed reservation in the cache.
type entry struct {
	resv        *schedv1alpha1.Reservation
	owners      []ownerMatcher
	allocatable resources
	order       int64
}

// allocation is an owner pod's claim on a reservation.
type allocation struct {
	pod      corev1.ObjectReference
	resvUID  types.UID
	resvName string
	requests resources
	// bound is set once the pod is seen bound with the reservation-allocated annotation; before that the
	// allocation was only assumed by Reserve.
	bound bool
}

// Cache holds the placed (Available) reservations and the allocations of owner pods. Writers are the
// Reservation and pod informers, Bind and Reserve/Unreserve; readers take a Snapshot.
type Cache struct {
	ignored sets.Set[corev1.ResourceName]

	mu     sync.Mutex
	resvs  map[types.UID]*entry
	allocs map[types.UID]*allocation
	snap   *Snapshot
}

// NewCache returns an empty cache; reservations never hold the ignored resources.
func NewCache(ignored []corev1.ResourceName) *Cache {
	return &Cache{
		ignored: sets.New(ignored...),
		resvs:   map[types.UID]*entry{},
		allocs:  map[types.UID]*allocation{},
	}
}

// dropLocked removes the reservation with uid.
func (c *Cache) dropLocked(uid types.UID) {
	if _, ok := c.resvs[uid]; ok {
		delete(c.resvs, uid)
		c.snap = nil
	}
}

// UpdateReservation records r: an Available reservation with a node holds resources, any other is dropped
// from the cache (its allocations stay, to count again should it come back). Versions reach it in order
// through the plugin's plugins.Feed. It returns the error of owner entries that do not parse; the others still
// apply.
func (c *Cache) UpdateReservation(r *schedv1alpha1.Reservation) error {
	placed := r.Status.Phase == schedv1alpha1.ReservationAvailable && r.Status.NodeName != "" && r.DeletionTimestamp == nil
	var e *entry
	var err error
	if placed {
		var owners []ownerMatcher
		owners, err = newOwnerMatchers(r.Spec.Owners)
		e = &entry{
			resv:        r,
			owners:      owners,
			allocatable: toResources(r.Status.Allocatable, c.ignored),
			order:       orderOf(r),
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e == nil {
		c.dropLocked(r.UID)
		return nil
	}
	c.resvs[r.UID] = e
	c.snap = nil
	return err
}

// orderOf returns the reservation-order label when it is a positive integer, else 0.
func orderOf(r *schedv1alpha1.Reservation) int64 {
	v, err := strconv.ParseInt(r.Labels[extension.LabelReservationOrder], 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// DeleteReservation forgets the reservation with uid.
func (c *Cache) DeleteReservation(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(uid)
}

// Placed returns the node of the reservation with uid when the cache holds it as Available.
func (c *Cache) Placed(uid types.UID) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.resvs[uid]; ok {
		return e.resv.Status.NodeName, true
	}
	return "", false
}

// Assume records that the pod allocates the reservation, before it is bound.
func (c *Cache) Assume(a allocation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.allocs[a.pod.UID] = &a
	c.snap = nil
}

// SetBound records a bound owner pod; it returns whether anything changed.
func (c *Cache) SetBound(a allocation) bool {
	a.bound = true
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.allocs[a.pod.UID]; ok && old.bound && old.resvUID == a.resvUID {
		return false
	}
	c.allocs[a.pod.UID] = &a
	c.snap = nil
	return true
}

// Forget drops the allocation of the pod with uid and returns it, if there was one.
func (c *Cache) Forget(podUID types.UID) (allocation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.allocs[podUID]
	if !ok {
		return allocation{}, false
	}
	delete(c.allocs, podUID)
	c.snap = nil
	return *a, true
}

// BoundOwners returns the bound owner pods of the reservation with uid, sorted by namespace and name, and
// what they allocate of its allocatable.
func (c *Cache) BoundOwners(uid types.UID, allocatable resources) ([]corev1.ObjectReference, resources) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var refs []corev1.ObjectReference
	allocated := resources{}
	for _, a := range c.allocs {
		if a.resvUID != uid || !a.bound {
			continue
		}
		refs = append(refs, a.pod)
		allocated.add(a.requests.masked(allocatable))
	}
	slices.SortFunc(refs, func(a, b corev1.ObjectReference) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return refs, allocated
}

// Snapshot returns the current state; it is rebuilt only after a change.
func (c *Cache) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil {
		return c.snap
	}
	byResv := make(map[types.UID][]*allocation, len(c.resvs))
	for _, a := range c.allocs {
		if _, ok := c.resvs[a.resvUID]; ok {
			byResv[a.resvUID] = append(byResv[a.resvUID], a)
		}
	}
	s := &Snapshot{byNode: map[string][]*resvInfo{}, all: make([]*resvInfo, 0, len(c.resvs))}
	for uid, e := range c.resvs {
		r := e.resv
		info := &resvInfo{
			uid:           uid,
			name:          r.Name,
			node:          r.Status.NodeName,
			labels:        r.Labels,
			owners:        e.owners,
			taints:        r.Spec.Taints,
			policy:        r.Spec.AllocatePolicy,
			allocateOnce:  ptr.Deref(r.Spec.AllocateOnce, true),
			unschedulable: r.Spec.Unschedulable,
			order:         e.order,
			allocatable:   e.allocatable,
			allocated:     resources{},
			held:          resources{},
		}
		for _, a := range byResv[uid] {
			info.allocated.add(a.requests.masked(e.allocatable))
			info.ownerCount++
		}
		if !(info.allocateOnce && info.ownerCount > 0) {
			for name := range info.allocatable {
				if v := info.unallocated(name); v > 0 {
					info.held[name] = v
				}
			}
		}
		s.all = append(s.all, info)
		s.byNode[info.node] = append(s.byNode[info.node], info)
	}
	// A fixed order makes the choice among equal reservations, and the messages, stable.
	byName := func(a, b *resvInfo) int { return cmp.Compare(a.name, b.name) }
	slices.SortFunc(s.all, byName)
	for _, list := range s.byNode {
		slices.SortFunc(list, byName)
	}
	c.snap = s
	return s
}
