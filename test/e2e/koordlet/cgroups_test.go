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
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

const (
	// cgroupRoot is where the real cgroup tree is mounted.
	cgroupRoot = "/sys/fs/cgroup"
	// dirPrefix names the test-only parents: koord-e2e-<pid of the test process>-<random>.
	dirPrefix = "koord-e2e-"
)

// controllers are the cgroup v1 hierarchies koordlet uses, mounted at <cgroupRoot>/<controller>.
var controllers = []string{"cpu", "cpuacct", "cpuset", "memory"}

// requireWritableCgroupV1 skips the test unless it runs as root on a writable cgroup v1 tree.
func requireWritableCgroupV1(t *testing.T) {
	t.Helper()
	if uid := os.Geteuid(); uid != 0 {
		t.Skipf("creating cgroups needs root; running as uid %d", uid)
	}
	if v, err := cgroup.DetectVersion(cgroupRoot); err != nil || v != cgroup.V1 {
		t.Skipf("this test builds a cgroup v1 hierarchy; %s is %v (%v)", cgroupRoot, v, err)
	}
	for _, c := range controllers {
		p := filepath.Join(cgroupRoot, c)
		if err := syscall.Access(p, 2 /* W_OK */); err != nil {
			t.Skipf("needs a writable cgroup v1 hierarchy; %s: %v", p, err)
		}
	}
}

// hierarchy is a kubelet-style cgroup tree under a test-only parent in the real cgroup v1 tree.
type hierarchy struct {
	t      *testing.T
	layout cgroup.Layout
	// home is, per controller, the absolute path of the test process's own cgroup: where tasks left in the
	// test's directories are moved before they are removed (the controller root on a plain host).
	home map[string]string
}

// newHierarchy creates /koord-e2e-<pid>-<random>/kubepods/{burstable,besteffort} in every controller and
// registers its removal (see remove) with t.Cleanup before creating anything.
func newHierarchy(t *testing.T) *hierarchy {
	t.Helper()
	home, err := ownCgroups()
	if err != nil {
		t.Fatal(err)
	}
	parent := fmt.Sprintf("/%s%d-%016x", dirPrefix, os.Getpid(), rand.Uint64())
	h := &hierarchy{
		t:      t,
		layout: cgroup.Layout{Root: cgroupRoot, Version: cgroup.V1, Driver: cgroup.Cgroupfs, Parent: parent},
		home:   home,
	}
	t.Cleanup(h.remove)
	h.mkdir(parent)
	h.mkdir(h.layout.KubepodsDir())
	for _, dir := range []string{h.layout.QoSDir(corev1.PodQOSBurstable), h.layout.QoSDir(corev1.PodQOSBestEffort)} {
		h.mkdir(dir)
	}
	return h
}

// mkdir creates dir (whose parent must exist) in every controller. Where cpu and cpuacct are mounted together
// (/sys/fs/cgroup/cpu,cpuacct with cpu and cpuacct links to it) the second mkdir finds the directory the first
// made. A new v1 cpuset has no CPUs and no memory nodes, and no task can join it until it has both: it gets
// its parent's, as kubelet's cgroups do.
func (h *hierarchy) mkdir(dir string) {
	h.t.Helper()
	for _, p := range h.layout.ControllerDirs(dir) {
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			h.t.Fatalf("create cgroup: %v", err)
		}
	}
	for _, knob := range []string{"cpuset.cpus", "cpuset.mems"} {
		v, err := os.ReadFile(h.layout.KnobPath(filepath.Dir(dir), knob))
		if err != nil {
			h.t.Fatalf("read the parent's %s: %v", knob, err)
		}
		h.write(dir, knob, strings.TrimSpace(string(v)))
	}
}

// write writes value to the file knob of dir.
func (h *hierarchy) write(dir, knob, value string) {
	h.t.Helper()
	if err := os.WriteFile(h.layout.KnobPath(dir, knob), []byte(value), 0); err != nil {
		h.t.Fatalf("write %s: %v", knob, err)
	}
}

// read returns the file knob of dir without surrounding white space.
func (h *hierarchy) read(dir, knob string) (string, error) {
	b, err := os.ReadFile(h.layout.KnobPath(dir, knob))
	return strings.TrimSpace(string(b)), err
}

// readInt reads a knob holding one integer.
func (h *hierarchy) readInt(dir, knob string) (int64, error) {
	s, err := h.read(dir, knob)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", knob, dir, err)
	}
	return v, nil
}

// statField reads the value of key in a key/value knob such as cpu.stat.
func (h *hierarchy) statField(dir, knob, key string) (int64, error) {
	s, err := h.read(dir, knob)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(s, "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("%s of %s has no %s", knob, dir, key)
}

// attach moves process pid into dir in every controller.
func (h *hierarchy) attach(dir string, pid int) {
	h.t.Helper()
	for _, p := range h.layout.ControllerDirs(dir) {
		if err := os.WriteFile(filepath.Join(p, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			h.t.Fatalf("attach process %d to %s: %v", pid, p, err)
		}
	}
}

// remove removes the test's directories from every controller, leaves first, after moving any task still in
// them to the test process's own cgroup. The processes the test started are killed by their own cleanup,
// which runs before this one.
func (h *hierarchy) remove() {
	for _, c := range controllers {
		top := filepath.Join(h.layout.Root, c, h.layout.Parent)
		if err := removeTree(top, h.home[c]); err != nil {
			h.t.Errorf("remove the test cgroups: %v", err)
		}
	}
}

// removeTree removes the cgroup directory top and everything under it, leaves first. Tasks found in them are
// moved to the cgroup directory moveTo; with moveTo empty, a tree holding any task is left alone and reported.
// A missing top is not an error.
func removeTree(top, moveTo string) error {
	var dirs []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", top, err)
	}
	// A pre-order walk reversed visits every child before its parent.
	slices.Reverse(dirs)
	if moveTo == "" {
		for _, d := range dirs {
			if pids, err := tasks(d); err != nil || len(pids) > 0 {
				return fmt.Errorf("%s still has tasks %v (%w): leaving the tree", d, pids, err)
			}
		}
	}
	var errs []error
	for _, d := range dirs {
		errs = append(errs, rmdir(d, moveTo))
	}
	return errors.Join(errs...)
}

// rmdir removes one cgroup directory after moving its tasks to moveTo. Exiting tasks leave a cgroup a little
// after they are reaped, so EBUSY is retried for a few seconds.
func rmdir(dir, moveTo string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if moveTo != "" {
			pids, _ := tasks(dir)
			for _, pid := range pids {
				err := os.WriteFile(filepath.Join(moveTo, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
				if err != nil && !errors.Is(err, syscall.ESRCH) {
					return fmt.Errorf("move task %d out of %s: %w", pid, dir, err)
				}
			}
		}
		err := syscall.Rmdir(dir)
		switch {
		case err == nil, errors.Is(err, syscall.ENOENT):
			return nil
		case errors.Is(err, syscall.EBUSY) && time.Now().Before(deadline):
			time.Sleep(50 * time.Millisecond)
		default:
			return fmt.Errorf("remove %s: %w", dir, err)
		}
	}
}

// tasks returns the processes in the cgroup directory dir.
func tasks(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for f := range strings.FieldsSeq(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s/cgroup.procs: %w", dir, err)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// ownCgroups returns, per controller, the absolute path of the calling process's cgroup, from
// /proc/self/cgroup.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read own cgroups: %w", err)
	}
	out := map[string]string{}
	lines := bufio.NewScanner(bytes.NewReader(b))
	for lines.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(lines.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			if slices.Contains(controllers, c) {
				out[c] = filepath.Join(cgroupRoot, c, parts[2])
			}
		}
	}
	for _, c := range controllers {
		if out[c] == "" {
			return nil, fmt.Errorf("/proc/self/cgroup names no %s cgroup", c)
		}
	}
	return out, nil
}

// sweepStaleCgroups removes the test-only parents of earlier runs whose test process is gone, when no task is
// left in them. It reports on stderr: TestMain has no test to log to.
func sweepStaleCgroups() {
	for _, c := range controllers {
		matches, err := filepath.Glob(filepath.Join(cgroupRoot, c, dirPrefix+"*"))
		if err != nil {
			continue
		}
		for _, dir := range matches {
			if ownerAlive(filepath.Base(dir)) {
				continue
			}
			if err := removeTree(dir, ""); err != nil {
				fmt.Fprintf(os.Stderr, "koordlet e2e: left a stale cgroup of an earlier run: %v\n", err)
				continue
			}
			fmt.Fprintf(os.Stderr, "koordlet e2e: removed the stale cgroup %s of an earlier run\n", dir)
		}
	}
}

// ownerAlive reports whether the test process named in a parent directory name (koord-e2e-<pid>-<random>) is
// still running: the pid exists and is a test binary. A name it cannot read counts as alive, so it is kept.
func ownerAlive(name string) bool {
	pidStr, _, ok := strings.Cut(strings.TrimPrefix(name, dirPrefix), "-")
	pid, err := strconv.Atoi(pidStr)
	if !ok || err != nil {
		return true
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	exe, _, _ := bytes.Cut(cmdline, []byte{0})
	return strings.HasSuffix(string(exe), ".test")
}
