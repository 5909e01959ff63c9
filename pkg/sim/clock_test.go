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
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// realStart is the base clock's time in the clock tests; simulated time starts at day.
var realStart = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

func newTestClock(t *testing.T, speed float64) (*Clock, *clocktesting.FakeClock) {
	t.Helper()
	base := clocktesting.NewFakeClock(realStart)
	c, err := NewClock(base, day, speed)
	if err != nil {
		t.Fatal(err)
	}
	return c, base
}

func TestNewClockRejectsBadSpeed(t *testing.T) {
	for name, speed := range map[string]float64{"zero": 0, "negative": -60, "nan": math.NaN(), "inf": math.Inf(1)} {
		t.Run(name, func(t *testing.T) {
			c, err := NewClock(clocktesting.NewFakeClock(realStart), day, speed)
			if err == nil || c != nil {
				t.Fatalf("NewClock(speed %v) = %v, %v; want an error", speed, c, err)
			}
		})
	}
}

func TestClockNow(t *testing.T) {
	tests := map[string]struct {
		speed float64
		step  time.Duration
		want  time.Duration // simulated time elapsed
	}{
		"real-time":         {speed: 1, step: 90 * time.Second, want: 90 * time.Second},
		"minute-per-second": {speed: 60, step: 3 * time.Second, want: 3 * time.Minute},
		"day-in-24-minutes": {speed: 60, step: 24 * time.Minute, want: 24 * time.Hour},
		"half-speed":        {speed: 0.5, step: 10 * time.Second, want: 5 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, base := newTestClock(t, tc.speed)
			if got := c.Now(); !got.Equal(day) {
				t.Fatalf("Now at start = %s, want %s", got, day)
			}
			base.Step(tc.step)
			if diff := cmp.Diff(day.Add(tc.want), c.Now()); diff != "" {
				t.Errorf("Now (-want,+got):\n%s", diff)
			}
			if got := c.Since(day); got != tc.want {
				t.Errorf("Since(start) = %v, want %v", got, tc.want)
			}
			if got := c.Real(tc.want); got != tc.step {
				t.Errorf("Real(%v) = %v, want %v", tc.want, got, tc.step)
			}
			if got := c.Simulated(tc.step); got != tc.want {
				t.Errorf("Simulated(%v) = %v, want %v", tc.step, got, tc.want)
			}
		})
	}
}

func TestClockSimulatedSaturates(t *testing.T) {
	c, _ := newTestClock(t, 3600)
	tests := map[string]struct {
		tc   time.Duration
		want time.Duration
	}{
		"an hour is 150 days":  {tc: time.Hour, want: 3600 * time.Hour},
		"longest":              {tc: math.MaxInt64, want: math.MaxInt64},
		"just past the limit":  {tc: math.MaxInt64/3600 + 1, want: math.MaxInt64},
		"most negative":        {tc: math.MinInt64, want: math.MinInt64},
		"negative stays exact": {tc: -time.Second, want: -time.Hour},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := c.Simulated(tc.tc); got != tc.want {
				t.Errorf("Simulated(%v) = %v, want %v", tc.tc, got, tc.want)
			}
		})
	}
}

// fired reports whether ch has a value, and returns it.
func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestClockTimer(t *testing.T) {
	c, base := newTestClock(t, 60)
	tm := c.NewTimer(2 * time.Minute) // two seconds of base time

	base.Step(1999 * time.Millisecond)
	if v, ok := fired(tm.C()); ok {
		t.Fatalf("timer fired early, at %s", v)
	}
	base.Step(time.Millisecond)
	v, ok := fired(tm.C())
	if !ok {
		t.Fatal("timer did not fire after 2 simulated minutes")
	}
	if want := day.Add(2 * time.Minute); !v.Equal(want) {
		t.Errorf("timer delivered %s, want the simulated due time %s", v, want)
	}
	if tm.Stop() {
		t.Error("Stop of a fired timer reported it active")
	}

	// Reset re-arms for a simulated duration from now.
	if tm.Reset(time.Hour) {
		t.Error("Reset of a fired timer reported it active")
	}
	base.Step(59 * time.Second)
	if _, ok := fired(tm.C()); ok {
		t.Fatal("reset timer fired before the simulated hour")
	}
	// Stop before it is due: it never fires, and reports it was active.
	if !tm.Stop() {
		t.Error("Stop of a pending timer reported it inactive")
	}
	base.Step(time.Hour)
	if v, ok := fired(tm.C()); ok {
		t.Errorf("stopped timer fired at %s", v)
	}
}

func TestClockTimerResetDropsStaleValue(t *testing.T) {
	c, base := newTestClock(t, 10)
	tm := c.NewTimer(10 * time.Second)
	base.Step(time.Second) // fires, nobody reads
	tm.Reset(100 * time.Second)
	if v, ok := fired(tm.C()); ok {
		t.Fatalf("received the value of the arming before Reset: %s", v)
	}
	base.Step(10 * time.Second)
	v, ok := fired(tm.C())
	if want := day.Add(110 * time.Second); !ok || !v.Equal(want) {
		t.Errorf("after Reset got %s, %v; want %s", v, ok, want)
	}
}

func TestClockAfterFunc(t *testing.T) {
	c, base := newTestClock(t, 60)
	calls := make(chan struct{}, 2)
	tm := c.AfterFunc(time.Minute, func() { calls <- struct{}{} })
	base.Step(999 * time.Millisecond)
	if len(calls) != 0 {
		t.Fatal("AfterFunc ran early")
	}
	base.Step(time.Millisecond)
	if len(calls) != 1 {
		t.Fatal("AfterFunc did not run after a simulated minute")
	}
	tm.Reset(2 * time.Minute)
	base.Step(1999 * time.Millisecond)
	if len(calls) != 1 {
		t.Fatal("reset AfterFunc ran before two simulated minutes")
	}
	base.Step(time.Millisecond)
	if len(calls) != 2 {
		t.Fatal("reset AfterFunc did not run after two simulated minutes")
	}
}

func TestClockTicker(t *testing.T) {
	c, base := newTestClock(t, 60)
	tk := c.NewTicker(time.Minute)
	defer tk.Stop()
	for i := 1; i <= 3; i++ {
		// Wait for the goroutine to pick up each tick before the next step, so that none is dropped.
		base.Step(time.Second)
		select {
		case v := <-tk.C():
			if want := day.Add(time.Duration(i) * time.Minute); !v.Equal(want) {
				t.Errorf("tick %d at %s, want %s", i, v, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("tick %d not delivered", i)
		}
	}
	base.Step(time.Second) // a tick that nobody reads
	tk.Stop()
	tk.Stop() // a second Stop is harmless
	base.Step(time.Minute)
	if v, ok := fired(tk.C()); ok {
		t.Errorf("stopped ticker delivered %s", v)
	}
}
