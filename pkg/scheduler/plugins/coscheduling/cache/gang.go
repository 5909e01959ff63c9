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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

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
