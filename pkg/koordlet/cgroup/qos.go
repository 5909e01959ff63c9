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

// IntKnob is a cgroup file holding one integer with a fixed range: the
// knobs of the CPU and memory QoS strategies that the kernel may or may not
// have (group identity and the memcg watermarks are Anolis OS features,
// cpu.idle needs Linux 5.15). The name is the same on cgroup v1 and v2.
type IntKnob struct {
	// Name is the file name, e.g. "cpu.idle".
	Name string
	// Min and Max bound the values a write may ask for.
	Min, Max int64
}

// The integer QoS knobs.
var (
	// KnobCPUIdle is cpu.idle: 1 puts the cgroup's tasks in SCHED_IDLE
	// (Linux 5.15+, v1 and v2).
	KnobCPUIdle = IntKnob{Name: "cpu.idle", Min: 0, Max: 1}
	// KnobCPUBVTWarpNs is cpu.bvt.warp_ns, the group identity of Anolis OS:
	// 2 highest, -1 lowest.
	KnobCPUBVTWarpNs = IntKnob{Name: "cpu.bvt.warp_ns", Min: -1, Max: 2}
	// KnobMemoryWmarkRatio is memory.wmark_ratio (Anolis OS): async reclaim
	// starts at this percent of memory.high or the limit; 0 turns it off.
	KnobMemoryWmarkRatio = IntKnob{Name: "memory.wmark_ratio", Min: 0, Max: 100}
	// KnobMemoryWmarkScaleFactor is memory.wmark_scale_factor (Anolis OS), in
	// permille: async reclaim stops this far below the ratio.
	KnobMemoryWmarkScaleFactor = IntKnob{Name: "memory.wmark_scale_factor", Min: 1, Max: 1000}
	// KnobMemoryWmarkMinAdj is memory.wmark_min_adj (Anolis OS): shifts the
	// global min watermark for the cgroup.
	KnobMemoryWmarkMinAdj = IntKnob{Name: "memory.wmark_min_adj", Min: -25, Max: 50}
	// KnobMemoryPriority is memory.priority (Anolis OS), the memcg OOM
	// priority: higher is killed later.
	KnobMemoryPriority = IntKnob{Name: "memory.priority", Min: 0, Max: 12}
	// KnobMemoryUsePriorityOOM is memory.use_priority_oom (Anolis OS).
	KnobMemoryUsePriorityOOM = IntKnob{Name: "memory.use_priority_oom", Min: 0, Max: 1}
	// KnobMemoryOOMGroup is memory.oom.group: 1 makes the OOM killer kill
	// the whole cgroup (v2; v1 on Anolis OS).
	KnobMemoryOOMGroup = IntKnob{Name: "memory.oom.group", Min: 0, Max: 1}
)

// Memory protection knob names.
const (
	knobMemMin = "memory.min" // v2; v1 on kernels that add it (Anolis)
	knobMemLow = "memory.low" // v2; v1 on kernels that add it (Anolis)
)

// Int returns the value of k in dir.
func (m *Manager) Int(ctx context.Context, dir string, k IntKnob) (int64, error) {
	return m.readInt(ctx, dir, k.Name)
}

// SetInt sets k in dir to v, which must be within the knob's range. It
// writes nothing when the knob has the value already and reports whether it
// wrote. A kernel without the knob gives ErrNotSupported.
func (m *Manager) SetInt(ctx context.Context, dir string, k IntKnob, v int64) (bool, error) {
	if v < k.Min || v > k.Max {
		return false, fmt.Errorf("%s %d for cgroup %s: must be within [%d, %d]: %w", k.Name, v, dir, k.Min, k.Max, ErrInvalidValue)
	}
	return m.setInt(ctx, dir, k.Name, v, m.readInt, formatInt)
}

// MemoryMin returns memory.min of dir in bytes, the memory protected from
// reclaim (-1 for "max").
func (m *Manager) MemoryMin(ctx context.Context, dir string) (int64, error) {
	return m.readBytesLimit(ctx, dir, knobMemMin)
}

// SetMemoryMin sets memory.min of dir to bytes (0 for no protection),
// compared in pages. Kernels without the file (v1 other than Anolis OS) give
// ErrNotSupported.
func (m *Manager) SetMemoryMin(ctx context.Context, dir string, bytes int64) (bool, error) {
	return m.setProtection(ctx, dir, knobMemMin, bytes)
}

// MemoryLow returns memory.low of dir in bytes, the memory protected from
// reclaim on a best-effort basis (-1 for "max").
func (m *Manager) MemoryLow(ctx context.Context, dir string) (int64, error) {
	return m.readBytesLimit(ctx, dir, knobMemLow)
}

// SetMemoryLow sets memory.low of dir to bytes (0 for no protection), like
// SetMemoryMin.
func (m *Manager) SetMemoryLow(ctx context.Context, dir string, bytes int64) (bool, error) {
	return m.setProtection(ctx, dir, knobMemLow, bytes)
}

func (m *Manager) setProtection(ctx context.Context, dir, knob string, bytes int64) (bool, error) {
	if bytes < 0 {
		return false, fmt.Errorf("%s %d for cgroup %s: must not be negative: %w", knob, bytes, dir, ErrInvalidValue)
	}
	cur, err := m.readBytesLimit(ctx, dir, knob)
	if err != nil {
		return false, err
	}
	if cur >= 0 && cur/m.pageSize == bytes/m.pageSize {
		return false, nil
	}
	if err := m.write(ctx, dir, knob, formatInt(bytes)); err != nil {
		return false, err
	}
	return true, nil
}
