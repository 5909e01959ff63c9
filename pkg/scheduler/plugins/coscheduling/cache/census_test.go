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
	"testing"

	"github.com/google/go-cmp/cmp"

	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// TestCensus: gangs are counted as pending, waiting in Permit, satisfied and timed out as they go through a
// cycle.
func TestCensus(t *testing.T) {
	c, _ := newTestCache()
	census := func(pending, waiting, satisfied int) map[string]int {
		return map[string]int{StatePending: pending, StateWaiting: waiting, StateSatisfied: satisfied, StateTimedOut: 0}
	}
	if diff := cmp.Diff(census(0, 0, 0), c.Census()); diff != "" {
		t.Errorf("empty cache (-want,+got):\n%s", diff)
	}
	a, b := utiltesting.MakePod("a").Gang("pair", "2").Obj(), utiltesting.MakePod("b").Gang("pair", "2").Obj()
	solo := utiltesting.MakePod("s").Gang("solo", "2").Obj()
	c.AddOrUpdatePod(a)
	c.AddOrUpdatePod(b)
	c.AddOrUpdatePod(solo)
	if diff := cmp.Diff(census(2, 0, 0), c.Census()); diff != "" {
		t.Errorf("members known (-want,+got):\n%s", diff)
	}
	c.BeginCycle(a)
	c.Assume(a)
	if diff := cmp.Diff(census(1, 1, 0), c.Census()); diff != "" {
		t.Errorf("one member waiting (-want,+got):\n%s", diff)
	}
	c.BeginCycle(b)
	c.Assume(b)
	if diff := cmp.Diff(census(1, 0, 1), c.Census()); diff != "" {
		t.Errorf("gang satisfied (-want,+got):\n%s", diff)
	}
}
