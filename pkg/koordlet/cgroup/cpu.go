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
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"
)

// CPU knob names.
const (
	knobCPUAcctUsage  = "cpuacct.usage"         // v1, ns
	knobCPUStat       = "cpu.stat"              // v1 throttling; v2 usage and throttling
	knobCPUShares     = "cpu.shares"            // v1
	knobCPUWeight     = "cpu.weight"            // v2
	knobCFSQuota      = "cpu.cfs_quota_us"      // v1
	knobCFSPeriod     = "cpu.cfs_period_us"     // v1
	knobCFSBurst      = "cpu.cfs_burst_us"      // v1
	knobCPUMax        = "cpu.max"               // v2: "<quota|max> <period>"
	knobCPUMaxBurst   = "cpu.max.burst"         // v2
	knobCPUSetCPUs    = "cpuset.cpus"           // v1 and v2
	knobCPUSetCPUsEff = "cpuset.cpus.effective" // v2
)

// CPU knob ranges.
const (
	// MinCPUShares and MaxCPUShares bound cpu.shares (kernel and kubelet).
	MinCPUShares = 2
	MaxCPUShares = 262144
	// MinCFSQuotaUs is the smallest CFS quota the kernel accepts (1 ms).
	MinCFSQuotaUs = 1000
	// minCPUWeight and maxCPUWeight bound cgroup v2 cpu.weight.
	minCPUWeight = 1
	maxCPUWeight = 10000
)

// SharesToWeight converts cgroup v1 cpu.shares to cgroup v2 cpu.weight the
// way kubelet does (KEP-2254): 1 + (shares-2)*9999/262142, so [2, 262144]
// maps onto [1, 10000]; values outside the range are clamped.
func SharesToWeight(shares int64) int64 {
	shares = min(max(shares, MinCPUShares), MaxCPUShares)
	return 1 + (shares-2)*(maxCPUWeight-1)/(MaxCPUShares-2)
}

// WeightToShares converts cgroup v2 cpu.weight back to cpu.shares the way
// kubelet does: (weight-1)*262142/9999 + 2; values outside [1, 10000] are
// clamped. Both formulas truncate, so a round trip can lose a step
// (weight 2 reads as 28 shares, which convert back to weight 1); SetCPUShares
// therefore compares weights, not shares, on v2.
func WeightToShares(weight int64) int64 {
	weight = min(max(weight, minCPUWeight), maxCPUWeight)
	return (weight-1)*(MaxCPUShares-2)/(maxCPUWeight-1) + 2
}

// Throttling is what cpu.stat says about CFS bandwidth control.
type Throttling struct {
	// Periods is the number of enforcement periods that have elapsed.
	Periods int64
	// ThrottledPeriods is the number of periods in which the group was
	// throttled.
	ThrottledPeriods int64
	// ThrottledTime is the total time the group's tasks were throttled.
	ThrottledTime time.Duration
}

// CPUUsage returns the cumulative CPU time used by the tasks of dir: v1
// cpuacct.usage, v2 usage_usec of cpu.stat.
func (m *Manager) CPUUsage(ctx context.Context, dir string) (time.Duration, error) {
	var usage time.Duration
	if m.layout.Version == V1 {
		err := m.read(ctx, dir, knobCPUAcctUsage, func(b []byte) error {
			v, err := parseInt(b)
			usage = time.Duration(v)
			return err
		})
		return usage, err
	}
	err := m.read(ctx, dir, knobCPUStat, func(b []byte) error {
		var out [1]int64
		err := statFields(b, []string{"usage_usec"}, out[:])
		usage = time.Duration(out[0]) * time.Microsecond
		return err
	})
	return usage, err
}

// CPUThrottling returns the CFS throttling counters of dir from cpu.stat:
// nr_periods, nr_throttled and throttled_time (v1, ns) or throttled_usec
// (v2). On v2 a cpu.stat without them (the cpu controller is not enabled in
// dir) gives ErrNotSupported.
func (m *Manager) CPUThrottling(ctx context.Context, dir string) (Throttling, error) {
	var t Throttling
	timeKey, unit := "throttled_time", time.Nanosecond
	if m.layout.Version == V2 {
		timeKey, unit = "throttled_usec", time.Microsecond
	}
	missing := false
	err := m.read(ctx, dir, knobCPUStat, func(b []byte) error {
		var out [3]int64
		if err := statFields(b, []string{"nr_periods", "nr_throttled", timeKey}, out[:]); err != nil {
			if m.layout.Version == V2 && isMissingField(err) {
				missing = true
				return nil
			}
			return err
		}
		t = Throttling{Periods: out[0], ThrottledPeriods: out[1], ThrottledTime: time.Duration(out[2]) * unit}
		return nil
	})
	if err == nil && missing {
		return Throttling{}, m.notSupported(ctx, dir, knobCPUStat+" "+timeKey)
	}
	return t, err
}

// CPUShares returns the CPU shares of dir: v1 cpu.shares, v2 cpu.weight
// converted with WeightToShares.
func (m *Manager) CPUShares(ctx context.Context, dir string) (int64, error) {
	if m.layout.Version == V1 {
		return m.readInt(ctx, dir, knobCPUShares)
	}
	w, err := m.readInt(ctx, dir, knobCPUWeight)
	if err != nil {
		return 0, err
	}
	return WeightToShares(w), nil
}

// SetCPUShares sets the CPU shares of dir, in [2, 262144]: v1 cpu.shares,
// v2 cpu.weight = SharesToWeight(shares). It writes nothing when the kernel
// already has the value (on v2: the weight) and reports whether it wrote.
func (m *Manager) SetCPUShares(ctx context.Context, dir string, shares int64) (bool, error) {
	if shares < MinCPUShares || shares > MaxCPUShares {
		return false, fmt.Errorf("%s %d for cgroup %s: must be in [%d, %d]: %w", knobCPUShares, shares, dir, MinCPUShares, MaxCPUShares, ErrInvalidValue)
	}
	knob, want := knobCPUShares, shares
	if m.layout.Version == V2 {
		knob, want = knobCPUWeight, SharesToWeight(shares)
	}
	return m.setInt(ctx, dir, knob, want, m.readInt, formatInt)
}

// CFSQuota returns the CFS quota and period of dir in microseconds; quota -1
// means unlimited. v1 reads cpu.cfs_quota_us and cpu.cfs_period_us, v2
// cpu.max ("max 100000", "50000 100000").
func (m *Manager) CFSQuota(ctx context.Context, dir string) (quotaUs int64, periodUs int64, err error) {
	if m.layout.Version == V1 {
		if quotaUs, err = m.readQuotaV1(ctx, dir); err != nil {
			return 0, 0, err
		}
		if periodUs, err = m.readInt(ctx, dir, knobCFSPeriod); err != nil {
			return 0, 0, err
		}
		return quotaUs, periodUs, nil
	}
	err = m.read(ctx, dir, knobCPUMax, func(b []byte) error {
		quotaUs, periodUs, err = parseCPUMax(b)
		return err
	})
	return quotaUs, periodUs, err
}

// parseCPUMax parses cgroup v2 cpu.max: "<quota|max> <period>".
func parseCPUMax(b []byte) (quotaUs, periodUs int64, err error) {
	quota, period, ok := cutSpace(bytes.TrimSpace(b))
	if !ok || len(quota) == 0 || len(period) == 0 {
		return 0, 0, fmt.Errorf("parsing %q: want \"<quota|max> <period>\"", b)
	}
	if quotaUs, err = parseMax(quota); err != nil {
		return 0, 0, fmt.Errorf("quota: %w", err)
	}
	if periodUs, err = parseInt(period); err != nil {
		return 0, 0, fmt.Errorf("period: %w", err)
	}
	return quotaUs, periodUs, nil
}

// cutSpace cuts b at its only space; ok is false when b has no space or
// more than one.
func cutSpace(b []byte) (before, after []byte, ok bool) {
	i := bytes.IndexByte(b, ' ')
	if i < 0 || bytes.IndexByte(b[i+1:], ' ') >= 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

func (m *Manager) readQuotaV1(ctx context.Context, dir string) (int64, error) {
	q, err := m.readInt(ctx, dir, knobCFSQuota)
	if err != nil {
		return 0, err
	}
	if q < 0 {
		q = -1
	}
	return q, nil
}

// SetCFSQuota sets the CFS quota of dir in microseconds: -1 for unlimited or
// at least 1000. v1 writes cpu.cfs_quota_us ("-1" for unlimited); v2 writes
// cpu.max as "<quota|max> <period>" with the period it read, so the period
// is kept. It writes nothing when the quota is already the value and reports
// whether it wrote.
func (m *Manager) SetCFSQuota(ctx context.Context, dir string, quotaUs int64) (bool, error) {
	if quotaUs != -1 && quotaUs < MinCFSQuotaUs {
		return false, fmt.Errorf("CFS quota %d us for cgroup %s: must be -1 (unlimited) or at least %d: %w", quotaUs, dir, MinCFSQuotaUs, ErrInvalidValue)
	}
	if m.layout.Version == V1 {
		return m.setInt(ctx, dir, knobCFSQuota, quotaUs, func(ctx context.Context, dir, _ string) (int64, error) {
			return m.readQuotaV1(ctx, dir)
		}, formatInt)
	}
	cur, periodUs, err := m.CFSQuota(ctx, dir)
	if err != nil {
		return false, err
	}
	if cur == quotaUs {
		return false, nil
	}
	if err := m.write(ctx, dir, knobCPUMax, formatMax(quotaUs)+" "+formatInt(periodUs)); err != nil {
		return false, err
	}
	return true, nil
}

// CFSBurst returns the CFS burst of dir in microseconds: v1
// cpu.cfs_burst_us, v2 cpu.max.burst. Kernels before 5.14 have neither
// (ErrNotSupported).
func (m *Manager) CFSBurst(ctx context.Context, dir string) (int64, error) {
	return m.readInt(ctx, dir, m.burstKnob())
}

// SetCFSBurst sets the CFS burst of dir in microseconds (at least 0). It
// writes nothing when the burst is already the value and reports whether it
// wrote. The kernel rejects (EINVAL) a burst larger than the quota.
func (m *Manager) SetCFSBurst(ctx context.Context, dir string, burstUs int64) (bool, error) {
	knob := m.burstKnob()
	if burstUs < 0 {
		return false, fmt.Errorf("%s %d for cgroup %s: must be at least 0: %w", knob, burstUs, dir, ErrInvalidValue)
	}
	return m.setInt(ctx, dir, knob, burstUs, m.readInt, formatInt)
}

func (m *Manager) burstKnob() string {
	if m.layout.Version == V1 {
		return knobCFSBurst
	}
	return knobCPUMaxBurst
}

// readInt reads a file holding one integer.
func (m *Manager) readInt(ctx context.Context, dir, knob string) (int64, error) {
	var v int64
	err := m.read(ctx, dir, knob, func(b []byte) error {
		var err error
		v, err = parseInt(b)
		return err
	})
	return v, err
}

// setInt writes format(want) to knob unless current reads want already.
func (m *Manager) setInt(ctx context.Context, dir, knob string, want int64,
	current func(ctx context.Context, dir, knob string) (int64, error), format func(int64) string) (bool, error) {
	cur, err := current(ctx, dir, knob)
	if err != nil {
		return false, err
	}
	if cur == want {
		return false, nil
	}
	if err := m.write(ctx, dir, knob, format(want)); err != nil {
		return false, err
	}
	return true, nil
}

func formatInt(v int64) string { return strconv.FormatInt(v, 10) }

// formatMax formats -1 as "max", as cgroup v2 spells unlimited.
func formatMax(v int64) string {
	if v < 0 {
		return "max"
	}
	return strconv.FormatInt(v, 10)
}
