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

package qosmanager

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

func TestKnobCache(t *testing.T) {
	c := NewKnobCache(3)
	var writes []string
	write := func(dir string, v int64, err error) func() (bool, error) {
		return func() (bool, error) {
			writes = append(writes, fmt.Sprintf("%s=%d", dir, v))
			return err == nil, err
		}
	}
	round := func(want []string, apply func()) {
		t.Helper()
		writes = nil
		c.StartRound()
		apply()
		if diff := cmp.Diff(want, writes); diff != "" {
			t.Errorf("round %d writes (-want +got):\n%s", c.round, diff)
		}
	}
	unsupported := fmt.Errorf("x: %w", cgroup.ErrNotSupported)
	// Round 1: everything is written (or tried).
	round([]string{"/a=1", "/b=2", "/c=3"}, func() {
		_ = c.Apply("/a", "k", 1, write("/a", 1, nil))
		_ = c.Apply("/b", "k", 2, write("/b", 2, unsupported))
		if err := c.Apply("/c", "k", 3, write("/c", 3, errors.New("EINVAL"))); err == nil {
			t.Error("a failed write returned no error")
		}
	})
	// Round 2: /a and /b are known (an unsupported knob too); /c failed and is tried again; /a's value changes.
	round([]string{"/a=5", "/c=3"}, func() {
		_ = c.Apply("/a", "k", 5, write("/a", 5, nil))
		_ = c.Apply("/b", "k", 2, write("/b", 2, nil))
		_ = c.Apply("/c", "k", 3, write("/c", 3, nil))
	})
	// Round 3 verifies every knob: each is written through (the writer reads it back first).
	round([]string{"/a=5", "/b=2", "/c=3"}, func() {
		_ = c.Apply("/a", "k", 5, write("/a", 5, nil))
		_ = c.Apply("/b", "k", 2, write("/b", 2, nil))
		_ = c.Apply("/c", "k", 3, write("/c", 3, nil))
	})
	// Round 4 asks about /a only; round 5 forgets /b and /c, whose pods are gone, and writes /b again when asked.
	round(nil, func() { _ = c.Apply("/a", "k", 5, write("/a", 5, nil)) })
	round([]string{"/b=2"}, func() {
		_ = c.Apply("/a", "k", 5, write("/a", 5, nil))
		_ = c.Apply("/b", "k", 2, write("/b", 2, nil))
	})
	if len(c.entries) != 2 {
		t.Errorf("%d entries, want 2: /c was not asked about for a round", len(c.entries))
	}
}
