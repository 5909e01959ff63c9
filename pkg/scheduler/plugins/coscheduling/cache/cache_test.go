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
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// gangState is the part of a View the state-machine tests compare.
type gangState struct {
	Members, Waiting, Bound int
	Cycle, PodCycle         int64
	Valid, TimedOut, Once   bool
	Failure                 string
	Err                     string
}

// stateOf projects v.
func stateOf(v View) gangState {
	s := gangState{
		Members: v.Members, Waiting: v.Waiting, Bound: v.Bound, Cycle: v.Cycle, PodCycle: v.PodCycle,
		Valid: v.CycleValid, TimedOut: v.TimedOut, Once: v.OnceSatisfied, Failure: v.Failure,
	}
	if v.PodErr != nil {
		s.Err = v.PodErr.Error()
	} else if v.SpecErr != nil {
		s.Err = v.SpecErr.Error()
	}
	return s
}

// permit is the part of a PermitResult the tests compare.
type permit struct {
	Satisfied bool
	Allow     []types.UID
	Short     string
	Pending   []string
	WaitTime  time.Duration
}

// step is one event in the life of gangs and what the cache answers; a nil want is not checked.
type step struct {
	do   func(c *Cache, clk *testingclock.FakeClock) any
	want any
}

func add(p *corev1.Pod, wantComplete bool) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any { _, complete := c.AddOrUpdatePod(p); return complete }, want: wantComplete}
}

func del(p *corev1.Pod) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any { c.DeletePod(p); return nil }}
}

func begin(p *corev1.Pod, want any) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any {
		v, ok := c.BeginCycle(p)
		if !ok {
			return "not a member"
		}
		return stateOf(v)
	}, want: want}
}

func assume(p *corev1.Pod, want any) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any {
		r, ok := c.Assume(p)
		if !ok {
			return "not a member"
		}
		got := permit{Satisfied: r.Satisfied, Allow: r.Allow, Short: r.Short, WaitTime: r.WaitTime}
		slices.Sort(got.Allow)
		for _, p := range r.Pending {
			got.Pending = append(got.Pending, p.Name)
		}
		slices.Sort(got.Pending)
		return got
	}, want: want}
}

// failure is the outcome of Fail.
type failure struct {
	Release
	Failed bool
}

func fail(p *corev1.Pod, want failure) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any {
		r, failed := c.Fail(p, "no fit")
		return failure{Release: r, Failed: failed}
	}, want: want}
}

// retry is a Retry of gang name in namespace default.
func retry(name string, after time.Duration) Retry { return Retry{ID: gid(name), After: after} }

func unreserve(p *corev1.Pod, want UnreserveResult) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any { return c.Unreserve(p) }, want: want}
}

func bind(p *corev1.Pod) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any { c.Bind(p); return nil }}
}

func tick(d time.Duration) step {
	return step{do: func(_ *Cache, clk *testingclock.FakeClock) any { clk.Step(d); return nil }}
}

func view(id ID, want gangState) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any {
		v, ok := c.View(id)
		if !ok {
			return "no gang"
		}
		return stateOf(v)
	}, want: want}
}

func noGang(id ID) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any {
		_, ok := c.View(id)
		return ok
	}, want: false}
}

func hasSpec(id ID, want bool) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any {
		v, _ := c.View(id)
		return v.HasSpec
	}, want: want}
}

func addPG(pg *v1alpha1.PodGroup) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any { c.AddOrUpdatePodGroup(pg); return nil }}
}

func delPG(pg *v1alpha1.PodGroup) step {
	return step{do: func(c *Cache, _ *testingclock.FakeClock) any { c.DeletePodGroup(pg); return nil }}
}

func uids(names ...string) []types.UID {
	out := make([]types.UID, len(names))
	for i, n := range names {
		out[i] = types.UID(n)
	}
	return out
}

func nn(names ...string) []types.NamespacedName {
	out := make([]types.NamespacedName, len(names))
	for i, n := range names {
		out[i] = types.NamespacedName{Namespace: "default", Name: n}
	}
	return out
}

func TestCacheStateMachine(t *testing.T) {
	g := extension.GangDomainPrefix
	a, b, c := utiltesting.MakePod("a").Gang("train", "3").Obj(), utiltesting.MakePod("b").Gang("train", "3").Obj(), utiltesting.MakePod("c").Gang("train", "3").Obj()
	na, nb, nc := utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"mode", "NonStrict").Obj(), utiltesting.MakePod("b").Gang("train", "3").Annotations(g+"mode", "NonStrict").Obj(), utiltesting.MakePod("c").Gang("train", "3").Annotations(g+"mode", "NonStrict").Obj()
	tests := map[string]struct {
		steps []step
	}{
		"members arrive until the minimum": {steps: []step{
			add(a, false),
			add(b, false),
			view(gid("train"), gangState{Members: 2, Cycle: 1, Valid: true}),
			add(c, true),
			add(c, false), // an update is no new member
			view(gid("train"), gangState{Members: 3, Cycle: 1, Valid: true}),
		}},
		"a pod in no gang": {steps: []step{
			add(utiltesting.MakePod("x").Obj(), false),
			begin(utiltesting.MakePod("x").Obj(), "not a member"),
			assume(utiltesting.MakePod("x").Obj(), "not a member"),
			unreserve(utiltesting.MakePod("x").Obj(), UnreserveResult{}),
		}},
		"strict gang assumed, waiting, allowed together, bound": {steps: []step{
			add(a, false), add(b, false), add(c, true),
			begin(a, gangState{Members: 3, Cycle: 1, Valid: true}),
			assume(a, permit{Short: "gang default/train has 1 of 3 members waiting", Pending: []string{"b", "c"}, WaitTime: 10 * time.Minute}),
			begin(b, gangState{Members: 3, Waiting: 1, Cycle: 1, Valid: true}),
			assume(b, permit{Short: "gang default/train has 2 of 3 members waiting", Pending: []string{"c"}, WaitTime: 10 * time.Minute}),
			begin(c, gangState{Members: 3, Waiting: 2, Cycle: 1, Valid: true}),
			assume(c, permit{Satisfied: true, Allow: uids("a", "b", "c"), WaitTime: 10 * time.Minute}),
			bind(a), bind(b), add(utiltesting.WrapPod(c).Node("node-1").Obj(), false),
			view(gid("train"), gangState{Members: 3, Bound: 3, Cycle: 1, Valid: true, Once: true}),
		}},
		"a pod tried twice in a cycle waits for the others": {steps: []step{
			add(a, false), add(b, false), add(c, true),
			begin(a, gangState{Members: 3, Cycle: 1, Valid: true}),
			begin(a, gangState{Members: 3, Cycle: 1, PodCycle: 1, Valid: true}),
			begin(b, gangState{Members: 3, Cycle: 1, Valid: true}),
			begin(c, gangState{Members: 3, Cycle: 1, Valid: true}),
			// Everyone was tried: a starts cycle 2.
			begin(a, gangState{Members: 3, Cycle: 2, PodCycle: 1, Valid: true}),
		}},
		"strict failure fails the cycle and releases the waiting members": {steps: []step{
			add(a, false), add(b, false), add(c, true),
			begin(a, nil), assume(a, nil),
			begin(b, nil),
			fail(b, failure{Release: Release{Reject: uids("a"), Retry: []Retry{retry("train", time.Second)}}, Failed: true}),
			// The framework rejects a, which releases it; the cycle failed already.
			unreserve(a, UnreserveResult{}),
			begin(c, gangState{Members: 3, Cycle: 1, Valid: false, Failure: "member default/b failed: no fit"}),
			// The gang backs off for a second before its next cycle.
			begin(b, gangState{Members: 3, Cycle: 1, PodCycle: 1, Valid: false, Failure: "member default/b failed: no fit"}),
			tick(time.Second),
			begin(b, gangState{Members: 3, Cycle: 2, PodCycle: 1, Valid: true}),
		}},
		"strict release of a waiting member fails the cycle": {steps: []step{
			add(a, false), add(b, false), add(c, true),
			begin(a, nil), assume(a, nil), begin(b, nil), assume(b, nil),
			unreserve(a, UnreserveResult{Release: Release{Reject: uids("b"), Retry: []Retry{retry("train", time.Second)}}}),
			view(gid("train"), gangState{Members: 3, Waiting: 1, Cycle: 1, Failure: "member default/a was released"}),
		}},
		"a failed cycle waits for its rejected members to be released": {steps: []step{
			add(a, false), add(b, false), add(c, true),
			begin(a, nil), assume(a, nil), begin(b, nil),
			fail(b, failure{Release: Release{Reject: uids("a"), Retry: []Retry{retry("train", time.Second)}}, Failed: true}),
			// c fails too: a was handed out for rejection already.
			fail(c, failure{Failed: true}),
			tick(time.Minute),
			// a is still being released: no new cycle yet.
			begin(b, gangState{Members: 3, Waiting: 1, Cycle: 1, PodCycle: 1, Failure: "member default/b failed: no fit"}),
			unreserve(a, UnreserveResult{}),
			// c was never tried in cycle 1; the gang starts over anyway.
			begin(b, gangState{Members: 3, Cycle: 2, PodCycle: 1, Valid: true}),
		}},
		"the backoff doubles with each failure until the gang is satisfied": {steps: func() []step {
			pa := utiltesting.MakePod("a").Gang("pair", "2").Annotations(g+"match-policy", "only-waiting").Obj()
			pb := utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"match-policy", "only-waiting").Obj()
			return []step{
				add(pa, false), add(pb, true),
				begin(pa, nil),
				fail(pa, failure{Release: Release{Retry: []Retry{retry("pair", time.Second)}}, Failed: true}),
				tick(time.Second),
				begin(pa, nil),
				fail(pa, failure{Release: Release{Retry: []Retry{retry("pair", 2*time.Second)}}, Failed: true}),
				tick(2 * time.Second),
				begin(pa, nil),
				fail(pa, failure{Release: Release{Retry: []Retry{retry("pair", 4*time.Second)}}, Failed: true}),
				tick(4 * time.Second),
				begin(pa, nil), assume(pa, nil),
				begin(pb, nil), assume(pb, permit{Satisfied: true, Allow: uids("a", "b"), WaitTime: 10 * time.Minute}),
				// b fails to bind: under only-waiting the gang is failed again, with the first backoff.
				unreserve(pb, UnreserveResult{Release: Release{Retry: []Retry{retry("pair", time.Second)}}}),
			}
		}()},
		"non-strict failure keeps the waiting members": {steps: []step{
			add(na, false), add(nb, false), add(nc, true),
			begin(na, nil), assume(na, nil),
			begin(nb, nil),
			fail(nb, failure{}),
			unreserve(na, UnreserveResult{}),
			view(gid("train"), gangState{Members: 3, Cycle: 1, Valid: true}),
		}},
		"timeout releases and marks the group's waiting members": {steps: []step{
			add(na, false), add(nb, false), add(nc, true),
			begin(na, nil), assume(na, nil),
			tick(time.Minute),
			begin(nb, nil), assume(nb, nil),
			tick(9 * time.Minute),
			// a waited its 10 minutes.
			unreserve(na, UnreserveResult{TimedOut: true, Release: Release{Reject: uids("b"), Retry: []Retry{retry("train", time.Second)}}, Timeout: nn("a", "b")}),
			unreserve(nb, UnreserveResult{}),
			begin(nc, gangState{Members: 3, Cycle: 1, TimedOut: true, Failure: "timed out after 10m0s with 2 of 3 members waiting"}),
			// After the backoff a new cycle clears the timeout.
			tick(time.Second),
			begin(na, gangState{Members: 3, Cycle: 2, PodCycle: 1, Valid: true}),
		}},
		"a member released after it was allowed did not time out": {steps: []step{
			add(utiltesting.MakePod("a").Gang("pair", "2").Obj(), false), add(utiltesting.MakePod("b").Gang("pair", "2").Obj(), true),
			begin(utiltesting.MakePod("a").Gang("pair", "2").Obj(), nil), assume(utiltesting.MakePod("a").Gang("pair", "2").Obj(), nil),
			begin(utiltesting.MakePod("b").Gang("pair", "2").Obj(), nil), assume(utiltesting.MakePod("b").Gang("pair", "2").Obj(), permit{Satisfied: true, Allow: uids("a", "b"), WaitTime: 10 * time.Minute}),
			tick(time.Hour),
			// Binding failed; the gang was satisfied once, so nothing else is released.
			unreserve(utiltesting.MakePod("a").Gang("pair", "2").Obj(), UnreserveResult{}),
			view(gid("pair"), gangState{Members: 2, Waiting: 1, Cycle: 1, Valid: true, Once: true}),
		}},
		"once-satisfied: later members pass alone until the gang is gone": {steps: []step{
			add(utiltesting.MakePod("a").Gang("pair", "2").Obj(), false), add(utiltesting.MakePod("b").Gang("pair", "2").Obj(), true),
			begin(utiltesting.MakePod("a").Gang("pair", "2").Obj(), nil), assume(utiltesting.MakePod("a").Gang("pair", "2").Obj(), nil),
			begin(utiltesting.MakePod("b").Gang("pair", "2").Obj(), nil), assume(utiltesting.MakePod("b").Gang("pair", "2").Obj(), nil),
			add(utiltesting.MakePod("a").Gang("pair", "2").Node("node-1").Obj(), false), add(utiltesting.MakePod("b").Gang("pair", "2").Node("node-1").Obj(), false),
			del(utiltesting.MakePod("b").Gang("pair", "2").Obj()),
			add(utiltesting.MakePod("b2").Gang("pair", "2").Obj(), true),
			begin(utiltesting.MakePod("b2").Gang("pair", "2").Obj(), gangState{Members: 2, Bound: 1, Cycle: 1, Valid: true, Once: true}),
			assume(utiltesting.MakePod("b2").Gang("pair", "2").Obj(), permit{Satisfied: true, Allow: uids("b2"), WaitTime: 10 * time.Minute}),
			del(utiltesting.MakePod("a").Gang("pair", "2").Obj()), del(utiltesting.MakePod("b2").Gang("pair", "2").Obj()),
			noGang(gid("pair")),
			add(utiltesting.MakePod("a3").Gang("pair", "2").Obj(), false),
			assume(utiltesting.MakePod("a3").Gang("pair", "2").Obj(), permit{Short: "gang default/pair has 1 of 2 members waiting", WaitTime: 10 * time.Minute}),
		}},
		"only-waiting counts waiting members only": {steps: []step{
			add(utiltesting.MakePod("a").Gang("pair", "2").Annotations(g+"match-policy", "only-waiting").Node("node-1").Obj(), false),
			add(utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"match-policy", "only-waiting").Obj(), true),
			begin(utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"match-policy", "only-waiting").Obj(), nil),
			assume(utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"match-policy", "only-waiting").Obj(), permit{Short: "gang default/pair has 1 of 2 members waiting", WaitTime: 10 * time.Minute}),
		}},
		"waiting-and-running counts bound members too": {steps: []step{
			add(utiltesting.MakePod("a").Gang("pair", "2").Annotations(g+"match-policy", "waiting-and-running").Node("node-1").Obj(), false),
			add(utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"match-policy", "waiting-and-running").Obj(), true),
			begin(utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"match-policy", "waiting-and-running").Obj(), nil),
			assume(utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"match-policy", "waiting-and-running").Obj(), permit{Satisfied: true, Allow: uids("b"), WaitTime: 10 * time.Minute}),
		}},
		"waiting-and-running short of members": {steps: []step{
			add(utiltesting.MakePod("b").Gang("trio", "3").Annotations(g+"match-policy", "waiting-and-running").Obj(), false),
			assume(utiltesting.MakePod("b").Gang("trio", "3").Annotations(g+"match-policy", "waiting-and-running").Obj(), permit{Short: "gang default/trio has 1 of 3 members waiting or bound", WaitTime: 10 * time.Minute}),
		}},
		"a gang group binds only when all its gangs are satisfied": {steps: []step{
			add(utiltesting.MakePod("w").Gang("workers", "1").Annotations(g+"groups", `["default/ps"]`).Obj(), true),
			add(utiltesting.MakePod("p").Gang("ps", "1").Annotations(g+"groups", `["default/workers"]`).Obj(), true),
			begin(utiltesting.MakePod("w").Gang("workers", "1").Annotations(g+"groups", `["default/ps"]`).Obj(), nil),
			assume(utiltesting.MakePod("w").Gang("workers", "1").Annotations(g+"groups", `["default/ps"]`).Obj(), permit{Short: "gang default/ps has 0 of 1 members waiting", WaitTime: 10 * time.Minute}),
			begin(utiltesting.MakePod("p").Gang("ps", "1").Annotations(g+"groups", `["default/workers"]`).Obj(), nil),
			assume(utiltesting.MakePod("p").Gang("ps", "1").Annotations(g+"groups", `["default/workers"]`).Obj(), permit{Satisfied: true, Allow: uids("p", "w"), WaitTime: 10 * time.Minute}),
		}},
		"a gang group with an unknown gang waits": {steps: []step{
			add(utiltesting.MakePod("w").Gang("workers", "1").Annotations(g+"groups", `["default/ps"]`).Obj(), true),
			assume(utiltesting.MakePod("w").Gang("workers", "1").Annotations(g+"groups", `["default/ps"]`).Obj(), permit{Short: "gang default/ps of the group has no members or PodGroup yet", WaitTime: 10 * time.Minute}),
		}},
		"a strict failure fails the whole group": {steps: []step{
			add(utiltesting.MakePod("w").Gang("workers", "1").Annotations(g+"groups", `["default/ps"]`).Obj(), true),
			add(utiltesting.MakePod("p").Gang("ps", "2").Annotations(g+"groups", `["default/workers"]`).Obj(), false),
			add(utiltesting.MakePod("p2").Gang("ps", "2").Annotations(g+"groups", `["default/workers"]`).Obj(), true),
			begin(utiltesting.MakePod("w").Gang("workers", "1").Annotations(g+"groups", `["default/ps"]`).Obj(), nil),
			assume(utiltesting.MakePod("w").Gang("workers", "1").Annotations(g+"groups", `["default/ps"]`).Obj(), nil),
			begin(utiltesting.MakePod("p").Gang("ps", "2").Annotations(g+"groups", `["default/workers"]`).Obj(), nil),
			fail(utiltesting.MakePod("p").Gang("ps", "2").Annotations(g+"groups", `["default/workers"]`).Obj(), failure{Release: Release{Reject: uids("w"),
				Retry: []Retry{retry("ps", time.Second), retry("workers", time.Second)}}, Failed: true}),
			view(gid("workers"), gangState{Members: 1, Waiting: 1, Cycle: 1, Failure: "member default/p failed: no fit"}),
		}},
		"a deleted waiting member no longer counts": {steps: []step{
			add(a, false), add(b, false), add(c, true),
			begin(a, nil), assume(a, nil), begin(b, nil), assume(b, nil),
			del(a),
			view(gid("train"), gangState{Members: 2, Waiting: 1, Cycle: 1, Valid: true}),
			begin(c, nil),
			assume(c, permit{Short: "gang default/train has 2 of 3 members waiting", WaitTime: 10 * time.Minute}),
		}},
		"malformed annotations reject the pod, not the gang": {steps: []step{
			add(utiltesting.MakePod("a").Gang("pair", "2").Obj(), false),
			add(utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"mode", "Lenient").Obj(), true),
			begin(utiltesting.MakePod("b").Gang("pair", "2").Annotations(g+"mode", "Lenient").Obj(), gangState{Members: 2, Cycle: 1, Valid: true,
				Err: `annotation "gang.scheduling.koordinator.sh/mode": unsupported value "Lenient"`}),
			begin(utiltesting.MakePod("a").Gang("pair", "2").Obj(), gangState{Members: 2, Cycle: 1, Valid: true}),
		}},
		"a PodGroup defines the gang, its deletion falls back to annotations": {steps: []step{
			addPG(utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()),
			add(utiltesting.MakePod("a").PodGroup("train").Obj(), false),
			add(utiltesting.MakePod("b").PodGroup("train").Obj(), true),
			hasSpec(gid("train"), true),
			assume(utiltesting.MakePod("a").PodGroup("train").Obj(), permit{Short: "gang default/train has 1 of 2 members waiting", Pending: []string{"b"}, WaitTime: 30 * time.Second}),
			delPG(utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()),
			hasSpec(gid("train"), false),
			begin(utiltesting.MakePod("b").PodGroup("train").Obj(), gangState{Members: 2, Waiting: 1, Cycle: 1, Valid: true}),
		}},
		"a malformed PodGroup is reported": {steps: []step{
			addPG(utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30*time.Second).Annotations(g+"groups", `["x"]`).Obj()),
			add(utiltesting.MakePod("a").PodGroup("train").Obj(), false),
			begin(utiltesting.MakePod("a").PodGroup("train").Obj(), gangState{Members: 1, Cycle: 1, Valid: true,
				Err: `PodGroup default/train: annotation "gang.scheduling.koordinator.sh/groups": [0]: "x" is not of the form namespace/name`}),
		}},
		"a gang without PodGroup or minimum has no spec": {steps: []step{
			add(utiltesting.MakePod("a").Annotations(extension.AnnotationGangName, "train").Obj(), false),
			hasSpec(gid("train"), false),
			assume(utiltesting.MakePod("a").Annotations(extension.AnnotationGangName, "train").Obj(), permit{Short: "gang default/train has no spec yet", WaitTime: 10 * time.Minute}),
		}},
		"an annotation gang keeps its spec when its first member goes": {steps: []step{
			add(utiltesting.MakePod("a").Gang("pair", "2").Obj(), false),
			add(utiltesting.MakePod("b").Gang("pair", "2").Obj(), true),
			del(utiltesting.MakePod("a").Gang("pair", "2").Obj()),
			hasSpec(gid("pair"), true),
		}},
		"a pod that changes gang leaves the old one": {steps: []step{
			add(utiltesting.MakePod("a").Gang("one", "1").Obj(), true),
			add(utiltesting.MakePod("a").Gang("two", "1").Obj(), true),
			noGang(gid("one")),
			view(gid("two"), gangState{Members: 1, Cycle: 1, Valid: true}),
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cache, clk := newTestCache()
			for i, s := range tc.steps {
				got := s.do(cache, clk)
				if s.want == nil {
					continue
				}
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Fatalf("step %d (-want,+got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	tests := map[string]struct {
		failures int
		want     time.Duration
	}{
		"first":  {failures: 1, want: time.Second},
		"second": {failures: 2, want: 2 * time.Second},
		"fifth":  {failures: 5, want: 16 * time.Second},
		"capped": {failures: 6, want: 30 * time.Second},
		"many":   {failures: 1000, want: 30 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := backoff(tc.failures); got != tc.want {
				t.Errorf("backoff(%d) = %v, want %v", tc.failures, got, tc.want)
			}
		})
	}
}

func TestQueueTime(t *testing.T) {
	cache, _ := newTestCache()
	first := utiltesting.MakePod("a").Gang("train", "2").Obj()
	later := utiltesting.MakePod("b").Gang("train", "2").Obj()
	later.CreationTimestamp.Time = utiltesting.Now.Add(time.Minute)
	cache.AddOrUpdatePod(first)
	cache.AddOrUpdatePod(later)
	got, ok := cache.QueueTime(gid("train"))
	if !ok || !got.Equal(utiltesting.Now) {
		t.Errorf("QueueTime() = %v, %v, want %v (the first member's creation)", got, ok, utiltesting.Now)
	}
	cache.AddOrUpdatePodGroup(utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj())
	got, _ = cache.QueueTime(gid("train"))
	if want := utiltesting.Now.Add(-time.Hour); !got.Equal(want) {
		t.Errorf("QueueTime() with PodGroup = %v, want %v", got, want)
	}
	cache.DeletePod(first)
	cache.DeletePod(later)
	cache.DeletePodGroup(utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj())
	if _, ok := cache.QueueTime(gid("train")); ok {
		t.Errorf("QueueTime() of a forgotten gang is known")
	}
}
