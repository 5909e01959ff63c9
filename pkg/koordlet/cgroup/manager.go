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

package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/pkg/util/sysfile"
)

var (
	// ErrNotSupported means the cgroup directory exists but the knob does
	// not: the kernel lacks the feature (cpu.cfs_burst_us before 5.14,
	// memory.high on v1) or, on v2, the controller is not enabled in that
	// directory. The Manager logs it once per knob; callers skip quietly.
	ErrNotSupported = errors.New("cgroup knob not supported")
	// ErrNotFound means the cgroup directory itself is gone, typically
	// because the pod or container exited. Callers skip quietly; the Manager
	// does not log it.
	ErrNotFound = errors.New("cgroup not found")
	// ErrInvalidValue means a write asked for a value outside the knob's
	// range; the error names the knob, the directory and the value.
	ErrInvalidValue = errors.New("invalid cgroup value")
)

// Option configures a Manager.
type Option func(*Manager)

// WithPageSize sets the memory page size used to compare memory limits with
// what the kernel reports (it keeps them in whole pages). The default is the
// running system's page size.
func WithPageSize(bytes int64) Option {
	return func(m *Manager) {
		if bytes > 0 {
			m.pageSize = bytes
		}
	}
}

// Manager reads and writes cgroup knobs in the hierarchy its Layout names.
// It is safe for concurrent use. Methods take a ctx only for logging.
type Manager struct {
	layout   Layout
	pageSize int64
	// unsupported holds the knobs already logged as unsupported.
	unsupported sync.Map
	// noV1PSI is set once the kernel is found without cgroup v1 PSI (cpuacct's <r>.pressure): Pressure then
	// reads the hybrid mount's cgroup v2 tree only.
	noV1PSI atomic.Bool
	// afterWrite, when set (by tests), is called after every successful
	// write with the directory, knob and value written.
	afterWrite func(dir, knob, value string)
}

// NewManager returns a Manager for the hierarchy l names.
func NewManager(l Layout, opts ...Option) *Manager {
	m := &Manager{layout: l, pageSize: int64(os.Getpagesize())}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Layout returns the Layout the Manager was built with.
func (m *Manager) Layout() Layout { return m.layout }

// bufPool holds read buffers; cgroup files koordlet reads are a few KiB at
// most (memory.stat), and a read grows the buffer when one is not enough.
var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 8<<10)
	return &b
}}

// read reads knob in dir and passes its content to parse, which must not
// keep the slice. Errors are wrapped once, with the knob and the directory.
func (m *Manager) read(ctx context.Context, dir, knob string, parse func([]byte) error) error {
	if err := checkDir(dir); err != nil {
		return err
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b, err := sysfile.Read(m.layout.KnobPath(dir, knob), (*bp)[:0])
	*bp = b[:0]
	if err != nil {
		return m.fileError(ctx, dir, knob, "reading", err)
	}
	if err := parse(b); err != nil {
		return fmt.Errorf("reading %s in cgroup %s: %w", knob, dir, err)
	}
	return nil
}

// write writes value to knob in dir.
func (m *Manager) write(ctx context.Context, dir, knob, value string) error {
	if err := checkDir(dir); err != nil {
		return err
	}
	if err := sysfile.Write(m.layout.KnobPath(dir, knob), value); err != nil {
		// Errors of write(2) itself, once the file is open, are the kernel
		// refusing the value. EINVAL: out of its range (a CFS burst above
		// the quota); EACCES, even for root: a v1 cpuset outside its
		// parent's; EBUSY: a v1 cpuset smaller than a child's, a memory
		// limit below a usage the kernel could not reclaim.
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Op == "write" &&
			(errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EBUSY)) {
			return fmt.Errorf("writing %s=%q in cgroup %s: kernel rejected the value: %w", knob, value, dir, err)
		}
		return m.fileError(ctx, dir, knob, "writing", err)
	}
	klog.FromContext(ctx).V(4).Info("Wrote cgroup knob", "dir", dir, "knob", knob, "value", value)
	if m.afterWrite != nil {
		m.afterWrite(dir, knob, value)
	}
	return nil
}

// fileError maps an error of opening, reading or writing knob in dir: a
// missing file in a missing directory (or a removed cgroup, ENODEV) is
// ErrNotFound; a missing file in an existing directory is ErrNotSupported,
// logged once per knob.
func (m *Manager) fileError(ctx context.Context, dir, knob, op string, err error) error {
	switch {
	case errors.Is(err, syscall.ENODEV):
		return fmt.Errorf("%s %s: cgroup %s: %w", op, knob, dir, ErrNotFound)
	case errors.Is(err, syscall.ENOENT):
		if _, serr := os.Stat(m.layout.DirPath(dir, knob)); serr != nil {
			return fmt.Errorf("%s %s: cgroup %s: %w", op, knob, dir, ErrNotFound)
		}
		return m.notSupported(ctx, dir, knob)
	case errors.Is(err, syscall.EOPNOTSUPP):
		return m.notSupported(ctx, dir, knob)
	}
	return fmt.Errorf("%s %s in cgroup %s: %w", op, knob, dir, err)
}

// notSupported returns ErrNotSupported for knob in dir, logging the first
// occurrence per knob.
func (m *Manager) notSupported(ctx context.Context, dir, knob string) error {
	if _, logged := m.unsupported.LoadOrStore(knob, struct{}{}); !logged {
		klog.FromContext(ctx).Info("Found cgroup knob unsupported, skipping it from now on without logging", "knob", knob, "dir", dir, "version", m.layout.Version.String())
	}
	return fmt.Errorf("%s in cgroup %s: %w", knob, dir, ErrNotSupported)
}

// checkDir rejects directories that are not absolute cgroup paths or that
// could leave the hierarchy.
func checkDir(dir string) error {
	if !strings.HasPrefix(dir, "/") {
		return fmt.Errorf("cgroup directory %q: must begin with /", dir)
	}
	// Each element starts after a '/' at i and ends at the next '/' or the
	// end.
	for i := 0; i < len(dir); {
		end := len(dir)
		if j := strings.IndexByte(dir[i+1:], '/'); j >= 0 {
			end = i + 1 + j
		}
		if dir[i+1:end] == ".." {
			return fmt.Errorf("cgroup directory %q: must not contain a %q element", dir, "..")
		}
		i = end
	}
	return nil
}
