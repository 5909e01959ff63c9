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

package sim

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// BaseClock is what a Clock runs on: the real clock in production (clock.RealClock), a fake one in tests.
type BaseClock interface {
	clock.WithTicker
	// AfterFunc calls f in its own goroutine after d (the fake clock calls it from Step).
	AfterFunc(d time.Duration, f func()) clock.Timer
}

var _ clock.WithTickerAndDelayedExecution = (*Clock)(nil)

// Clock is simulated time: it reads start when created and then advances Speed times as fast as its base clock,
// so that at speed 60 a simulated minute passes every second. Its timers and tickers fire after the simulated
// duration, i.e. after duration / Speed on the base clock, and deliver simulated times. It is safe for
// concurrent use.
type Clock struct {
	base      BaseClock
	baseStart time.Time
	start     time.Time
	speed     float64
}

// NewClock returns a clock that reads start now and runs speed times as fast as base. speed must be a finite
// number above zero.
func NewClock(base BaseClock, start time.Time, speed float64) (*Clock, error) {
	if math.IsNaN(speed) || math.IsInf(speed, 0) || speed <= 0 {
		return nil, fmt.Errorf("speed %v: must be a finite number above 0 (1 is real time, 60 a simulated minute "+
			"per second)", speed)
	}
	return &Clock{base: base, baseStart: base.Now(), start: start, speed: speed}, nil
}

// Speed returns how many simulated seconds pass per second of the base clock.
func (c *Clock) Speed() float64 { return c.speed }

// Now returns the simulated time.
func (c *Clock) Now() time.Time {
	return c.simulated(c.base.Now())
}

// Since returns the simulated time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration {
	return c.Now().Sub(t)
}

// Real returns how long d of simulated time takes on the base clock; at least 1ns for a positive d.
func (c *Clock) Real(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return max(time.Duration(float64(d)/c.speed), 1)
}

// Simulated returns how much simulated time passes in d of the base clock, the inverse of Real; it saturates
// at the longest time.Duration instead of overflowing.
func (c *Clock) Simulated(d time.Duration) time.Duration {
	s := float64(d) * c.speed
	switch {
	case s >= math.MaxInt64:
		return math.MaxInt64
	case s <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(s)
}

// simulated returns the simulated time at the base clock's time t.
func (c *Clock) simulated(t time.Time) time.Time {
	return c.start.Add(time.Duration(float64(t.Sub(c.baseStart)) * c.speed))
}

// After returns a channel that receives the simulated time once d of simulated time has passed.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	return c.NewTimer(d).C()
}

// Sleep blocks for d of simulated time.
func (c *Clock) Sleep(d time.Duration) {
	c.base.Sleep(c.Real(d))
}

// Tick returns the channel of a new ticker of period d; the ticker cannot be stopped.
func (c *Clock) Tick(d time.Duration) <-chan time.Time {
	return c.NewTicker(d).C()
}

// NewTimer returns a timer that fires once d of simulated time has passed, delivering the simulated time it
// was due.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	t := &timer{c: c, ch: make(chan time.Time, 1)}
	t.arm(d)
	return t
}

// AfterFunc calls f in its own goroutine once d of simulated time has passed. The timer's C is nil.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return &funcTimer{c: c, f: f, t: c.base.AfterFunc(c.Real(d), f)}
}

// NewTicker returns a ticker of period d of simulated time that delivers simulated times. Like time.Ticker it
// drops ticks a slow reader misses. d must be positive.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic(fmt.Sprintf("sim: non-positive ticker period %v", d))
	}
	t := &ticker{base: c.base.NewTicker(c.Real(d)), ch: make(chan time.Time, 1), stop: make(chan struct{})}
	go func() {
		for {
			select {
			case bt := <-t.base.C():
				t.send(c.simulated(bt))
			case <-t.stop:
				return
			}
		}
	}()
	return t
}

// timer is a Clock timer: a base AfterFunc that sends the due time. gen makes a send from a stopped or reset
// arming a no-op, and sendMu orders sends against the draining in Stop and Reset, so that no stale value is
// received afterwards (as with time.Timer since Go 1.23).
type timer struct {
	c  *Clock
	ch chan time.Time

	mu     sync.Mutex // serializes Stop and Reset
	base   clock.Timer
	gen    atomic.Uint64
	sendMu sync.Mutex
}

func (t *timer) arm(d time.Duration) {
	due := t.c.Now().Add(d)
	g := t.gen.Add(1)
	t.base = t.c.base.AfterFunc(t.c.Real(d), func() {
		t.sendMu.Lock()
		defer t.sendMu.Unlock()
		if t.gen.Load() != g {
			return
		}
		select {
		case t.ch <- due:
		default:
		}
	})
}

// disarm invalidates the current arming and drains its value.
func (t *timer) disarm() bool {
	t.gen.Add(1)
	t.sendMu.Lock()
	select {
	case <-t.ch:
	default:
	}
	t.sendMu.Unlock()
	return t.base.Stop()
}

// C implements clock.Timer.
func (t *timer) C() <-chan time.Time { return t.ch }

// Stop implements clock.Timer: it reports whether the timer was still due.
func (t *timer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.disarm()
}

// Reset implements clock.Timer: it re-arms the timer for d of simulated time and reports whether it was still
// due.
func (t *timer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	active := t.disarm()
	t.arm(d)
	return active
}

// funcTimer is the timer of AfterFunc: Reset takes simulated durations, and schedules f anew on the base
// clock (the fake clock cannot reset a timer that has fired).
type funcTimer struct {
	c  *Clock
	f  func()
	mu sync.Mutex
	t  clock.Timer
}

// C implements clock.Timer: nil, as for time.AfterFunc.
func (t *funcTimer) C() <-chan time.Time { return nil }

// Stop implements clock.Timer.
func (t *funcTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.t.Stop()
}

// Reset implements clock.Timer: f runs once d of simulated time has passed.
func (t *funcTimer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	active := t.t.Stop()
	t.t = t.c.base.AfterFunc(t.c.Real(d), t.f)
	return active
}

// ticker is a Clock ticker: a goroutine turns the base ticker's times into simulated ones until Stop. No tick
// is received after Stop returns.
type ticker struct {
	base clock.Ticker
	ch   chan time.Time
	stop chan struct{}

	mu      sync.Mutex
	stopped bool
}

// send delivers a tick unless the ticker is stopped or the last tick is still unread.
func (t *ticker) send(v time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	select {
	case t.ch <- v:
	default:
	}
}

// C implements clock.Ticker.
func (t *ticker) C() <-chan time.Time { return t.ch }

// Stop implements clock.Ticker.
func (t *ticker) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	t.base.Stop()
	close(t.stop)
	select {
	case <-t.ch:
	default:
	}
}

// skewedClock is the wall clock of a node whose clock is off: base plus the skew its agent was given
// (Cluster.SetClockSkew), read at each call so that the skew can change while the agent runs.
type skewedClock struct {
	base clock.PassiveClock
	skew *atomic.Int64 // nanoseconds, positive when the node's clock is ahead
}

// Now implements clock.PassiveClock.
func (s skewedClock) Now() time.Time { return s.base.Now().Add(time.Duration(s.skew.Load())) }

// Since implements clock.PassiveClock.
func (s skewedClock) Since(t time.Time) time.Duration { return s.Now().Sub(t) }
