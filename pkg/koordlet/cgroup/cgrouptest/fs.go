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

// Package cgrouptest builds fake cgroup filesystems in t.TempDir() for tests
// of packages that use package cgroup. It lays out kubelet's hierarchy
// (kubepods, the burstable and besteffort QoS directories, pods, containers)
// for cgroup v1 (one directory per controller: cpu, cpuacct, cpuset, memory)
// or v2 (one tree with cgroup.controllers at its root), under the cgroupfs or
// systemd naming, and fills each directory with the knob files koordlet reads
// and writes, at the values a fresh kernel cgroup has.
//
// The fake is plain files: it does not enforce kernel rules (cpuset nesting,
// page rounding). Every file the FS writes gets a fixed old modification
// time, so Changed tells whether anything else wrote it since.
package cgrouptest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// DefaultCPUs is the cpuset of the fake root cgroup unless WithCPUs says
// otherwise.
const DefaultCPUs = "0-7"

// v1UnlimitedBytes is what cgroup v1 reports for an unlimited
// memory.limit_in_bytes with 4 KiB pages.
const v1UnlimitedBytes = "9223372036854771712"

// stamp is the modification time of every file the FS writes.
var stamp = time.Unix(1_000_000_000, 0)

// Option configures NewFS.
type Option func(*FS)

// WithParent sets kubelet's --cgroup-root (Layout.Parent) the hierarchy is
// built under.
func WithParent(parent string) Option {
	return func(f *FS) { f.layout.Parent = parent }
}

// WithCPUs sets the cpuset of the root cgroup, which new directories copy.
func WithCPUs(cpus string) Option {
	return func(f *FS) { f.cpus = cpus }
}

// WithKnobs adds knob files, with their content, to every directory the FS
// makes: the files of a kernel that has more than mainline's, e.g. AnolisKnobs.
func WithKnobs(knobs map[string]string) Option {
	return func(f *FS) { f.extra = knobs }
}

// AnolisKnobs are the files an Anolis OS kernel adds to cgroup v1
// directories, with their defaults: group identity, memory protection and
// throttling, the async reclaim watermarks and the OOM priority.
var AnolisKnobs = map[string]string{
	"cpu.bvt.warp_ns": "0\n", "memory.min": "0\n", "memory.low": "0\n", "memory.high": v1UnlimitedBytes + "\n",
	"memory.wmark_ratio": "0\n", "memory.wmark_scale_factor": "50\n", "memory.wmark_min_adj": "0\n",
	"memory.priority": "0\n", "memory.use_priority_oom": "0\n", "memory.oom.group": "0\n",
}

// FS is a fake cgroup filesystem rooted in a test's temporary directory.
// Methods fail the test on any I/O error.
type FS struct {
	t      testing.TB
	layout cgroup.Layout
	cpus   string
	extra  map[string]string
}

// NewFS builds the mount layout of cgroup version v in t.TempDir() and
// kubelet's hierarchy for driver d: the parent, kubepods and its burstable
// and besteffort directories.
func NewFS(t testing.TB, v cgroup.Version, d cgroup.Driver, opts ...Option) *FS {
	t.Helper()
	f := &FS{t: t, layout: cgroup.Layout{Root: t.TempDir(), Version: v, Driver: d}, cpus: DefaultCPUs}
	for _, o := range opts {
		o(f)
	}
	if v == cgroup.V2 {
		f.write(filepath.Join(f.layout.Root, "cgroup.controllers"), "cpuset cpu io memory hugetlb pids\n")
	}
	f.MkDir("/")
	parent := "/"
	for part := range strings.SplitSeq(strings.Trim(f.layout.Parent, "/"), "/") {
		if part != "" {
			parent = filepath.Join(parent, part)
			f.MkDir(parent)
		}
	}
	f.MkDir(f.layout.KubepodsDir())
	f.MkDir(f.layout.QoSDir(corev1.PodQOSBurstable))
	f.MkDir(f.layout.QoSDir(corev1.PodQOSBestEffort))
	return f
}

// Layout returns the Layout naming this hierarchy; give it to
// cgroup.NewManager.
func (f *FS) Layout() cgroup.Layout { return f.layout }

// Root returns the mount point of the fake filesystem.
func (f *FS) Root() string { return f.layout.Root }

// AddPod creates the cgroup of a pod and returns its directory.
func (f *FS) AddPod(qos corev1.PodQOSClass, uid types.UID) string {
	f.t.Helper()
	dir := f.layout.PodDir(qos, uid)
	f.MkDir(dir)
	return dir
}

// AddContainer creates the cgroup of a container of a pod (and the pod's if
// missing) and returns its directory. containerID is as in the pod's status,
// e.g. "containerd://abc".
func (f *FS) AddContainer(qos corev1.PodQOSClass, uid types.UID, containerID string) string {
	f.t.Helper()
	f.AddPod(qos, uid)
	dir, err := f.layout.ContainerDir(qos, uid, containerID)
	if err != nil {
		f.t.Fatalf("cgrouptest: %v", err)
	}
	f.MkDir(dir)
	return dir
}

// MkDir creates dir in every controller hierarchy, with the knob files of a
// fresh cgroup; the parent must exist. Existing files are left alone.
func (f *FS) MkDir(dir string) {
	f.t.Helper()
	for _, p := range f.layout.ControllerDirs(dir) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			f.t.Fatalf("cgrouptest: %v", err)
		}
	}
	for _, knobs := range []map[string]string{f.defaults(dir), f.extra} {
		for knob, value := range knobs {
			if _, err := os.Stat(f.layout.KnobPath(dir, knob)); errors.Is(err, fs.ErrNotExist) {
				f.WriteFile(dir, knob, value)
			}
		}
	}
}

// defaults returns the knob files of a fresh cgroup at dir.
func (f *FS) defaults(dir string) map[string]string {
	cpus := f.cpus
	if dir != "/" {
		knob := "cpuset.cpus"
		if f.layout.Version == cgroup.V2 {
			knob = "cpuset.cpus.effective"
		}
		cpus = f.ReadFile(filepath.Dir(dir), knob)
	}
	if f.layout.Version == cgroup.V1 {
		return map[string]string{
			"cpu.shares":            "1024\n",
			"cpu.cfs_quota_us":      "-1\n",
			"cpu.cfs_period_us":     "100000\n",
			"cpu.cfs_burst_us":      "0\n",
			"cpu.idle":              "0\n",
			"cpu.stat":              "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n",
			"cpuacct.usage":         "0\n",
			"cpuset.cpus":           cpus + "\n",
			"cpuset.mems":           "0\n",
			"memory.limit_in_bytes": v1UnlimitedBytes + "\n",
			"memory.usage_in_bytes": "0\n",
			"memory.stat": "cache 0\nrss 0\nmapped_file 0\ninactive_anon 0\nactive_anon 0\ninactive_file 0\nactive_file 0\nunevictable 0\n" +
				"total_cache 0\ntotal_rss 0\ntotal_inactive_anon 0\ntotal_active_anon 0\ntotal_inactive_file 0\ntotal_active_file 0\ntotal_unevictable 0\n",
		}
	}
	rootCpus := ""
	if dir == "/" {
		rootCpus = cpus
	}
	return map[string]string{
		"cgroup.controllers":    "cpuset cpu io memory hugetlb pids\n",
		"cpu.weight":            "100\n",
		"cpu.max":               "max 100000\n",
		"cpu.max.burst":         "0\n",
		"cpu.stat":              "usage_usec 0\nuser_usec 0\nsystem_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
		"cpuset.cpus":           rootCpus + "\n",
		"cpuset.cpus.effective": cpus + "\n",
		"cpuset.mems":           "\n",
		"memory.max":            "max\n",
		"memory.high":           "max\n",
		"memory.min":            "0\n",
		"memory.low":            "0\n",
		"cpu.idle":              "0\n",
		"memory.current":        "0\n",
		"memory.stat":           "anon 0\nfile 0\nkernel 0\nshmem 0\ninactive_anon 0\nactive_anon 0\ninactive_file 0\nactive_file 0\nunevictable 0\n",
	}
}

// Remove removes dir, and everything under it, from every controller
// hierarchy, as when a pod or container exits.
func (f *FS) Remove(dir string) {
	f.t.Helper()
	// The kernel removes a cgroup in one step; a reader must never see it half-removed, with some knob files
	// gone. So each directory is first renamed out of the tree, then deleted.
	for _, p := range f.layout.ControllerDirs(dir) {
		gone := filepath.Join(filepath.Dir(p), ".removed-"+filepath.Base(p))
		if err := os.Rename(p, gone); err != nil {
			f.t.Fatalf("cgrouptest: %v", err)
		}
		if err := os.RemoveAll(gone); err != nil {
			f.t.Fatalf("cgrouptest: %v", err)
		}
	}
}

// WriteFile writes value to the file knob of dir, in the controller
// hierarchy the knob's name selects, creating the file if needed.
func (f *FS) WriteFile(dir, knob, value string) {
	f.t.Helper()
	f.write(f.layout.KnobPath(dir, knob), value)
}

func (f *FS) write(path, value string) {
	f.t.Helper()
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		f.t.Fatalf("cgrouptest: %v", err)
	}
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		f.t.Fatalf("cgrouptest: %v", err)
	}
}

// ReadFile returns the content of the file knob of dir without surrounding
// white space.
func (f *FS) ReadFile(dir, knob string) string {
	f.t.Helper()
	b, err := os.ReadFile(f.layout.KnobPath(dir, knob))
	if err != nil {
		f.t.Fatalf("cgrouptest: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// RemoveFile removes the file knob of dir, as on a kernel without that
// feature.
func (f *FS) RemoveFile(dir, knob string) {
	f.t.Helper()
	if err := os.Remove(f.layout.KnobPath(dir, knob)); err != nil {
		f.t.Fatalf("cgrouptest: %v", err)
	}
}

// Changed reports whether the file knob of dir was written by someone other
// than the FS since the FS last wrote it.
func (f *FS) Changed(dir, knob string) bool {
	f.t.Helper()
	info, err := os.Stat(f.layout.KnobPath(dir, knob))
	if err != nil {
		f.t.Fatalf("cgrouptest: %v", err)
	}
	return !info.ModTime().Equal(stamp)
}

// SetStatField sets the line "key value" of a key/value file such as
// cpu.stat or memory.stat in dir, replacing it or appending it.
func (f *FS) SetStatField(dir, knob, key string, value int64) {
	f.t.Helper()
	lines := strings.Split(strings.TrimSpace(f.ReadFile(dir, knob)), "\n")
	line := key + " " + strconv.FormatInt(value, 10)
	replaced := false
	for i, l := range lines {
		if k, _, _ := strings.Cut(l, " "); k == key {
			lines[i], replaced = line, true
		}
	}
	if !replaced {
		lines = append(lines, line)
	}
	f.WriteFile(dir, knob, strings.Join(lines, "\n")+"\n")
}

// SetCPUUsage sets the cumulative CPU time of dir: v1 cpuacct.usage, v2
// usage_usec of cpu.stat.
func (f *FS) SetCPUUsage(dir string, usage time.Duration) {
	f.t.Helper()
	if f.layout.Version == cgroup.V1 {
		f.WriteFile(dir, "cpuacct.usage", strconv.FormatInt(usage.Nanoseconds(), 10)+"\n")
		return
	}
	f.SetStatField(dir, "cpu.stat", "usage_usec", usage.Microseconds())
}

// SetMemory sets the memory use of dir: the usage including page cache (v1
// memory.usage_in_bytes, v2 memory.current) and the inactive file cache of
// memory.stat (v1 total_inactive_file and inactive_file, v2 inactive_file).
func (f *FS) SetMemory(dir string, usage, inactiveFile int64) {
	f.t.Helper()
	if f.layout.Version == cgroup.V1 {
		f.WriteFile(dir, "memory.usage_in_bytes", strconv.FormatInt(usage, 10)+"\n")
		f.SetStatField(dir, "memory.stat", "inactive_file", inactiveFile)
		f.SetStatField(dir, "memory.stat", "total_inactive_file", inactiveFile)
		return
	}
	f.WriteFile(dir, "memory.current", strconv.FormatInt(usage, 10)+"\n")
	f.SetStatField(dir, "memory.stat", "inactive_file", inactiveFile)
}
