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

package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// reaperDirEnv tells a re-executed test binary to act as the reaper of the control plane under that directory.
const reaperDirEnv = "KOORD_TESTENV_REAPER_DIR"

// reaperKeepEnv tells the reaper to kill the processes but keep the directory (a local cluster keeps its logs
// when something failed).
const reaperKeepEnv = "KOORD_TESTENV_REAPER_KEEP"

// reaper is a child process that outlives a crashed test binary: it waits for its stdin to close (which
// happens when the test process exits for any reason), then kills every process whose command line names
// the control-plane directory and removes the directory, plus any directory the parent named on stdin (one
// absolute path a line) for the parts envtest places elsewhere.
type reaper struct {
	dir   string
	stdin io.WriteCloser
	cmd   *exec.Cmd
}

func startReaper(dir string) (*reaper, error) {
	return newReaper(dir, false)
}

// Reaper kills, when the test process exits for any reason (a panic, a timeout's SIGKILL), every process whose
// command line names a directory: what a test started and could not stop itself. Stop it when the processes
// were stopped as they should.
type Reaper struct{ r *reaper }

// ReapProcesses starts a Reaper of the processes naming dir, which must be directly under the temp directory;
// the directory itself is kept. The TestMain of the package must call RunReaperIfAsked first.
func ReapProcesses(dir string) (*Reaper, error) {
	r, err := newReaper(dir, true)
	if err != nil {
		return nil, err
	}
	return &Reaper{r: r}, nil
}

// Stop makes the reaper kill what is left now and waits for it.
func (r *Reaper) Stop() { r.r.cleanUpNow() }

// RunReaperIfAsked runs the reaper and exits when this test binary was started as one (by ReapProcesses); call
// it first in TestMain.
func RunReaperIfAsked() {
	if isReaper() {
		runReaper()
	}
}

func newReaper(dir string, keepDir bool) (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperDirEnv+"="+dir)
	if keepDir {
		cmd.Env = append(cmd.Env, reaperKeepEnv+"=1")
	}
	// Its own process group: a Ctrl-C to the test must not kill the reaper before it has cleaned up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	return &reaper{dir: dir, stdin: stdin, cmd: cmd}, nil
}

// alsoRemove tells the reaper to remove dir as well. Only directories directly under the temp directory are
// accepted.
func (r *reaper) alsoRemove(dir string) error {
	if _, err := fmt.Fprintln(r.stdin, dir); err != nil {
		return fmt.Errorf("tell reaper about %s: %w", dir, err)
	}
	return nil
}

// cleanUpNow makes the reaper clean up and waits for it.
func (r *reaper) cleanUpNow() {
	_ = r.stdin.Close()
	_ = r.cmd.Wait()
}

func isReaper() bool { return os.Getenv(reaperDirEnv) != "" }

// runReaper is the reaper's main: block until the parent closes stdin, then clean up.
func runReaper() {
	dir := os.Getenv(reaperDirEnv)
	if !isDirectlyUnderTemp(dir) {
		fmt.Fprintf(os.Stderr, "testenv reaper: refusing to clean up %q: not a directory directly under %s\n", dir, os.TempDir())
		os.Exit(2)
	}
	dirs := []string{dir}
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		if extra := lines.Text(); isDirectlyUnderTemp(extra) {
			dirs = append(dirs, extra)
		}
	}
	killProcessesNaming(dir)
	if os.Getenv(reaperKeepEnv) != "" {
		os.Exit(0)
	}
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			fmt.Fprintf(os.Stderr, "testenv reaper: %v\n", err)
		}
	}
	os.Exit(0)
}

// isDirectlyUnderTemp guards the reaper's RemoveAll: it only ever removes a directory directly under the
// temp directory.
func isDirectlyUnderTemp(dir string) bool {
	return filepath.IsAbs(dir) && filepath.Dir(dir) == filepath.Clean(os.TempDir()) && filepath.Base(dir) != ".."
}

// killProcessesNaming sends SIGTERM to every process whose command line contains marker, waits up to ten
// seconds for them to exit, then sends SIGKILL to those left.
func killProcessesNaming(marker string) {
	pids := processesNaming(marker)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(pids) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		pids = processesNaming(marker)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func processesNaming(marker string) []int {
	// On an error, ReadDir still returns the entries it read before it: look at those.
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a zombie whose parent will reap it
		}
		if bytes.Contains(cmdline, []byte(marker)) {
			pids = append(pids, pid)
		}
	}
	return pids
}
