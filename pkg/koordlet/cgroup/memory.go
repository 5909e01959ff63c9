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
	"fmt"
)

// Memory knob names.
const (
	knobMemUsage = "memory.usage_in_bytes" // v1
	knobMemLimit = "memory.limit_in_bytes" // v1
	knobMemCur   = "memory.current"        // v2
	knobMemMax   = "memory.max"            // v2
	knobMemHigh  = "memory.high"           // v2; v1 on kernels that add it (Anolis)
	knobMemStat  = "memory.stat"
)

// MemoryStats is the memory use of a cgroup.
type MemoryStats struct {
	// Usage is the memory charged to the cgroup, page cache included: v1
	// memory.usage_in_bytes, v2 memory.current.
	Usage int64
	// WorkingSet is Usage minus the inactive file cache (v1
	// total_inactive_file, v2 inactive_file of memory.stat), floored at 0:
	// what kubelet and cAdvisor call the working set.
	WorkingSet int64
}

// MemoryStats returns the memory use of dir, with and without the inactive
// page cache.
func (m *Manager) MemoryStats(ctx context.Context, dir string) (MemoryStats, error) {
	usageKnob, inactiveKey := knobMemCur, "inactive_file"
	if m.layout.Version == V1 {
		usageKnob, inactiveKey = knobMemUsage, "total_inactive_file"
	}
	usage, err := m.readInt(ctx, dir, usageKnob)
	if err != nil {
		return MemoryStats{}, err
	}
	var inactive [1]int64
	if err := m.read(ctx, dir, knobMemStat, func(b []byte) error {
		return statFields(b, []string{inactiveKey}, inactive[:])
	}); err != nil {
		return MemoryStats{}, err
	}
	return MemoryStats{Usage: usage, WorkingSet: max(usage-inactive[0], 0)}, nil
}

// MemoryWorkingSet returns the working set of dir: v1
// memory.usage_in_bytes - total_inactive_file, v2 memory.current -
// inactive_file, floored at 0.
func (m *Manager) MemoryWorkingSet(ctx context.Context, dir string) (int64, error) {
	s, err := m.MemoryStats(ctx, dir)
	return s.WorkingSet, err
}

// MemoryLimit returns the memory limit of dir in bytes, -1 when unlimited:
// v1 memory.limit_in_bytes, v2 memory.max.
func (m *Manager) MemoryLimit(ctx context.Context, dir string) (int64, error) {
	return m.readBytesLimit(ctx, dir, m.limitKnob())
}

// SetMemoryLimit sets the memory limit of dir: -1 for unlimited or a
// positive number of bytes (the kernel keeps whole pages, rounding down). It
// writes nothing when the limit is already the value, compared in pages, and
// reports whether it wrote.
func (m *Manager) SetMemoryLimit(ctx context.Context, dir string, bytes int64) (bool, error) {
	return m.setBytesLimit(ctx, dir, m.limitKnob(), bytes)
}

// MemoryHigh returns memory.high of dir in bytes, -1 when unlimited. On v1
// only kernels that add the file (Anolis) have it; others give
// ErrNotSupported.
func (m *Manager) MemoryHigh(ctx context.Context, dir string) (int64, error) {
	return m.readBytesLimit(ctx, dir, knobMemHigh)
}

// SetMemoryHigh sets memory.high of dir: -1 for unlimited or a positive
// number of bytes. On v1 only kernels that add the file (Anolis) have it;
// others give ErrNotSupported. It writes nothing when the value is already
// set, compared in pages, and reports whether it wrote.
func (m *Manager) SetMemoryHigh(ctx context.Context, dir string, bytes int64) (bool, error) {
	return m.setBytesLimit(ctx, dir, knobMemHigh, bytes)
}

func (m *Manager) limitKnob() string {
	if m.layout.Version == V1 {
		return knobMemLimit
	}
	return knobMemMax
}

func (m *Manager) readBytesLimit(ctx context.Context, dir, knob string) (int64, error) {
	var v int64
	err := m.read(ctx, dir, knob, func(b []byte) error {
		var err error
		v, err = parseBytesLimit(b)
		return err
	})
	return v, err
}

func (m *Manager) setBytesLimit(ctx context.Context, dir, knob string, bytes int64) (bool, error) {
	if bytes != -1 && bytes <= 0 {
		return false, fmt.Errorf("%s %d for cgroup %s: must be -1 (unlimited) or positive: %w", knob, bytes, dir, ErrInvalidValue)
	}
	cur, err := m.readBytesLimit(ctx, dir, knob)
	if err != nil {
		return false, err
	}
	if cur == bytes || (cur >= 0 && bytes >= 0 && cur/m.pageSize == bytes/m.pageSize) {
		return false, nil
	}
	value := formatInt(bytes)
	if bytes < 0 && m.layout.Version == V2 {
		value = "max"
	}
	if err := m.write(ctx, dir, knob, value); err != nil {
		return false, err
	}
	return true, nil
}
