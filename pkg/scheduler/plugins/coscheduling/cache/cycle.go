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
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
)

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

// Group is what gang preemption needs of a member's gang group.
type Group struct {
	// Pending are the group's members that are not assumed or bound, sorted by namespace/name. The pods are
	// the informer's: read only.
	Pending []*corev1.Pod
	// Waiting are the group's members assumed on a node, waiting in Permit (or allowed and binding).
	Waiting []types.UID
	// Members are the UIDs of every member of the group, in whatever state.
	Members map[types.UID]bool
	// BoundNodes are the nodes of the group's bound members.
	BoundNodes []string
	// GangOf is the gang of each pending member.
	GangOf map[types.UID]ID
}

// GroupOf returns the gang group of pod, when pod's gang constrains it: it has a valid spec and was not
// satisfied once under once-satisfied.
func (c *Cache) GroupOf(pod *corev1.Pod) (Group, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.gangOf[pod.UID]
	if !ok {
		return Group{}, false
	}
	g := c.gangs[id]
	if g == nil || !g.hasSpec || c.keepsLocked(g) {
		return Group{}, false
	}
	group := Group{Members: map[types.UID]bool{}, GangOf: map[types.UID]ID{}}
	for _, gg := range c.groupLocked(g) {
		if gg == nil {
			continue
		}
		for uid, m := range gg.members {
			group.Members[uid] = true
			switch m.state {
			case pending:
				group.Pending = append(group.Pending, m.pod)
				group.GangOf[uid] = gg.id
			case waiting:
				group.Waiting = append(group.Waiting, uid)
			case bound:
				group.BoundNodes = append(group.BoundNodes, m.pod.Spec.NodeName)
			}
		}
	}
	slices.SortFunc(group.Pending, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.Sort(group.Waiting)
	return group, true
}
