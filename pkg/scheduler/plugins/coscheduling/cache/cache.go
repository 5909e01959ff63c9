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
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// Cache holds every gang the scheduler knows of. It is safe for concurrent use: informer handlers, the
// scheduling cycle and binding cycles call it at once. It never calls out while holding its lock.
type Cache struct {
	clock    clock.PassiveClock
	defaults Defaults

	mu    sync.Mutex
	gangs map[ID]*gang
	// gangOf maps a member's UID to its gang, to find it when the pod changes gang or goes.
	gangOf map[types.UID]ID

	// timesMu guards times, the queue time of each gang, read by the queue sort.
	timesMu sync.RWMutex
	times   map[ID]time.Time
}

// NewCache returns an empty cache. Gangs that give no wait time or match policy get those of d; c tells how
// long members have waited.
func NewCache(d Defaults, c clock.PassiveClock) *Cache {
	return &Cache{clock: c, defaults: d, gangs: map[ID]*gang{}, gangOf: map[types.UID]ID{}, times: map[ID]time.Time{}}
}

// QueueTime returns the time the queue sort orders the gang's pods by: the PodGroup's creation time, or the
// creation time of the first member the cache saw. It does not change while the gang exists, so that a
// gang's pods keep their place in the queue.
func (c *Cache) QueueTime(id ID) (time.Time, bool) {
	c.timesMu.RLock()
	defer c.timesMu.RUnlock()
	t, ok := c.times[id]
	return t, ok
}

// gangLocked returns the gang id, creating it with queue time t when it does not exist.
func (c *Cache) gangLocked(id ID, t time.Time) *gang {
	g := c.gangs[id]
	if g != nil {
		return g
	}
	g = &gang{id: id, members: map[types.UID]*member{}, cycle: 1, cycleValid: true}
	c.gangs[id] = g
	c.timesMu.Lock()
	c.times[id] = t
	c.timesMu.Unlock()
	return g
}

// dropIfEmptyLocked forgets g when it has neither members nor a PodGroup.
func (c *Cache) dropIfEmptyLocked(g *gang) {
	if len(g.members) > 0 || g.podGroup != nil {
		return
	}
	delete(c.gangs, g.id)
	c.timesMu.Lock()
	delete(c.times, g.id)
	c.timesMu.Unlock()
}

// AddOrUpdatePod records pod (from the pod informer) in its gang. A pod with a node counts as bound. It
// returns the pod's gang and whether this change gave the gang its minimum number of members, when the
// members rejected for want of members should be tried again.
func (c *Cache) AddOrUpdatePod(pod *corev1.Pod) (ID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	before := 0
	if id, ok := IDOf(pod); ok {
		if g := c.gangs[id]; g != nil {
			before = len(g.members)
		}
	}
	g, _ := c.upsertLocked(pod)
	if g == nil {
		return ID{}, false
	}
	return g.id, g.hasSpec && before < g.spec.MinMember && len(g.members) >= g.spec.MinMember
}

// Knows reports whether pod is recorded as a member of its gang.
func (c *Cache) Knows(pod *corev1.Pod) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.gangOf[pod.UID]
	return ok
}

// Pending returns the gang's members that are not assumed or bound. The pods are the informer's: read only.
func (c *Cache) Pending(id ID) []*corev1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gangs[id]
	if g == nil {
		return nil
	}
	var pods []*corev1.Pod
	for _, m := range g.members {
		if m.state == pending {
			pods = append(pods, m.pod)
		}
	}
	return pods
}

// upsertLocked records pod in its gang and returns the gang and member; nil when pod is in no gang.
func (c *Cache) upsertLocked(pod *corev1.Pod) (*gang, *member) {
	id, ok := IDOf(pod)
	if old, known := c.gangOf[pod.UID]; known && (!ok || old != id) {
		c.removeLocked(pod.UID)
	}
	if !ok {
		return nil, nil
	}
	g := c.gangLocked(id, pod.CreationTimestamp.Time)
	c.gangOf[pod.UID] = id
	m := g.members[pod.UID]
	if m == nil {
		m = &member{}
		g.members[pod.UID] = m
		g.count(m, 1)
	} else if m.pod == pod {
		// The same object again (the scheduling cycle's pod is the informer's): nothing to read.
		return g, m
	}
	spec, err := SpecFromPod(pod, c.defaults)
	g.update(m, func() {
		m.pod = pod
		m.specErr = nil
		if err != nil && !errors.Is(err, errNoMinimum) {
			m.specErr = err
		}
		if pod.Spec.NodeName != "" {
			m.state = bound
			m.allowed, m.rejected = false, false
		}
	})
	if !g.hasSpec && g.podGroup == nil && err == nil {
		g.spec, g.hasSpec = spec, true
	}
	return g, m
}

// DeletePod forgets pod.
func (c *Cache) DeletePod(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(pod.UID)
}

// removeLocked removes the member uid from its gang. A gang defined by annotations takes its spec from
// another member when the member whose spec it used goes and none is left; a gang left with no waiting or
// bound member has to be satisfied again.
func (c *Cache) removeLocked(uid types.UID) {
	id, ok := c.gangOf[uid]
	if !ok {
		return
	}
	delete(c.gangOf, uid)
	g := c.gangs[id]
	if g == nil {
		return
	}
	if m := g.members[uid]; m != nil {
		g.count(m, -1)
		delete(g.members, uid)
	}
	if g.waiting == 0 && g.bound == 0 {
		g.onceSatisfied = false
	}
	if len(g.members) == 0 && g.podGroup == nil {
		g.hasSpec = false
	}
	c.dropIfEmptyLocked(g)
}

// AddOrUpdatePodGroup makes pg define its gang. A PodGroup whose annotations are malformed leaves the gang
// without a spec, and its pods are rejected with the error.
func (c *Cache) AddOrUpdatePodGroup(pg *v1alpha1.PodGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := ID{Namespace: pg.Namespace, Name: pg.Name}
	g := c.gangLocked(id, pg.CreationTimestamp.Time)
	if g.podGroup == nil {
		// The PodGroup, not the first pod, orders the gang in the queue.
		c.timesMu.Lock()
		c.times[id] = pg.CreationTimestamp.Time
		c.timesMu.Unlock()
	}
	g.podGroup = pg
	spec, err := SpecFromPodGroup(pg, c.defaults)
	if err != nil {
		g.spec, g.hasSpec, g.specErr = Spec{}, false, fmt.Errorf("PodGroup %s: %w", id, err)
		return
	}
	g.spec, g.hasSpec, g.specErr = spec, true, nil
}

// DeletePodGroup forgets pg; its gang falls back to the annotations of its pods.
func (c *Cache) DeletePodGroup(pg *v1alpha1.PodGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gangs[ID{Namespace: pg.Namespace, Name: pg.Name}]
	if g == nil {
		return
	}
	g.podGroup, g.hasSpec, g.specErr = nil, false, nil
	for _, m := range g.members {
		if spec, err := SpecFromPod(m.pod, c.defaults); err == nil {
			g.spec, g.hasSpec = spec, true
			break
		}
	}
	c.dropIfEmptyLocked(g)
}

// View returns a copy of the gang's state, and whether the gang exists.
func (c *Cache) View(id ID) (View, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gangs[id]
	if g == nil {
		return View{}, false
	}
	return g.view(), true
}
