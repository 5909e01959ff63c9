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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/utils/clock"
)

// Names in the state directory.
const (
	// PIDFile holds the id of the process that runs the cluster. That process holds an exclusive flock on it
	// while the cluster runs, so a pid file that can be locked is stale.
	PIDFile = "koordctl.pid"
	// KubeconfigFile is the administrator kubeconfig the components use.
	KubeconfigFile = "kubeconfig"
	// LogDir holds one log per process: etcd, kube-apiserver, koord-manager, koord-scheduler, kwok.
	LogDir = "logs"
	// RunDir holds the running cluster's data (etcd, certificates, generated configurations); every process of
	// the cluster names it on its command line, which is how a crashed run's leftovers are found.
	RunDir = "run"
	// stateFile in RunDir records what Stop must remove outside the state directory.
	stateFile = "state.json"
)

// AlreadyRunningError says that a cluster already runs from a state directory.
type AlreadyRunningError struct {
	// StateDir is the state directory.
	StateDir string
	// PID is the process that runs it.
	PID int
}

// Error says how to stop the running cluster or run another one.
func (e *AlreadyRunningError) Error() string {
	return fmt.Sprintf("a cluster already runs from %s (pid %d): stop it with `koordctl down --state-dir=%s`, or use another --state-dir",
		e.StateDir, e.PID, e.StateDir)
}

// runState is what the running cluster records in RunDir for a later koordctl down to clean up after a crash.
type runState struct {
	// PID is the process that runs the cluster.
	PID int `json:"pid"`
	// KubeconfigOut is the copy of the kubeconfig given to the user, removed with the cluster when it still
	// holds what the cluster wrote.
	KubeconfigOut string `json:"kubeconfigOut,omitempty"`
}

// stateLock is the held pid file of a state directory.
type stateLock struct {
	f *os.File
}

// lockState takes the pid file of stateDir and writes this process's id into it. It returns an
// *AlreadyRunningError when another process holds it.
func lockState(stateDir string) (*stateLock, error) {
	path := filepath.Join(stateDir, PIDFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open pid file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := readPID(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &AlreadyRunningError{StateDir: stateDir, PID: pid}
		}
		return nil, fmt.Errorf("lock pid file %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("write pid file: %w", err)
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("write pid file: %w", err)
	}
	return &stateLock{f: f}, nil
}

// release removes the pid file, then lets go of it: a koordctl down waiting for the lock finds the cluster
// fully stopped.
func (l *stateLock) release() error {
	err := os.Remove(l.f.Name())
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove pid file: %w", err)
	}
	return nil
}

func readPID(f *os.File) (int, error) {
	buf := make([]byte, 32)
	n, err := f.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(buf[:n])))
}

// writeRunState records s in runDir.
func writeRunState(runDir string, s runState) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode run state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(runDir, stateFile), data, 0o600); err != nil {
		return fmt.Errorf("write run state: %w", err)
	}
	return nil
}

// cleanUpLeftovers stops the processes a crashed run left behind (every command line naming runDir) and
// removes runDir, the state directory's kubeconfig and the user's copy the run state names. It returns the ids
// of the processes it stopped.
func cleanUpLeftovers(clk clock.Clock, stateDir string) ([]int, error) {
	runDir := filepath.Join(stateDir, RunDir)
	var s runState
	if data, err := os.ReadFile(filepath.Join(runDir, stateFile)); err == nil {
		_ = json.Unmarshal(data, &s)
	}
	pids := killProcessesNaming(clk, runDir+string(filepath.Separator), stopGrace)
	var errs []error
	if err := os.RemoveAll(runDir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", runDir, err))
	}
	kubeconfig := filepath.Join(stateDir, KubeconfigFile)
	if s.KubeconfigOut != "" {
		if err := removeIfSame(s.KubeconfigOut, kubeconfig); err != nil {
			errs = append(errs, err)
		}
	}
	for _, f := range []string{kubeconfig, filepath.Join(stateDir, SampleBEPodFile)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", f, err))
		}
	}
	return pids, errors.Join(errs...)
}

// removeIfSame removes path when its content is that of the file at reference: a kubeconfig the user has
// since replaced is left alone.
func removeIfSame(path, reference string) error {
	want, err := os.ReadFile(reference)
	if err != nil {
		return nil // nothing to compare with: leave path alone
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		return nil
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// DownResult says what Down did.
type DownResult struct {
	// PID is the process that ran the cluster; 0 when none was running.
	PID int
	// Killed is true when that process did not stop within the timeout and was killed.
	Killed bool
	// Leftovers are the processes of a crashed run that Down stopped itself.
	Leftovers []int
}

// Down stops the cluster that runs from stateDir: it sends SIGTERM to the process that runs it (found through
// the pid file), which stops every component in order and removes what it started, and waits for it to
// finish. If that process is not done within timeout it is killed and Down removes what it left. If the
// cluster's process is gone (killed, crashed), Down stops the processes it left behind and removes its data.
// With clean, the logs go too. Nothing running is not an error: the result then has PID 0.
func Down(ctx context.Context, clk clock.Clock, stateDir string, timeout time.Duration, clean bool) (DownResult, error) {
	stateDir, err := filepath.Abs(stateDir)
	if err != nil {
		return DownResult{}, fmt.Errorf("state directory: %w", err)
	}
	var res DownResult
	lock, err := lockState(stateDir)
	var running *AlreadyRunningError
	switch {
	case errors.As(err, &running):
		res.PID = running.PID
		if res.PID <= 0 {
			return res, fmt.Errorf("a cluster runs from %s but its pid file has no process id", stateDir)
		}
		if err := syscall.Kill(res.PID, syscall.SIGTERM); err != nil {
			return res, fmt.Errorf("signal pid %d: %w", res.PID, err)
		}
		lock, err = waitForLock(ctx, clk, stateDir, timeout)
		if err != nil {
			if !errors.Is(err, errStillLocked) {
				return res, err
			}
			_ = syscall.Kill(res.PID, syscall.SIGKILL)
			res.Killed = true
			if lock, err = waitForLock(ctx, clk, stateDir, stopGrace); err != nil {
				return res, fmt.Errorf("pid %d still holds %s after SIGKILL: %w", res.PID, filepath.Join(stateDir, PIDFile), err)
			}
		}
	case errors.Is(err, fs.ErrNotExist):
		// No state directory: nothing ran here.
		return res, nil
	case err != nil:
		return res, err
	}
	// Here we hold the lock: the cluster's process is gone. Whatever it left is ours to clean.
	pids, cerr := cleanUpLeftovers(clk, stateDir)
	res.Leftovers = pids
	errs := []error{cerr, lock.release()}
	if clean {
		errs = append(errs, removeLogs(stateDir))
	}
	return res, errors.Join(errs...)
}

// errStillLocked says the pid file is still held when the wait ends.
var errStillLocked = errors.New("still locked")

// waitForLock polls the pid file of stateDir until it can be locked or timeout passes.
func waitForLock(ctx context.Context, clk clock.Clock, stateDir string, timeout time.Duration) (*stateLock, error) {
	deadline := clk.Now().Add(timeout)
	for {
		lock, err := lockState(stateDir)
		var running *AlreadyRunningError
		if !errors.As(err, &running) {
			return lock, err
		}
		if !clk.Now().Before(deadline) {
			return nil, fmt.Errorf("pid %d did not stop within %s: %w", running.PID, timeout, errStillLocked)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-clk.After(200 * time.Millisecond):
		}
	}
}

// removeLogs removes the log directory of stateDir, then stateDir itself when it is empty.
func removeLogs(stateDir string) error {
	if err := os.RemoveAll(filepath.Join(stateDir, LogDir)); err != nil {
		return fmt.Errorf("remove logs: %w", err)
	}
	if err := os.Remove(stateDir); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
		return fmt.Errorf("remove state directory: %w", err)
	}
	return nil
}
