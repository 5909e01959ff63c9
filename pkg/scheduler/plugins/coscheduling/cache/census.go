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

// States of a gang, as Census counts them.
const (
	// StatePending: no member waits in Permit and the gang was never satisfied.
	StatePending = "Pending"
	// StateWaiting: some members wait in Permit for the rest of the gang.
	StateWaiting = "Waiting"
	// StateSatisfied: the gang was satisfied in Permit; its members bind or are bound.
	StateSatisfied = "Satisfied"
	// StateTimedOut: the gang's members waited longer than its wait time; the gang backs off.
	StateTimedOut = "TimedOut"
)

// Census counts the gangs the cache holds by state. Every state is present, 0 when no gang is in it.
func (c *Cache) Census() map[string]int {
	out := map[string]int{StatePending: 0, StateWaiting: 0, StateSatisfied: 0, StateTimedOut: 0}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.gangs {
		out[g.state()]++
	}
	return out
}

// state is g's state in Census.
func (g *gang) state() string {
	switch {
	case g.onceSatisfied:
		return StateSatisfied
	case g.waiting > 0:
		return StateWaiting
	case g.timedOut:
		return StateTimedOut
	default:
		return StatePending
	}
}
