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

package progress

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// syncBuffer is a bytes.Buffer safe for the printer's redraw goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// run drives a printer through two steps, one failing, and a line of text in between.
func run(p *Printer, clk *clocktesting.FakeClock) {
	p.Begin("Control plane")
	clk.Step(1200 * time.Millisecond)
	p.End(nil)
	p.Begin("Nodes")
	p.Update("3/10 Ready")
	clk.Step(65 * time.Second)
	p.Update("10/10 Ready")
	p.End(errors.New("boom"))
	p.Printf("done %d\n", 2)
}

func TestPlain(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	var out syncBuffer
	run(New(&out, false, clk), clk)
	want := "[ok] Control plane (1.2s)\n[failed] Nodes (1m5s)\ndone 2\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want,+got):\n%s", diff)
	}
}

func TestTerminal(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	var out syncBuffer
	p := New(&out, true, clk)
	// No redraws from the ticker: the steps of the fake clock would make them race with the lines under test.
	p.refresh = 1000 * time.Hour
	run(p, clk)
	want := []string{
		"",
		"⠋ Control plane (0s)",
		green + "✓" + reset + " Control plane " + dim + "(1.2s)" + reset + "\n",
		"⠋ Nodes (0s)",
		"⠋ Nodes: 3/10 Ready (0s)",
		"⠋ Nodes: 10/10 Ready (1m5s)",
		red + "✗" + reset + " Nodes " + dim + "(1m5s)" + reset + "\ndone 2\n",
	}
	if diff := cmp.Diff(want, strings.Split(out.String(), clearLine)); diff != "" {
		t.Errorf("output (-want,+got):\n%s", diff)
	}
}

func TestTerminalRedraws(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	var out syncBuffer
	p := New(&out, true, clk)
	p.Begin("Nodes")
	// A tick redraws the line with the next spinner frame and the elapsed time.
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(refresh)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "⠙ Nodes (100ms)") {
		if time.Now().After(deadline) {
			t.Fatalf("no redraw after a tick; output %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	p.End(nil)
	if !strings.HasSuffix(out.String(), "✓"+reset+" Nodes "+dim+"(100ms)"+reset+"\n") {
		t.Errorf("output %q does not end with the finished step", out.String())
	}
}

func TestEndWithoutStep(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	var out syncBuffer
	p := New(&out, true, clk)
	p.End(nil)
	p.Update("nothing runs")
	if got := out.String(); got != "" {
		t.Errorf("output = %q, want nothing", got)
	}
}

func TestFormatDuration(t *testing.T) {
	for name, tc := range map[string]struct {
		d    time.Duration
		want string
	}{
		"zero":          {0, "0s"},
		"tenths":        {1234 * time.Millisecond, "1.2s"},
		"below minute":  {59940 * time.Millisecond, "59.9s"},
		"whole seconds": {125400 * time.Millisecond, "2m5s"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := FormatDuration(tc.d); got != tc.want {
				t.Errorf("FormatDuration(%s) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}
