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

package cache

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
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Info is the immutable view of one placed reservation that a scheduling cycle works on.
type Info struct {
	UID           types.UID
	Name          string
	Node          string
	Labels        map[string]string
	Owners        Owners
	Taints        []corev1.Taint
	Policy        schedv1alpha1.ReservationAllocatePolicy
	AllocateOnce  bool
	Unschedulable bool
	// order is the reservation-order label; 0 when missing or not a positive integer.
	Order       int64
	Allocatable quantity.Amounts
	Allocated   quantity.Amounts
	OwnerCount  int
	// held is what the reservation keeps from pods that may not use it: allocatable − allocated, nothing once
	// an allocate-once reservation has its owner.
	Held quantity.Amounts
}

// AcceptsOwners reports whether new owner pods may allocate the reservation.
func (r *Info) AcceptsOwners() bool {
	return !r.Unschedulable && !(r.AllocateOnce && r.OwnerCount > 0)
}

// Unallocated returns allocatable − allocated of resource name.
func (r *Info) Unallocated(name corev1.ResourceName) int64 {
	return max(0, r.Allocatable[name]-r.Allocated[name])
}

// Snapshot is the immutable state of the placed reservations that one scheduling cycle reads.
type Snapshot struct {
	byNode map[string][]*Info
	all    []*Info
}

// OnNode returns the reservations placed on node, sorted by name.
func (s *Snapshot) OnNode(node string) []*Info { return s.byNode[node] }

// All returns every placed reservation, sorted by name.
func (s *Snapshot) All() []*Info { return s.all }

// entry is a placed reservation in the cache.
type entry struct {
	resv        *schedv1alpha1.Reservation
	owners      Owners
	allocatable quantity.Amounts
	order       int64
}

// Allocation is an owner pod's claim on a reservation.
type Allocation struct {
	Pod      corev1.ObjectReference
	ResvUID  types.UID
	ResvName string
	Requests quantity.Amounts
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
	allocs map[types.UID]*Allocation
	snap   *Snapshot
}

// NewCache returns an empty cache; reservations never hold the ignored resources.
func NewCache(ignored []corev1.ResourceName) *Cache {
	return &Cache{
		ignored: sets.New(ignored...),
		resvs:   map[types.UID]*entry{},
		allocs:  map[types.UID]*Allocation{},
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
		var owners Owners
		owners, err = NewOwners(r.Spec.Owners)
		e = &entry{
			resv:        r,
			owners:      owners,
			allocatable: Resources(r.Status.Allocatable, c.ignored),
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
func (c *Cache) Assume(a Allocation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.allocs[a.Pod.UID] = &a
	c.snap = nil
}

// Allocates reports whether the pod with uid allocates a reservation, bound or assumed.
func (c *Cache) Allocates(podUID types.UID) bool {
	_, ok := c.AllocationOf(podUID)
	return ok
}

// AllocationOf returns the UID of the reservation the pod with uid allocates, bound or assumed.
func (c *Cache) AllocationOf(podUID types.UID) (types.UID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.allocs[podUID]
	if !ok {
		return "", false
	}
	return a.ResvUID, true
}

// SetBound records a bound owner pod; it returns whether anything changed.
func (c *Cache) SetBound(a Allocation) bool {
	a.bound = true
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.allocs[a.Pod.UID]; ok && old.bound && old.ResvUID == a.ResvUID {
		return false
	}
	c.allocs[a.Pod.UID] = &a
	c.snap = nil
	return true
}

// Forget drops the allocation of the pod with uid and returns it, if there was one.
func (c *Cache) Forget(podUID types.UID) (Allocation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.allocs[podUID]
	if !ok {
		return Allocation{}, false
	}
	delete(c.allocs, podUID)
	c.snap = nil
	return *a, true
}

// BoundOwners returns the bound owner pods of the reservation with uid, sorted by namespace and name, and
// what they allocate of its allocatable.
func (c *Cache) BoundOwners(uid types.UID, allocatable quantity.Amounts) ([]corev1.ObjectReference, quantity.Amounts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var refs []corev1.ObjectReference
	allocated := quantity.Amounts{}
	for _, a := range c.allocs {
		if a.ResvUID != uid || !a.bound {
			continue
		}
		refs = append(refs, a.Pod)
		allocated.Add(Masked(a.Requests, allocatable))
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
	byResv := make(map[types.UID][]*Allocation, len(c.resvs))
	for _, a := range c.allocs {
		if _, ok := c.resvs[a.ResvUID]; ok {
			byResv[a.ResvUID] = append(byResv[a.ResvUID], a)
		}
	}
	s := &Snapshot{byNode: map[string][]*Info{}, all: make([]*Info, 0, len(c.resvs))}
	for uid, e := range c.resvs {
		r := e.resv
		info := &Info{
			UID:           uid,
			Name:          r.Name,
			Node:          r.Status.NodeName,
			Labels:        r.Labels,
			Owners:        e.owners,
			Taints:        r.Spec.Taints,
			Policy:        r.Spec.AllocatePolicy,
			AllocateOnce:  ptr.Deref(r.Spec.AllocateOnce, true),
			Unschedulable: r.Spec.Unschedulable,
			Order:         e.order,
			Allocatable:   e.allocatable,
			Allocated:     quantity.Amounts{},
			Held:          quantity.Amounts{},
		}
		for _, a := range byResv[uid] {
			info.Allocated.Add(Masked(a.Requests, e.allocatable))
			info.OwnerCount++
		}
		if !(info.AllocateOnce && info.OwnerCount > 0) {
			for name := range info.Allocatable {
				if v := info.Unallocated(name); v > 0 {
					info.Held[name] = v
				}
			}
		}
		s.all = append(s.all, info)
		s.byNode[info.Node] = append(s.byNode[info.Node], info)
	}
	// A fixed order makes the choice among equal reservations, and the messages, stable.
	byName := func(a, b *Info) int { return cmp.Compare(a.Name, b.Name) }
	slices.SortFunc(s.all, byName)
	for _, list := range s.byNode {
		slices.SortFunc(list, byName)
	}
	c.snap = s
	return s
}
