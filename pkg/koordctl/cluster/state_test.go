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

package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
)

// Environment of the helper process that stands in for a running `koordctl up`: it holds the pid file of
// the state directory in holderDirEnv; with holderModeEnv=ignore it ignores SIGTERM.
const (
	holderDirEnv  = "KOORDCTL_TEST_HOLDER_DIR"
	holderModeEnv = "KOORDCTL_TEST_HOLDER_MODE"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(holderDirEnv); dir != "" {
		os.Exit(runHolder(dir, os.Getenv(holderModeEnv)))
	}
	os.Exit(m.Run())
}

// runHolder takes the pid file of dir, says "locked" on stdout, and on SIGTERM releases it and exits (or, in
// mode ignore, waits to be killed).
func runHolder(dir, mode string) int {
	terms := make(chan os.Signal, 1)
	if mode == "ignore" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(terms, syscall.SIGTERM)
	}
	lock, err := lockState(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	if mode == "ignore" {
		select {}
	}
	<-terms
	if err := lock.release(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startHolder runs the helper on stateDir and waits until it holds the pid file.
func startHolder(t *testing.T, stateDir, mode string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), holderDirEnv+"="+stateDir, holderModeEnv+"="+mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v; want locked", line, err)
	}
	return cmd
}

// startLeftover starts a process whose command line names the run directory, as a component of a crashed
// run would.
func startLeftover(t *testing.T, runDir string) *exec.Cmd {
	t.Helper()
	log := filepath.Join(runDir, "component.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("tail", "-f", log)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a leftover process: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestLockState(t *testing.T) {
	dir := t.TempDir()
	holder := startHolder(t, dir, "stop")
	_, err := lockState(dir)
	var running *AlreadyRunningError
	if !errors.As(err, &running) {
		t.Fatalf("lockState() = %v, want an *AlreadyRunningError", err)
	}
	if diff := cmp.Diff(&AlreadyRunningError{StateDir: dir, PID: holder.Process.Pid}, running); diff != "" {
		t.Errorf("error (-want,+got):\n%s", diff)
	}
	wantMsg := fmt.Sprintf("a cluster already runs from %s (pid %d): stop it with `koordctl down --state-dir=%s`, or use another --state-dir",
		dir, holder.Process.Pid, dir)
	if diff := cmp.Diff(wantMsg, err.Error()); diff != "" {
		t.Errorf("message (-want,+got):\n%s", diff)
	}
}

func TestDown(t *testing.T) {
	for name, tc := range map[string]struct {
		// holder is the mode of the helper holding the pid file; empty for none (a crashed run).
		holder       string
		leftover     bool
		timeout      time.Duration
		clean        bool
		wantKilled   bool
		wantLogsKept bool
	}{
		"nothing running":                 {wantLogsKept: true, timeout: time.Minute},
		"crashed run with a leftover":     {leftover: true, wantLogsKept: true, timeout: time.Minute},
		"running, stops on SIGTERM":       {holder: "stop", leftover: true, wantLogsKept: true, timeout: time.Minute},
		"running, ignores SIGTERM":        {holder: "ignore", wantKilled: true, wantLogsKept: true, timeout: time.Second},
		"running, stops, logs cleaned up": {holder: "stop", clean: true, timeout: time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			stateDir := filepath.Join(t.TempDir(), "state")
			runDir := filepath.Join(stateDir, RunDir)
			for _, d := range []string{runDir, filepath.Join(stateDir, LogDir)} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			kubeconfigOut := filepath.Join(t.TempDir(), "koord.kubeconfig")
			for _, f := range []string{filepath.Join(stateDir, KubeconfigFile), kubeconfigOut} {
				if err := os.WriteFile(f, []byte("kubeconfig"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := writeRunState(runDir, runState{PID: 1, KubeconfigOut: kubeconfigOut}); err != nil {
				t.Fatal(err)
			}
			var wantLeftovers []int
			if tc.leftover {
				wantLeftovers = []int{startLeftover(t, runDir).Process.Pid}
			}
			wantPID := 0
			if tc.holder != "" {
				wantPID = startHolder(t, stateDir, tc.holder).Process.Pid
			}

			res, err := Down(ctx, clock.RealClock{}, stateDir, tc.timeout, tc.clean)
			if err != nil {
				t.Fatalf("Down() = %v", err)
			}
			if diff := cmp.Diff(DownResult{PID: wantPID, Killed: tc.wantKilled, Leftovers: wantLeftovers}, res); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			for _, gone := range []string{runDir, filepath.Join(stateDir, KubeconfigFile), filepath.Join(stateDir, PIDFile), kubeconfigOut} {
				if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is still there (%v)", gone, err)
				}
			}
			if _, err := os.Stat(filepath.Join(stateDir, LogDir)); (err == nil) != tc.wantLogsKept {
				t.Errorf("logs kept: %v, want %v", err == nil, tc.wantLogsKept)
			}
			if left := processesNaming(runDir + "/"); len(left) > 0 {
				t.Errorf("processes naming the run directory are left: %v", left)
			}
		})
	}
}

func TestDownWithoutStateDir(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	res, err := Down(ctx, clock.RealClock{}, filepath.Join(t.TempDir(), "never"), time.Minute, false)
	if err != nil || res.PID != 0 || len(res.Leftovers) != 0 {
		t.Errorf("Down() = %+v, %v; want nothing done", res, err)
	}
}

func TestRemoveIfSame(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	same := filepath.Join(dir, "same")
	replaced := filepath.Join(dir, "replaced")
	for f, data := range map[string]string{ref: "a", same: "a", replaced: "the user's own"} {
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{same, replaced, filepath.Join(dir, "missing")} {
		if err := removeIfSame(f, ref); err != nil {
			t.Errorf("removeIfSame(%s) = %v", f, err)
		}
	}
	if _, err := os.Stat(same); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("identical copy not removed: %v", err)
	}
	if data, err := os.ReadFile(replaced); err != nil || !strings.Contains(string(data), "own") {
		t.Errorf("replaced file = %q, %v; want it kept", data, err)
	}
}
