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

package koordlet

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
)

const (
	// counterStep is how often the fake CPU counters advance. A rate the agent computes over its 1 s collection
	// interval can be off by up to one step at each end, 2 % of one sample at worst; averages over n samples
	// telescope to 2 steps over n seconds (0.2 % for 10 samples).
	counterStep = 10 * time.Millisecond
	// userHZ is the kernel's USER_HZ, the unit of /proc/stat.
	userHZ = 100
	// bootTicks is where the per-CPU tick counter of /proc/stat starts, as on a machine up for a while.
	bootTicks = 1_000_000
)

// host is the fake machine under a test node: a cgroup filesystem and a /proc directory with stat and meminfo.
// A background goroutine, stopped when the test ends, keeps the CPU counters at start + rate × elapsed real
// time, so that the rates the agent computes are the rates the test chose:
//
//   - /proc/stat: every CPU ticks userHZ times a second, and busy ticks (user) = round(busyCores × ticks per
//     CPU). The agent takes Δbusy / Δtotal × CPUs, which is busyCores exactly when busyCores × ticks is a
//     whole number (integral busyCores), and off by at most 1/Δticks of a core otherwise.
//   - each registered cgroup: its CPU time (v1 cpuacct.usage in ns, v2 usage_usec of cpu.stat) grows by
//     rate × elapsed; see counterStep for the error this leaves.
//
// Counter files are replaced by rename, so the agent never reads one half written.
type host struct {
	t    *testing.T
	fs   *cgrouptest.FS
	proc string
	// sys is the fake /sys (CPU and NUMA topology) and kubelet kubelet's root directory (no CPU manager state).
	sys, kubelet string
	cpus         int
	busy         float64
	start        time.Time

	mu       sync.Mutex
	counters []*cpuCounter
	err      error
}

// cpuCounter is the CPU time of one cgroup, growing at rate cores from since.
type cpuCounter struct {
	dir   string
	rate  float64
	since time.Time
}

// newHost builds the machine of cfg and starts its counters.
func newHost(t *testing.T, cfg nodeConfig) *host {
	t.Helper()
	h := &host{
		t:       t,
		fs:      cgrouptest.NewFS(t, cfg.version, cfg.driver, cgrouptest.WithCPUs(fmt.Sprintf("0-%d", cfg.cpus-1))),
		proc:    t.TempDir(),
		sys:     t.TempDir(),
		kubelet: t.TempDir(),
		cpus:    cfg.cpus,
		busy:    cfg.busyCores,
		start:   time.Now(),
	}
	h.setMemInfo(cfg.memory, cfg.memory-cfg.memUsedWithCache, cfg.memory-cfg.memUsed)
	h.writeSysfs(cfg)
	if err := h.writeCounters(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(counterStep)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := h.writeCounters(); err != nil {
				h.mu.Lock()
				if h.err == nil {
					h.err = err
				}
				h.mu.Unlock()
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if h.err != nil {
			t.Errorf("fake CPU counters stopped: %v", h.err)
		}
	})
	return h
}

// writeSysfs writes the machine's topology: cfg.cpus CPUs, one core each, on socket 0 and NUMA node 0 with
// cfg.memory.
func (h *host) writeSysfs(cfg nodeConfig) {
	h.t.Helper()
	write := func(path, content string) {
		p := filepath.Join(h.sys, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	all := fmt.Sprintf("0-%d\n", cfg.cpus-1)
	write("devices/system/cpu/online", all)
	for i := range cfg.cpus {
		write(fmt.Sprintf("devices/system/cpu/cpu%d/topology/physical_package_id", i), "0\n")
		write(fmt.Sprintf("devices/system/cpu/cpu%d/topology/core_id", i), fmt.Sprintf("%d\n", i))
	}
	write("devices/system/node/node0/cpulist", all)
	write("devices/system/node/node0/meminfo", fmt.Sprintf("Node 0 MemTotal:       %d kB\n", cfg.memory/1024))
}

// addCPU makes the CPU time of the cgroup dir grow at rate cores from now on.
func (h *host) addCPU(dir string, rate float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counters = append(h.counters, &cpuCounter{dir: dir, rate: rate, since: time.Now()})
}

// removeCgroup stops the counters under dir and removes the cgroup, as when a pod's containers have exited.
func (h *host) removeCgroup(dir string) {
	h.t.Helper()
	h.mu.Lock()
	h.counters = slices.DeleteFunc(h.counters, func(c *cpuCounter) bool {
		return c.dir == dir || strings.HasPrefix(c.dir, dir+"/")
	})
	h.mu.Unlock()
	h.fs.Remove(dir)
}

// setMemInfo writes /proc/meminfo with MemTotal, MemFree and MemAvailable in bytes (multiples of 1 KiB).
func (h *host) setMemInfo(total, free, available int64) {
	h.t.Helper()
	for _, v := range []int64{total, free, available} {
		if v%1024 != 0 || v < 0 {
			h.t.Fatalf("meminfo value %d is not a whole number of KiB", v)
		}
	}
	content := fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB\nBuffers:               0 kB\nCached:         %d kB\n",
		total/1024, free/1024, available/1024, (available-free)/1024)
	if err := replaceFile(filepath.Join(h.proc, "meminfo"), content); err != nil {
		h.t.Fatal(err)
	}
}

// setCFSQuota writes the CFS quota of the cgroup dir, as kubelet does for a CPU limit.
func (h *host) setCFSQuota(dir string, quotaUs int64) {
	h.t.Helper()
	if h.fs.Layout().Version == cgroup.V1 {
		h.fs.WriteFile(dir, "cpu.cfs_quota_us", strconv.FormatInt(quotaUs, 10)+"\n")
		return
	}
	h.fs.WriteFile(dir, "cpu.max", fmt.Sprintf("%d %d\n", quotaUs, defaultCFSPeriodUs))
}

// writeCounters writes /proc/stat and the CPU time of every registered cgroup for the current time.
func (h *host) writeCounters() error {
	now := time.Now()
	ticks := int64(bootTicks + now.Sub(h.start)/(time.Second/userHZ))
	busy := int64(math.Round(h.busy * float64(ticks)))
	idle := int64(h.cpus)*ticks - busy
	var b strings.Builder
	fmt.Fprintf(&b, "cpu  %d 0 0 %d 0 0 0 0 0 0\n", busy, idle)
	for i := range h.cpus {
		fmt.Fprintf(&b, "cpu%d %d 0 0 %d 0 0 0 0 0 0\n", i, busy/int64(h.cpus), idle/int64(h.cpus))
	}
	b.WriteString("intr 0\nctxt 0\nbtime 1700000000\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n")
	if err := replaceFile(filepath.Join(h.proc, "stat"), b.String()); err != nil {
		return err
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.fs.Layout()
	for _, c := range h.counters {
		usage := time.Duration(c.rate * float64(now.Sub(c.since)))
		var err error
		if l.Version == cgroup.V1 {
			err = replaceFile(l.KnobPath(c.dir, "cpuacct.usage"), strconv.FormatInt(usage.Nanoseconds(), 10)+"\n")
		} else {
			us := usage.Microseconds()
			err = replaceFile(l.KnobPath(c.dir, "cpu.stat"), fmt.Sprintf(
				"usage_usec %d\nuser_usec %d\nsystem_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n", us, us))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// replaceFile writes content to a temporary file next to path and renames it over path.
func replaceFile(path, content string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
