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

// Package progress prints the steps of a long operation such as `koordctl up`, one line per step with its
// outcome and how long it took. On a terminal the running step is a live line (spinner, detail, elapsed time)
// that turns into a check mark or a cross when the step ends; elsewhere (a pipe, a file, CI logs) each step
// prints one plain-text line when it ends, with no control characters.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
	"k8s.io/utils/clock"
)

// refresh is how often the live line of a terminal is redrawn.
const refresh = 100 * time.Millisecond

// spinner are the frames of the live line's spinner.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Terminal escape sequences of the live line.
const (
	clearLine = "\r\033[K"
	green     = "\033[32m"
	red       = "\033[31m"
	dim       = "\033[2m"
	reset     = "\033[0m"
)

// IsTerminal reports whether f is a terminal, i.e. whether a Printer on it should draw live lines.
func IsTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// Printer prints steps to a writer. Steps run one at a time: Begin starts one, Update changes its detail, End
// finishes it. It is safe for concurrent use, so a step's Update may come from any goroutine.
type Printer struct {
	w     io.Writer
	tty   bool
	clock clock.WithTicker
	// refresh is how often the live line is redrawn.
	refresh time.Duration

	mu      sync.Mutex
	step    string
	detail  string
	started time.Time
	frame   int
	running bool
	// stop ends the goroutine that redraws the live line; closed by End.
	stop chan struct{}
	// stopped is closed when that goroutine has returned.
	stopped chan struct{}
}

// New returns a Printer writing to w: with live lines when tty is true, plain text otherwise. clk times the
// steps.
func New(w io.Writer, tty bool, clk clock.WithTicker) *Printer {
	return &Printer{w: w, tty: tty, clock: clk, refresh: refresh}
}

// Begin starts a step. A step still running is ended first, as if it had succeeded.
func (p *Printer) Begin(step string) {
	p.End(nil)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step, p.detail, p.started, p.frame, p.running = step, "", p.clock.Now(), 0, true
	if !p.tty {
		return
	}
	p.drawLocked()
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go p.redraw(p.stop, p.stopped)
}

// Update sets the detail shown after the running step's name on a terminal, such as "412/1000 Ready". Plain
// text shows no details: they change too often for a log.
func (p *Printer) Update(detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return
	}
	p.detail = detail
	if p.tty {
		p.drawLocked()
	}
}

// End finishes the running step: a check mark when err is nil, a cross otherwise, and the time it took. The
// error itself is the caller's to print. End without a running step does nothing.
func (p *Printer) End(err error) {
	p.mu.Lock()
	if !p.running {
		p.mu.Unlock()
		return
	}
	p.running = false
	stop, stopped := p.stop, p.stopped
	p.stop, p.stopped = nil, nil
	line := p.endLineLocked(err)
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, line)
}

// Printf writes a line of text between steps (a summary, a hint). It ends a running step first.
func (p *Printer) Printf(format string, args ...any) {
	p.End(nil)
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = fmt.Fprintf(p.w, format, args...)
}

func (p *Printer) endLineLocked(err error) string {
	took := FormatDuration(p.clock.Since(p.started))
	switch {
	case p.tty && err == nil:
		return fmt.Sprintf("%s%s✓%s %s %s(%s)%s\n", clearLine, green, reset, p.step, dim, took, reset)
	case p.tty:
		return fmt.Sprintf("%s%s✗%s %s %s(%s)%s\n", clearLine, red, reset, p.step, dim, took, reset)
	case err == nil:
		return fmt.Sprintf("[ok] %s (%s)\n", p.step, took)
	default:
		return fmt.Sprintf("[failed] %s (%s)\n", p.step, took)
	}
}

// redraw redraws the live line until stop is closed.
func (p *Printer) redraw(stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := p.clock.NewTicker(p.refresh)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C():
			p.mu.Lock()
			if p.running {
				p.frame++
				p.drawLocked()
			}
			p.mu.Unlock()
		}
	}
}

func (p *Printer) drawLocked() {
	line := clearLine + spinner[p.frame%len(spinner)] + " " + p.step
	if p.detail != "" {
		line += ": " + p.detail
	}
	line += " (" + FormatDuration(p.clock.Since(p.started)) + ")"
	_, _ = io.WriteString(p.w, line)
}

// FormatDuration formats d for people: tenths of a second below a minute ("1.2s"), whole seconds above
// ("1m5s").
func FormatDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
