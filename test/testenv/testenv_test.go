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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// The reaper test re-executes this binary as the reaper.
	if isReaper() {
		runReaper()
		return
	}
	os.Exit(m.Run())
}

func TestBinDirNamesTheMakeTarget(t *testing.T) {
	tests := map[string]struct {
		files       []string
		wantErr     bool
		wantMissing []string
	}{
		"both present":      {files: []string{"etcd", "kube-apiserver"}},
		"apiserver missing": {files: []string{"etcd"}, wantErr: true, wantMissing: []string{"kube-apiserver"}},
		"all missing":       {wantErr: true, wantMissing: []string{"etcd", "kube-apiserver"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv(BinDirEnv, dir)
			got, err := BinDir("/src/koord")
			if !tc.wantErr {
				if err != nil || got != dir {
					t.Fatalf("BinDir() = %q, %v; want %q, nil", got, err, dir)
				}
				return
			}
			if err == nil {
				t.Fatalf("BinDir() = %q, nil; want an error", got)
			}
			for _, want := range append([]string{"make bin", dir}, tc.wantMissing...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestBinDirDefaultsToRepoBin(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range requiredBinaries {
		if err := os.WriteFile(filepath.Join(bin, f), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(BinDirEnv, "")
	got, err := BinDir(root)
	if err != nil || got != bin {
		t.Fatalf("BinDir(%q) = %q, %v; want %q, nil", root, got, err, bin)
	}
}

// TestKillProcessesNaming starts a real process whose command line names a marker directory and checks that
// the reaper's kill finds and ends it, and leaves other processes alone.
func TestKillProcessesNaming(t *testing.T) {
	marker := t.TempDir()
	target := blockingProcess(t, marker)
	bystander := blockingProcess(t)
	for _, c := range []*exec.Cmd{target, bystander} {
		if err := c.Start(); err != nil {
			t.Fatalf("start %v: %v", c.Args, err)
		}
	}
	t.Cleanup(func() { _ = bystander.Process.Kill(); _ = bystander.Wait() })
	exited := make(chan error, 1)
	go func() { exited <- target.Wait() }()

	// A busy machine (CI runs packages side by side) can show the new process late in /proc: wait for it.
	want := []int{target.Process.Pid}
	var got []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = processesNaming(marker); slices.Equal(got, want) {
			break
		}
	}
	if !slices.Equal(got, want) {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", target.Process.Pid))
		t.Fatalf("processesNaming() = %v, want %v (its /proc cmdline: %q, %v)", got, want, cmdline, err)
	}
	killProcessesNaming(marker)
	select {
	case err := <-exited:
		t.Logf("the process naming the marker ended: %v", err)
	case <-time.After(30 * time.Second):
		_ = target.Process.Kill()
		t.Fatal("the process naming the marker was not killed")
	}
	if err := syscall.Kill(bystander.Process.Pid, 0); err != nil {
		t.Errorf("a process not naming the marker was killed: %v", err)
	}
}

// TestReaperCleansUpWhenParentGoesAway runs the real reaper (this test binary re-executed) and closes its
// stdin as the death of a test process would: the process naming the directory must end and the directory
// must be gone.
func TestReaperCleansUpWhenParentGoesAway(t *testing.T) {
	// Directly under the temp directory, where the reaper removes directories (t.TempDir nests them).
	dir, err := os.MkdirTemp("", "koord-testenv-test-") //nolint:usetesting // the reaper must remove it, see above
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	server := blockingProcess(t, filepath.Join(dir, "data"))
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	t.Cleanup(func() { _ = server.Process.Kill() })

	extra, err := os.MkdirTemp("", "koord-testenv-test-extra-") //nolint:usetesting // the reaper must remove it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(extra) })
	outside := t.TempDir() // not directly under the temp directory: the reaper must refuse it

	r, err := startReaper(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{extra, outside} {
		if err := r.alsoRemove(d); err != nil {
			t.Fatal(err)
		}
	}
	r.cleanUpNow()
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("reaper exited with %d", code)
	}
	select {
	case err := <-exited:
		t.Logf("the process naming the directory ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the reaper did not kill the process naming its directory")
	}
	for _, d := range []string{dir, extra} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the reaper left %s behind (stat: %v)", d, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the reaper removed %s, which is not directly under the temp directory: %v", outside, err)
	}
}

// blockingProcess returns a command that blocks until killed (cat reading a pipe nobody writes to) and has
// args on its command line.
func blockingProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	cmd := exec.Command("cat", append([]string{"-"}, args...)...)
	cmd.Stdin = r
	return cmd
}
