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
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/utils/clock"
)

// stopGrace is how long a process gets to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// tailLines is how many lines of its log are shown when a process fails.
const tailLines = 20

// process is a component running as a child process in a process group of its own (so a Ctrl-C at the
// terminal reaches koordctl only, which then stops the components in order), with its output in a log file.
// If koordctl dies, the kernel sends the child SIGTERM (Pdeathsig).
type process struct {
	name    string
	path    string
	args    []string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	// ready are the checks that tell the process is ready, as its start waited for them.
	ready []probe
	// replica marks a replica of a component that elects a leader: when it exits on its own, the cluster starts
	// it again instead of failing, as its Deployment would.
	replica bool
	// crashes counts the exits in a row of the replica's earlier processes soon after their start.
	crashes int
	// started is when the process started, by the cluster's clock (set by the cluster); logStart is the size
	// its log had then, where its own lines begin.
	started  time.Time
	logStart int64
	// killed is set before the process is killed on purpose (Cluster.Restart), so that its exit does not fail
	// the cluster.
	killed atomic.Bool
	// done is closed when the process has exited; waitErr is then why.
	done    chan struct{}
	waitErr error
}

// startProcess starts path with args, its output written to logPath (appended to it with appendLog, as when a
// component is restarted, else replacing what was there).
func startProcess(name, path string, args []string, logPath string, appendLog bool) (*process, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	var logStart int64
	if appendLog {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		if info, err := os.Stat(logPath); err == nil {
			logStart = info.Size()
		}
	}
	logFile, err := os.OpenFile(logPath, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{
		name: name, path: path, args: args, cmd: cmd, logPath: logPath, logFile: logFile,
		logStart: logStart, done: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes how an exited process ended, with the end of its log.
func (p *process) exitError() error {
	how := "exited"
	if p.waitErr != nil {
		how = p.waitErr.Error()
	}
	return fmt.Errorf("%s stopped unexpectedly (%s); last lines of %s:\n%s", p.name, how, p.logPath, tail(p.logPath, tailLines))
}

// stop sends SIGTERM to the process group, waits up to grace for the process to exit, then kills the group.
// It returns an error when the process had to be killed.
func (p *process) stop(clk clock.Clock, grace time.Duration) error {
	if p.exited() {
		return nil
	}
	pgid := p.pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		// Whatever the leader left behind in its group goes with it.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return nil
	case <-clk.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s did not exit within %s of SIGTERM and was killed", p.name, grace)
}

// kill kills the process group at once (SIGKILL, as a crash or the OOM killer would) and waits until the
// process has exited.
func (p *process) kill() {
	p.killed.Store(true)
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.done
}

// logContains reports whether the process's own lines of its log (those since it started) contain s.
func (p *process) logContains(s string) (bool, error) {
	f, err := os.Open(p.logPath)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(p.logStart, io.SeekStart); err != nil {
		return false, err
	}
	// Read in windows that overlap by len(s), so that a match across two windows is found.
	buf := make([]byte, 1<<20)
	keep := 0
	for {
		n, err := io.ReadFull(f, buf[keep:])
		if bytes.Contains(buf[:keep+n], []byte(s)) {
			return true, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return false, nil
			}
			return false, err
		}
		keep = min(len(s), keep+n)
		copy(buf, buf[len(buf)-keep:])
	}
}

// tail returns the last n lines of the file at path, or a note saying why it cannot.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	defer func() { _ = f.Close() }()
	const window = 64 << 10
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	off := max(info.Size()-window, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, off, info.Size()-off))
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "(log is empty)"
	}
	return "  " + strings.Join(lines, "\n  ")
}

// processesNaming returns the ids of the processes whose command line contains marker, other than this one.
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
			continue // gone, or a zombie
		}
		if bytes.Contains(cmdline, []byte(marker)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killProcessesNaming stops the processes whose command line contains marker: SIGTERM, up to grace to exit,
// then SIGKILL. It returns the ids it found.
func killProcessesNaming(clk clock.Clock, marker string, grace time.Duration) []int {
	found := processesNaming(marker)
	for _, pid := range found {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := clk.Now().Add(grace)
	left := found
	for len(left) > 0 && clk.Now().Before(deadline) {
		clk.Sleep(100 * time.Millisecond)
		left = processesNaming(marker)
	}
	for _, pid := range left {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return found
}
