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

package cgroup_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

const realRoot = "/sys/fs/cgroup"

// TestRealCgroupV1 runs the Manager against the kernel: it creates
// /koord-cgtest-<random>/child in the cpu, cpuacct, cpuset and memory
// hierarchies, writes every knob, reads them back, and runs a CPU-burning
// process in the child to read real usage and throttling. The directories
// and the process are removed even when the test fails.
func TestRealCgroupV1(t *testing.T) {
	if uid := os.Geteuid(); uid != 0 {
		t.Skipf("creating cgroups needs root; running as uid %d", uid)
	}
	if v, err := cgroup.DetectVersion(realRoot); err != nil || v != cgroup.V1 {
		t.Skipf("needs cgroup v1 at %s; detected %v, %v", realRoot, v, err)
	}
	l := cgroup.Layout{Root: realRoot, Version: cgroup.V1, Driver: cgroup.Cgroupfs}
	for _, p := range l.ControllerDirs("/") {
		if err := syscall.Access(p, 2 /* W_OK */); err != nil {
			t.Skipf("needs a writable cgroup v1 hierarchy; %s: %v", p, err)
		}
	}
	ctx := testContext(t)
	m := cgroup.NewManager(l)

	parent := fmt.Sprintf("/koord-cgtest-%016x", rand.Uint64())
	child := parent + "/child"
	t.Cleanup(func() {
		for _, d := range []string{child, parent} {
			for _, p := range l.ControllerDirs(d) {
				if err := syscall.Rmdir(p); err != nil && !errors.Is(err, syscall.ENOENT) {
					t.Errorf("removing %s: %v", p, err)
				}
			}
		}
	})
	mems, err := os.ReadFile(l.KnobPath("/", "cpuset.mems"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{parent, child} {
		for _, p := range l.ControllerDirs(d) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// A new v1 cpuset has no memory nodes; processes cannot join it
		// until it has some. Writing cpuset.mems is not koordlet's job.
		if err := os.WriteFile(l.KnobPath(d, "cpuset.mems"), mems, 0); err != nil {
			t.Fatal(err)
		}
	}
	all, err := m.CPUSet(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{parent, child}

	t.Run("cpuset tree", func(t *testing.T) {
		checkTree := func(want cpuset.CPUSet) {
			t.Helper()
			for _, d := range dirs {
				if got, err := m.CPUSet(ctx, d); err != nil || !got.Equals(want) {
					t.Errorf("CPUSet(%s) = %s, %v; want %s", d, got, err, want)
				}
			}
		}
		// A new cgroup has no CPUs; the tree grows into them top-down.
		first := cpuset.New(all.List()[0])
		if changed, err := m.SetCPUSetTree(ctx, dirs, first); err != nil || !changed {
			t.Fatalf("SetCPUSetTree(%s) = %v, %v", first, changed, err)
		}
		checkTree(first)
		if changed, err := m.SetCPUSetTree(ctx, dirs, first); err != nil || changed {
			t.Errorf("SetCPUSetTree(%s) again = %v, %v; want no change", first, changed, err)
		}
		if all.Size() < 2 {
			t.Logf("only %s online: moving, growing and shrinking need two CPUs", all)
			return
		}
		// The kernel refuses to give a child CPUs its parent lacks (EACCES)
		// and to take from a parent CPUs a child still has (EBUSY).
		_, err := m.SetCPUSet(ctx, child, all)
		if !errors.Is(err, syscall.EACCES) || !strings.Contains(err.Error(), "kernel rejected the value") {
			t.Errorf("SetCPUSet(child, %s) under a parent with %s = %v; want EACCES", all, first, err)
		}
		second := cpuset.New(all.List()[1])
		for _, want := range []cpuset.CPUSet{second, all, first} { // move, grow, shrink
			if changed, err := m.SetCPUSetTree(ctx, dirs, want); err != nil || !changed {
				t.Fatalf("SetCPUSetTree(%s) = %v, %v", want, changed, err)
			}
			checkTree(want)
			if want.Equals(all) {
				if _, err := m.SetCPUSet(ctx, parent, first); !errors.Is(err, syscall.EBUSY) {
					t.Errorf("SetCPUSet(parent, %s) above a child with %s = %v; want EBUSY", first, all, err)
				}
			}
		}
	})

	t.Run("cpu shares", func(t *testing.T) {
		if changed, err := m.SetCPUShares(ctx, child, 512); err != nil || !changed {
			t.Fatalf("SetCPUShares = %v, %v", changed, err)
		}
		if got, err := m.CPUShares(ctx, child); err != nil || got != 512 {
			t.Errorf("CPUShares = %d, %v; want 512", got, err)
		}
		if changed, err := m.SetCPUShares(ctx, child, 512); err != nil || changed {
			t.Errorf("SetCPUShares again = %v, %v; want no change", changed, err)
		}
	})

	t.Run("cfs quota and burst", func(t *testing.T) {
		if changed, err := m.SetCFSQuota(ctx, child, 50000); err != nil || !changed {
			t.Fatalf("SetCFSQuota = %v, %v", changed, err)
		}
		if q, p, err := m.CFSQuota(ctx, child); err != nil || q != 50000 || p != 100000 {
			t.Errorf("CFSQuota = %d, %d, %v; want 50000, 100000", q, p, err)
		}
		if changed, err := m.SetCFSQuota(ctx, child, 50000); err != nil || changed {
			t.Errorf("SetCFSQuota again = %v, %v; want no change", changed, err)
		}
		changed, err := m.SetCFSBurst(ctx, child, 20000)
		switch {
		case errors.Is(err, cgroup.ErrNotSupported):
			t.Logf("kernel has no CFS burst: %v", err)
		case err != nil || !changed:
			t.Errorf("SetCFSBurst = %v, %v", changed, err)
		default:
			if got, err := m.CFSBurst(ctx, child); err != nil || got != 20000 {
				t.Errorf("CFSBurst = %d, %v; want 20000", got, err)
			}
			// A burst above the quota is the kernel's to refuse.
			if _, err := m.SetCFSBurst(ctx, child, 60000); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("SetCFSBurst above the quota = %v; want EINVAL", err)
			}
		}
		if changed, err := m.SetCFSQuota(ctx, child, -1); err != nil || !changed {
			t.Fatalf("SetCFSQuota(-1) = %v, %v", changed, err)
		}
		if q, _, err := m.CFSQuota(ctx, child); err != nil || q != -1 {
			t.Errorf("CFSQuota = %d, %v; want -1", q, err)
		}
		if _, err := m.SetCFSQuota(ctx, child, 999); !errors.Is(err, cgroup.ErrInvalidValue) {
			t.Errorf("SetCFSQuota(999) = %v; want ErrInvalidValue", err)
		}
	})

	t.Run("memory limit", func(t *testing.T) {
		if got, err := m.MemoryLimit(ctx, child); err != nil || got != -1 {
			t.Errorf("MemoryLimit of a new cgroup = %d, %v; want -1", got, err)
		}
		const limit = 64 << 20
		if changed, err := m.SetMemoryLimit(ctx, child, limit); err != nil || !changed {
			t.Fatalf("SetMemoryLimit = %v, %v", changed, err)
		}
		if got, err := m.MemoryLimit(ctx, child); err != nil || got != limit {
			t.Errorf("MemoryLimit = %d, %v; want %d", got, err, limit)
		}
		// The kernel keeps whole pages: a few bytes more is the same limit.
		if changed, err := m.SetMemoryLimit(ctx, child, limit+100); err != nil || changed {
			t.Errorf("SetMemoryLimit within the same page = %v, %v; want no change", changed, err)
		}
		if changed, err := m.SetMemoryLimit(ctx, child, -1); err != nil || !changed {
			t.Fatalf("SetMemoryLimit(-1) = %v, %v", changed, err)
		}
		if got, err := m.MemoryLimit(ctx, child); err != nil || got != -1 {
			t.Errorf("MemoryLimit = %d, %v; want -1", got, err)
		}
		if _, err := m.SetMemoryHigh(ctx, child, limit); err != nil && !errors.Is(err, cgroup.ErrNotSupported) {
			t.Errorf("SetMemoryHigh = %v; want success or ErrNotSupported", err)
		}
	})

	t.Run("usage and throttling of a running process", func(t *testing.T) {
		// 10% of a CPU: a busy loop is throttled in almost every period.
		// The burst must not exceed the quota.
		if _, err := m.SetCFSBurst(ctx, child, 0); err != nil && !errors.Is(err, cgroup.ErrNotSupported) {
			t.Fatal(err)
		}
		if _, err := m.SetCFSQuota(ctx, child, 10000); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), "sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		pid := []byte(strconv.Itoa(cmd.Process.Pid))
		for _, p := range l.ControllerDirs(child) {
			if err := os.WriteFile(filepath.Join(p, "cgroup.procs"), pid, 0); err != nil {
				t.Fatal(err)
			}
		}
		var usage time.Duration
		var throttling cgroup.Throttling
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if usage, err = m.CPUUsage(ctx, child); err != nil {
				t.Fatal(err)
			}
			if throttling, err = m.CPUThrottling(ctx, child); err != nil {
				t.Fatal(err)
			}
			if usage >= 20*time.Millisecond && throttling.ThrottledPeriods > 0 {
				break
			}
		}
		if usage < 20*time.Millisecond || throttling.ThrottledPeriods == 0 || throttling.ThrottledTime <= 0 ||
			throttling.Periods < throttling.ThrottledPeriods {
			t.Errorf("after burning CPU under a 10%% quota: usage %v, throttling %+v; want usage and throttled periods", usage, throttling)
		}
		if parentUsage, err := m.CPUUsage(ctx, parent); err != nil || parentUsage < usage {
			t.Errorf("CPUUsage(parent) = %v, %v; want at least the child's %v", parentUsage, err, usage)
		}
		mem, err := m.MemoryStats(ctx, child)
		if err != nil || mem.Usage < 0 || mem.WorkingSet > mem.Usage {
			t.Errorf("MemoryStats = %+v, %v", mem, err)
		}
	})
}

// TestRealPressureV1 reads pressure stall information from the kernel on a hybrid cgroup v1 mount: it creates
// /koord-cgtest-<random> in the cpuacct hierarchy and in the cgroup v2 one at <root>/unified, as runc does for
// every pod and container, reads its cpu, memory and io pressure, and the node's from /proc/pressure. The
// directories are removed even when the test fails.
func TestRealPressureV1(t *testing.T) {
	if uid := os.Geteuid(); uid != 0 {
		t.Skipf("creating cgroups needs root; running as uid %d", uid)
	}
	if v, err := cgroup.DetectVersion(realRoot); err != nil || v != cgroup.V1 {
		t.Skipf("needs cgroup v1 at %s; detected %v, %v", realRoot, v, err)
	}
	unified := filepath.Join(realRoot, "unified")
	if _, err := os.Stat(filepath.Join(unified, "cgroup.controllers")); err != nil {
		t.Skipf("needs the cgroup v2 hierarchy mounted at %s (a hybrid mount): %v", unified, err)
	}
	if _, err := os.Stat("/proc/pressure"); err != nil {
		t.Skipf("needs a kernel with PSI enabled: %v", err)
	}
	l := cgroup.Layout{Root: realRoot, Version: cgroup.V1, Driver: cgroup.Cgroupfs}
	dir := fmt.Sprintf("/koord-cgtest-%016x", rand.Uint64())
	paths := []string{filepath.Join(realRoot, "cpuacct", dir), filepath.Join(unified, dir)}
	for _, p := range paths {
		if err := syscall.Access(filepath.Dir(p), 2 /* W_OK */); err != nil {
			t.Skipf("needs writable cgroup hierarchies; %s: %v", filepath.Dir(p), err)
		}
	}
	t.Cleanup(func() {
		for _, p := range paths {
			if err := syscall.Rmdir(p); err != nil && !errors.Is(err, syscall.ENOENT) {
				t.Errorf("removing %s: %v", p, err)
			}
		}
	})
	for _, p := range paths {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := testContext(t)
	m := cgroup.NewManager(l)
	checkLine := func(what string, line cgroup.PressureLine) {
		t.Helper()
		for _, avg := range []float64{line.Avg10, line.Avg60, line.Avg300} {
			if avg < 0 || avg > 100 {
				t.Errorf("%s: average %v outside [0, 100] in %+v", what, avg, line)
			}
		}
		if line.Total < 0 {
			t.Errorf("%s: negative total in %+v", what, line)
		}
	}
	for _, r := range []cgroup.PressureResource{cgroup.PressureCPU, cgroup.PressureMemory, cgroup.PressureIO} {
		p, err := m.Pressure(ctx, dir, r)
		if err != nil {
			t.Errorf("Pressure(%s, %s): %v", dir, r, err)
		} else {
			checkLine(fmt.Sprintf("cgroup %s %s some", dir, r), p.Some)
			checkLine(fmt.Sprintf("cgroup %s %s full", dir, r), p.Full)
			if r != cgroup.PressureCPU && !p.HasFull {
				t.Errorf("Pressure(%s, %s) has no full line; the kernel always writes one for %s", dir, r, r)
			}
		}
		node, err := cgroup.NodePressure("/proc", r)
		if err != nil {
			t.Errorf("NodePressure(%s): %v", r, err)
			continue
		}
		checkLine("node "+string(r)+" some", node.Some)
		checkLine("node "+string(r)+" full", node.Full)
	}
	// Once the cgroup is gone, its pressure is ErrNotFound, as for every knob.
	for _, p := range paths {
		if err := syscall.Rmdir(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Pressure(ctx, dir, cgroup.PressureCPU); !errors.Is(err, cgroup.ErrNotFound) {
		t.Errorf("Pressure of a removed cgroup = %v; want ErrNotFound", err)
	}
}
