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

package core

import (
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// memberState is what a member of a gang is doing.
type memberState int

const (
	// pending members are in the scheduling queue or being tried.
	pending memberState = iota
	// waiting members were assumed on a node and wait in Permit (or were allowed and go on to bind).
	waiting
	// bound members are bound to a node.
	bound
)

// member is one pod of a gang.
type member struct {
	pod   *corev1.Pod
	state memberState
	// cycle is the gang schedule cycle the member was last tried in; 0 before its first attempt.
	cycle int64
	// specErr is why the pod's own gang annotations could not be read.
	specErr error
	// waitingSince is when the member started waiting in Permit.
	waitingSince time.Time
	// allowed is set when the gang (group) was satisfied while the member waited: it goes on to bind.
	allowed bool
	// rejected is set when the member, waiting, was handed out to be rejected, so that it is handed out once.
	rejected bool
}

// gang is the state of one gang. Cache.mu guards it.
type gang struct {
	id ID
	// spec is valid when hasSpec; specErr says why a PodGroup's spec could not be read.
	spec    Spec
	hasSpec bool
	specErr error
	// podGroup is the PodGroup defining the gang, nil for gangs defined by annotations.
	podGroup *v1alpha1.PodGroup
	members  map[types.UID]*member
	// waiting and bound count the members in those states.
	waiting, bound int
	// untried counts the pending members not yet tried in the current cycle.
	untried int
	// onceSatisfied is set once the gang was satisfied in Permit.
	onceSatisfied bool
	// cycle numbers the gang's schedule cycles, from 1; a cycle ends once every pending member was tried.
	cycle int64
	// cycleValid is cleared when a member of a Strict gang fails (or the gang times out) in the cycle;
	// failure says why, timedOut whether it timed out.
	cycleValid bool
	failure    string
	timedOut   bool
	// failures counts the cycles failed since the gang was last satisfied; the next cycle after a failure
	// starts no earlier than retryAt.
	failures int
	retryAt  time.Time
}

// Backoff of a gang after a failed cycle: it doubles with each failure since the gang was last satisfied.
const (
	initialBackoff = time.Second
	maxBackoff     = 30 * time.Second
)

// backoff returns the wait after the nth failed cycle.
func backoff(n int) time.Duration {
	d := initialBackoff
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// untriedIn reports whether m counts in untried.
func (g *gang) untriedIn(m *member) bool { return m.state == pending && m.cycle < g.cycle }

// update applies change to m, keeping the gang's counters right.
func (g *gang) update(m *member, change func()) {
	g.count(m, -1)
	change()
	g.count(m, 1)
}

// count adds sign to the counters m contributes to.
func (g *gang) count(m *member, sign int) {
	switch m.state {
	case waiting:
		g.waiting += sign
	case bound:
		g.bound += sign
	}
	if g.untriedIn(m) {
		g.untried += sign
	}
}

// satisfied reports whether enough members count towards the minimum, by the gang's match policy:
// only-waiting counts waiting members, waiting-and-running waiting and bound ones, once-satisfied waiting
// ones until the gang was satisfied once and then nothing more.
func (g *gang) satisfied() bool {
	if !g.hasSpec {
		return false
	}
	switch g.spec.MatchPolicy {
	case extension.GangMatchPolicyOnlyWaiting:
		return g.waiting >= g.spec.MinMember
	case extension.GangMatchPolicyWaitingAndRunning:
		return g.waiting+g.bound >= g.spec.MinMember
	}
	return g.onceSatisfied || g.waiting >= g.spec.MinMember
}

// invalidate ends the gang's current cycle as failed with reason at now, unless it already failed, and
// returns how long the gang backs off; 0 when the cycle had failed already.
func (g *gang) invalidate(reason string, timedOut bool, now time.Time) time.Duration {
	if !g.cycleValid {
		return 0
	}
	g.cycleValid = false
	g.failure = reason
	g.timedOut = timedOut
	g.failures++
	d := backoff(g.failures)
	g.retryAt = now.Add(d)
	return d
}

// releasing reports whether members rejected in a failed cycle are still waiting to be released.
func (g *gang) releasing() bool {
	for _, m := range g.members {
		if m.state == waiting && !m.allowed {
			return true
		}
	}
	return false
}

// canAdvance reports whether the next attempt starts a new cycle: in a valid cycle once every pending member
// was tried; after a failed cycle once the gang backed off and its rejected members are released, whoever
// was tried or not, since the gang starts over.
func (g *gang) canAdvance(now time.Time) bool {
	if g.cycleValid {
		return g.untried == 0
	}
	return !now.Before(g.retryAt) && !g.releasing()
}

// View is a copy of a gang's state.
type View struct {
	// ID names the gang.
	ID ID
	// Spec is what the gang asks for; valid when HasSpec.
	Spec    Spec
	HasSpec bool
	// SpecErr says why the gang's PodGroup could not be read; PodErr why the pod's own gang annotations
	// could not be (set by BeginCycle only).
	SpecErr error
	PodErr  error
	// Members, Waiting and Bound count the gang's pods: all of them, those waiting in Permit or going on to
	// bind, those bound.
	Members, Waiting, Bound int
	// OnceSatisfied is set once the gang was satisfied in Permit.
	OnceSatisfied bool
	// Cycle is the gang's schedule cycle; PodCycle the cycle the pod was last tried in before this attempt
	// (set by BeginCycle only).
	Cycle, PodCycle int64
	// CycleValid is false when a member failed in this cycle (Failure says which and why) or the gang timed
	// out (TimedOut); the next cycle then starts no earlier than RetryAt.
	CycleValid bool
	Failure    string
	TimedOut   bool
	RetryAt    time.Time
}

// view copies g's state.
func (g *gang) view() View {
	return View{
		ID: g.id, Spec: g.spec, HasSpec: g.hasSpec, SpecErr: g.specErr,
		Members: len(g.members), Waiting: g.waiting, Bound: g.bound, OnceSatisfied: g.onceSatisfied,
		Cycle: g.cycle, CycleValid: g.cycleValid, Failure: g.failure, TimedOut: g.timedOut, RetryAt: g.retryAt,
	}
}

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
		if err != nil && err != errNoMinimum {
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

// BeginCycle records that pod is being tried and returns the state of its gang; false when the pod is in no
// gang. A new cycle, valid and not timed out, starts when every pending member of the gang has been tried in
// the gang's valid cycle, or, after a failed cycle, once the gang backed off and its rejected members were
// released. The pod counts as tried in the gang's (new) cycle; View.PodCycle is the cycle it was last tried
// in before.
func (c *Cache) BeginCycle(pod *corev1.Pod) (View, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, m := c.upsertLocked(pod)
	if g == nil {
		return View{}, false
	}
	g.update(m, func() {
		m.state = pending
		m.allowed = false
		m.rejected = false
	})
	if g.canAdvance(c.clock.Now()) {
		g.cycle++
		g.cycleValid, g.failure, g.timedOut = true, "", false
		g.untried = 0
		for _, o := range g.members {
			if g.untriedIn(o) {
				g.untried++
			}
		}
	}
	v := g.view()
	v.PodErr = m.specErr
	v.PodCycle = m.cycle
	g.update(m, func() { m.cycle = g.cycle })
	return v, true
}

// PermitResult is the outcome of Assume.
type PermitResult struct {
	// Satisfied is true when every gang of the pod's group is satisfied: the pod and Allow go on to bind.
	Satisfied bool
	// Allow are the waiting members of the group's gangs to let go on, the assumed pod included.
	Allow []types.UID
	// WaitTime is how long the pod may wait for the rest of its group.
	WaitTime time.Duration
	// Short says which gang of the group is not satisfied yet, when one is not.
	Short string
	// Pending are the gang's members still to be tried, to move to the front of the queue.
	Pending []*corev1.Pod
}

// Assume records that pod was assumed on a node and waits in Permit, and checks its gang group: when every
// gang of the group is satisfied, each is marked satisfied once and their waiting members are allowed.
func (c *Cache) Assume(pod *corev1.Pod) (PermitResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, m := c.upsertLocked(pod)
	if g == nil {
		return PermitResult{}, false
	}
	now := c.clock.Now()
	g.update(m, func() {
		m.state = waiting
		m.waitingSince = now
		m.allowed = false
		m.rejected = false
	})
	r := PermitResult{WaitTime: g.spec.WaitTime}
	if r.WaitTime <= 0 {
		// The gang lost its spec since PreFilter.
		r.WaitTime = c.defaults.WaitTime
	}
	group := c.groupLocked(g)
	for _, gg := range group {
		if gg == nil || !gg.satisfied() {
			r.Short = c.shortLocked(g, gg)
			for _, o := range g.members {
				if o.state == pending {
					r.Pending = append(r.Pending, o.pod)
				}
			}
			return r, true
		}
	}
	r.Satisfied = true
	for _, gg := range group {
		gg.onceSatisfied = true
		gg.failures = 0
		for uid, o := range gg.members {
			if o.state == waiting && !o.allowed {
				o.allowed = true
				r.Allow = append(r.Allow, uid)
			}
		}
	}
	return r, true
}

// groupLocked returns the gangs of g's group, nil for those the cache does not know.
func (c *Cache) groupLocked(g *gang) []*gang {
	if len(g.spec.Groups) <= 1 {
		return []*gang{g}
	}
	group := make([]*gang, len(g.spec.Groups))
	for i, id := range g.spec.Groups {
		group[i] = c.gangs[id]
	}
	return group
}

// shortLocked describes why gang gg of g's group is not satisfied.
func (c *Cache) shortLocked(g, gg *gang) string {
	if gg == nil {
		for _, id := range g.spec.Groups {
			if c.gangs[id] == nil {
				return fmt.Sprintf("gang %s of the group has no members or PodGroup yet", id)
			}
		}
	}
	if !gg.hasSpec {
		return fmt.Sprintf("gang %s has no spec yet", gg.id)
	}
	counted := gg.waiting
	what := "waiting"
	if gg.spec.MatchPolicy == extension.GangMatchPolicyWaitingAndRunning {
		counted += gg.bound
		what = "waiting or bound"
	}
	return fmt.Sprintf("gang %s has %d of %d members %s", gg.id, counted, gg.spec.MinMember, what)
}

// Release is what a failed cycle lets go of.
type Release struct {
	// Reject are the waiting members of the group, to reject.
	Reject []types.UID
	// Retry are the gangs whose cycle failed now, and how long they back off: their pending members are to
	// be tried again after that.
	Retry []Retry
}

// Retry is a gang to try again after a while.
type Retry struct {
	// ID names the gang.
	ID ID
	// After is how long the gang backs off.
	After time.Duration
}

// Fail records that pod, a member that passed the gang checks, could not be placed, for reason. When its
// gang is Strict, the cycle of every gang of its group fails (failed is true) and the group's waiting
// members are released. Gangs satisfied once under once-satisfied are not failed.
func (c *Cache) Fail(pod *corev1.Pod, reason string) (r Release, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, _ := c.upsertLocked(pod)
	if g == nil || !g.hasSpec || g.spec.Mode != extension.GangModeStrict || c.keepsLocked(g) {
		return Release{}, false
	}
	return c.failGroupLocked(g, fmt.Sprintf("member %s/%s failed: %s", pod.Namespace, pod.Name, reason), false), true
}

// keepsLocked reports whether g was satisfied once and no longer constrains its members.
func (c *Cache) keepsLocked(g *gang) bool {
	return g.spec.MatchPolicy == extension.GangMatchPolicyOnceSatisfied && g.onceSatisfied
}

// failGroupLocked fails the cycle of every gang of g's group and returns their waiting members that were
// not allowed yet, and the gangs whose cycle failed now.
func (c *Cache) failGroupLocked(g *gang, reason string, timedOut bool) Release {
	var r Release
	now := c.clock.Now()
	for _, gg := range c.groupLocked(g) {
		if gg == nil {
			continue
		}
		if d := gg.invalidate(reason, timedOut, now); d > 0 {
			r.Retry = append(r.Retry, Retry{ID: gg.id, After: d})
		}
		for uid, o := range gg.members {
			if o.state == waiting && !o.allowed && !o.rejected {
				o.rejected = true
				r.Reject = append(r.Reject, uid)
			}
		}
	}
	slices.Sort(r.Reject)
	return r
}

// UnreserveResult is the outcome of Unreserve.
type UnreserveResult struct {
	// Release are the waiting members of the group to reject and the gangs to try again later: after a
	// timeout, or after a failure in a Strict gang.
	Release
	// TimedOut is true when the pod waited the gang's wait time in Permit without the gang being satisfied.
	TimedOut bool
	// Timeout are the pods to mark with the timeout annotation: the pod and the rejected members, after a
	// timeout.
	Timeout []types.NamespacedName
}

// Unreserve records that pod, assumed before, was released: rejected while waiting in Permit (on timeout or
// by another plugin or member) or failing later. It decides what happens to the rest of the group: after a
// timeout every gang of the group fails its cycle as timed out and all waiting members are released and
// marked; after another failure a Strict gang fails its group's cycle (unless it was satisfied once under
// once-satisfied) and releases the waiting members; a NonStrict gang keeps them.
func (c *Cache) Unreserve(pod *corev1.Pod) UnreserveResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.gangOf[pod.UID]
	if !ok {
		return UnreserveResult{}
	}
	g := c.gangs[id]
	m := g.members[pod.UID]
	if m == nil || m.state != waiting {
		return UnreserveResult{}
	}
	wasAllowed, since := m.allowed, m.waitingSince
	g.update(m, func() {
		m.state = pending
		m.allowed = false
		m.rejected = false
	})
	if !wasAllowed && g.hasSpec && c.clock.Since(since) >= g.spec.WaitTime {
		reason := fmt.Sprintf("timed out after %v with %d of %d members waiting", g.spec.WaitTime, g.waiting+1, g.spec.MinMember)
		r := UnreserveResult{TimedOut: true, Release: c.failGroupLocked(g, reason, true)}
		r.Timeout = append(r.Timeout, types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
		for _, uid := range r.Reject {
			if gid, ok := c.gangOf[uid]; ok {
				p := c.gangs[gid].members[uid].pod
				r.Timeout = append(r.Timeout, types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
			}
		}
		return r
	}
	if !g.hasSpec || g.spec.Mode != extension.GangModeStrict || c.keepsLocked(g) {
		return UnreserveResult{}
	}
	return UnreserveResult{Release: c.failGroupLocked(g, fmt.Sprintf("member %s/%s was released", pod.Namespace, pod.Name), false)}
}

// Rejecting reports whether the member uid waits in Permit and was handed out to be rejected.
func (c *Cache) Rejecting(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.gangOf[uid]
	if !ok {
		return false
	}
	m := c.gangs[id].members[uid]
	return m != nil && m.state == waiting && m.rejected
}

// Bind records that pod was bound.
func (c *Cache) Bind(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.gangOf[pod.UID]
	if !ok {
		return
	}
	g := c.gangs[id]
	if m := g.members[pod.UID]; m != nil {
		g.update(m, func() {
			m.state = bound
			m.allowed, m.rejected = false, false
		})
	}
}
