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

package koordlet_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// userHZ is the unit of the CPU times in /proc (USER_HZ, what getconf CLK_TCK prints): 100 on Linux.
const userHZ = 100

// startBurner starts the test binary as a burner of threads busy threads (see burn) and registers its kill
// with t.Cleanup. The burner dies with the test process (Pdeathsig, and its own parent check).
func startBurner(t *testing.T, threads int) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), burnEnv+"="+strconv.Itoa(threads))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a burner: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// processCPUTicks returns utime+stime of process pid, summed over its threads, in USER_HZ ticks, from
// /proc/<pid>/stat.
func processCPUTicks(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces; fields are counted after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	utime, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat utime: %w", pid, err)
	}
	stime, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat stime: %w", pid, err)
	}
	return utime + stime, nil
}

// nodeIdleTicks returns the idle and iowait time of all CPUs, in USER_HZ ticks, from /proc/stat.
func nodeIdleTicks() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(line))
	if len(f) < 6 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	idle, err := strconv.ParseUint(f[4], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/stat idle: %w", err)
	}
	iowait, err := strconv.ParseUint(f[5], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/stat iowait: %w", err)
	}
	return idle + iowait, nil
}

// tickSample is one reading of a cumulative tick counter.
type tickSample struct {
	at    time.Time
	ticks uint64
}

// tracer reads cumulative CPU tick counters every period, so that the CPU used between any two instants can
// be interpolated afterwards.
type tracer struct {
	mu     sync.Mutex
	series map[string][]tickSample
}

// startTracer samples every source every period until the test ends.
func startTracer(t *testing.T, period time.Duration, sources map[string]func() (uint64, error)) *tracer {
	tr := &tracer{series: map[string][]tickSample{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	sample := func() {
		for name, read := range sources {
			at := time.Now()
			v, err := read()
			if err != nil {
				continue // a process that just exited: the gap is interpolated over
			}
			tr.mu.Lock()
			tr.series[name] = append(tr.series[name], tickSample{at: at, ticks: v})
			tr.mu.Unlock()
		}
	}
	sample()
	wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sample()
			}
		}
	})
	return tr
}

// ticksAt interpolates the counter name linearly at instant at.
func (tr *tracer) ticksAt(name string, at time.Time) (float64, error) {
	tr.mu.Lock()
	s := tr.series[name]
	tr.mu.Unlock()
	i := sort.Search(len(s), func(i int) bool { return !s[i].at.Before(at) })
	switch {
	case i == len(s):
		return 0, fmt.Errorf("%s: no sample at or after %s yet", name, at.Format(time.StampMilli))
	case s[i].at.Equal(at):
		return float64(s[i].ticks), nil
	case i == 0:
		return 0, fmt.Errorf("%s: no sample before %s", name, at.Format(time.StampMilli))
	}
	a, b := s[i-1], s[i]
	frac := float64(at.Sub(a.at)) / float64(b.at.Sub(a.at))
	return float64(a.ticks) + frac*(float64(b.ticks)-float64(a.ticks)), nil
}

// cores returns the CPU, in cores, counted by name between from and to.
func (tr *tracer) cores(name string, from, to time.Time) (float64, error) {
	a, err := tr.ticksAt(name, from)
	if err != nil {
		return 0, err
	}
	b, err := tr.ticksAt(name, to)
	if err != nil {
		return 0, err
	}
	return (b - a) / userHZ / to.Sub(from).Seconds(), nil
}

// waitPast waits until every series has a sample after at, or the deadline passes.
func (tr *tracer) waitPast(at time.Time, names ...string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := true
		tr.mu.Lock()
		for _, n := range names {
			if s := tr.series[n]; len(s) == 0 || !s[len(s)-1].at.After(at) {
				done = false
			}
		}
		tr.mu.Unlock()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no sample of %v after %s within 30s", names, at.Format(time.StampMilli))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
