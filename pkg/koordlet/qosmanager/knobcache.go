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

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// DefaultVerifyEvery is how many rounds a KnobCache lets pass before it reads a knob back: 10, one repair every
// 10 s at the default 1 s interval, as often as Koordinator's reconciler re-applies its rules.
const DefaultVerifyEvery = 10

// KnobCache remembers the value a strategy last wrote to, or found in, each cgroup knob, so that a round touches
// only the knobs whose wanted value changed, and reads every knob back once every VerifyEvery rounds to repair
// what someone else changed. Knobs not asked about in a round are forgotten (their pods are gone). It is not
// safe for concurrent use: a strategy's rounds run one at a time.
type KnobCache struct {
	verifyEvery int
	round       int
	entries     map[knobKey]knobEntry
}

type knobKey struct{ dir, knob string }

type knobEntry struct {
	value int64
	round int
}

// NewKnobCache returns a cache that reads knobs back every verifyEvery rounds (DefaultVerifyEvery when not
// positive).
func NewKnobCache(verifyEvery int) *KnobCache {
	if verifyEvery <= 0 {
		verifyEvery = DefaultVerifyEvery
	}
	return &KnobCache{verifyEvery: verifyEvery, entries: map[knobKey]knobEntry{}}
}

// StartRound begins a round: it forgets the knobs the previous round did not ask about.
func (c *KnobCache) StartRound() {
	for k, e := range c.entries {
		if e.round < c.round {
			delete(c.entries, k)
		}
	}
	c.round++
}

// Fresh reports whether knob in dir is known to hold value and needs no write nor read this round: it held it
// when last written or read, and this is not a verification round. It marks the knob as asked about.
func (c *KnobCache) Fresh(dir, knob string, value int64) bool {
	k := knobKey{dir, knob}
	e, ok := c.entries[k]
	if !ok {
		return false
	}
	e.round = c.round
	c.entries[k] = e
	return e.value == value && c.round%c.verifyEvery != 0
}

// Set records that knob in dir holds value (written or read back).
func (c *KnobCache) Set(dir, knob string, value int64) {
	c.entries[knobKey{dir, knob}] = knobEntry{value: value, round: c.round}
}

// Forget drops what is known of knob in dir, e.g. after a failed write.
func (c *KnobCache) Forget(dir, knob string) { delete(c.entries, knobKey{dir, knob}) }

// Apply writes value to knob in dir with write unless the cache knows it is there; see Record.
func (c *KnobCache) Apply(dir, knob string, value int64, write func() (bool, error)) error {
	if c.Fresh(dir, knob, value) {
		return nil
	}
	_, err := write()
	return c.Record(dir, knob, value, err)
}

// Record records the outcome of writing value to knob in dir (after Fresh said it was needed) and returns the
// error worth reporting. A knob the kernel lacks (cgroup.ErrNotSupported) is remembered like a written one, so
// that it is tried again only when verifying; a cgroup that is gone (cgroup.ErrNotFound) is forgotten quietly.
// Other errors are returned, and the knob is written again next round.
func (c *KnobCache) Record(dir, knob string, value int64, err error) error {
	switch {
	case err == nil, errors.Is(err, cgroup.ErrNotSupported):
		c.Set(dir, knob, value)
		return nil
	case errors.Is(err, cgroup.ErrNotFound):
		c.Forget(dir, knob)
		return nil
	}
	c.Forget(dir, knob)
	return err
}
