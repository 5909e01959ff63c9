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
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
)

const testPageSize = 4096

// setupFunc returns a fake cgroupfs for c, a fresh Manager on it, and the
// directory of a new burstable pod.
type setupFunc func(t *testing.T, c combo) (*cgrouptest.FS, *cgroup.Manager, string)

// newSetup returns the setupFunc of the subtests of t. Building a fake
// cgroupfs takes dozens of files, so each layout gets one, shared by the
// subtests and removed with t; every call adds a pod of its own to it.
func newSetup(t *testing.T) setupFunc {
	fss := map[combo]*cgrouptest.FS{}
	pods := 0
	return func(_ *testing.T, c combo) (*cgrouptest.FS, *cgroup.Manager, string) {
		fs := fss[c]
		if fs == nil {
			fs = cgrouptest.NewFS(t, c.v, c.d)
			fss[c] = fs
		}
		pods++
		dir := fs.AddPod(corev1.PodQOSBurstable, types.UID(fmt.Sprintf("%s-%d", testUID, pods)))
		return fs, cgroup.NewManager(fs.Layout(), cgroup.WithPageSize(testPageSize)), dir
	}
}

// testContext returns a context with the test's logger.
func testContext(t *testing.T) context.Context {
	_, ctx := ktesting.NewTestContext(t)
	return ctx
}

// logContext returns a context whose logger keeps what is logged, and a
// function returning the messages logged so far.
func logContext(t *testing.T) (context.Context, func() []string) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(t.Context(), logger)
	return ctx, func() []string {
		var msgs []string
		for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
			msgs = append(msgs, e.Message)
		}
		return msgs
	}
}

// checkErr reports whether err matches wantErr (a substring, "" for no
// error) and wantIs; it returns false when the test must stop.
func checkErr(t *testing.T, err error, wantErr string, wantIs error) bool {
	t.Helper()
	if wantErr == "" && wantIs == nil {
		if err != nil {
			t.Errorf("unexpected error: %v", err)
			return false
		}
		return true
	}
	if err == nil {
		t.Errorf("got no error, want one containing %q (is %v)", wantErr, wantIs)
		return false
	}
	if !strings.Contains(err.Error(), wantErr) {
		t.Errorf("error %q does not contain %q", err, wantErr)
	}
	if wantIs != nil && !errors.Is(err, wantIs) {
		t.Errorf("error %q is not %v", err, wantIs)
	}
	return false
}

func TestCPUUsage(t *testing.T) {
	setup := newSetup(t)
	tests := map[string]struct {
		content map[cgroup.Version]string
		usage   time.Duration
		want    time.Duration
		wantErr map[cgroup.Version]string
	}{
		"fresh cgroup": {want: 0},
		"counter": {
			usage: 90*time.Second + 1500*time.Millisecond + 3*time.Microsecond,
			want:  90*time.Second + 1500*time.Millisecond + 3*time.Microsecond,
		},
		"malformed counter": {
			content: byVersion("12x\n", "usage_usec 12x\nnr_periods 0\n"),
			wantErr: byVersion(`parsing "12x": not an integer`, `field usage_usec: parsing "12x": not an integer`),
		},
		"empty file, missing field": {
			content: byVersion("\n", "user_usec 1\nsystem_usec 2\n"),
			wantErr: byVersion(`parsing "": not an integer`, "field usage_usec: missing field"),
		},
	}
	for name, tc := range tests {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, dir := setup(t, c)
				knob := byVersion("cpuacct.usage", "cpu.stat")[c.v]
				if tc.usage != 0 {
					fs.SetCPUUsage(dir, tc.usage)
				}
				if content, ok := tc.content[c.v]; ok {
					fs.WriteFile(dir, knob, content)
				}
				got, err := m.CPUUsage(testContext(t), dir)
				if wantErr := tc.wantErr[c.v]; wantErr != "" {
					checkErr(t, err, "reading "+knob+" in cgroup "+dir+": "+wantErr, nil)
					return
				}
				if checkErr(t, err, "", nil) && got != tc.want {
					t.Errorf("CPUUsage = %v, want %v", got, tc.want)
				}
			})
		}
	}
}

func TestMemoryStats(t *testing.T) {
	setup := newSetup(t)
	const mi = int64(1) << 20
	tests := map[string]struct {
		usage, inactiveFile int64
		want                cgroup.MemoryStats
	}{
		"fresh cgroup":                   {want: cgroup.MemoryStats{}},
		"inactive file cache subtracted": {usage: 100 * mi, inactiveFile: 30 * mi, want: cgroup.MemoryStats{Usage: 100 * mi, WorkingSet: 70 * mi}},
		"no page cache":                  {usage: 100 * mi, want: cgroup.MemoryStats{Usage: 100 * mi, WorkingSet: 100 * mi}},
		"floored at zero":                {usage: 10 * mi, inactiveFile: 30 * mi, want: cgroup.MemoryStats{Usage: 10 * mi, WorkingSet: 0}},
	}
	for name, tc := range tests {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, dir := setup(t, c)
				fs.SetMemory(dir, tc.usage, tc.inactiveFile)
				if c.v == cgroup.V1 {
					// v1 has both the local and the hierarchical field: the
					// hierarchical one (total_*) must be used.
					fs.SetStatField(dir, "memory.stat", "inactive_file", 1)
				}
				got, err := m.MemoryStats(testContext(t), dir)
				if !checkErr(t, err, "", nil) {
					return
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("MemoryStats (-want,+got):\n%s", diff)
				}
				ws, err := m.MemoryWorkingSet(testContext(t), dir)
				if err != nil || ws != tc.want.WorkingSet {
					t.Errorf("MemoryWorkingSet = %d, %v; want %d", ws, err, tc.want.WorkingSet)
				}
			})
		}
	}
	for _, c := range combos {
		t.Run("memory.stat without the field/"+c.String(), func(t *testing.T) {
			fs, m, dir := setup(t, c)
			fs.WriteFile(dir, "memory.stat", "anon 1\n")
			key := byVersion("total_inactive_file", "inactive_file")[c.v]
			_, err := m.MemoryStats(testContext(t), dir)
			checkErr(t, err, "reading memory.stat in cgroup "+dir+": field "+key+": missing field", nil)
		})
	}
}

func TestCPUThrottling(t *testing.T) {
	setup := newSetup(t)
	tests := map[string]struct {
		content map[cgroup.Version]string
		want    cgroup.Throttling
		wantErr string
		wantIs  error
	}{
		"fresh cgroup": {want: cgroup.Throttling{}},
		"throttled": {
			content: map[cgroup.Version]string{
				cgroup.V1: "nr_periods 120\nnr_throttled 30\nthrottled_time 2500000000\nnr_bursts 0\nburst_time 0\n",
				cgroup.V2: "usage_usec 9\nuser_usec 5\nsystem_usec 4\nnr_periods 120\nnr_throttled 30\nthrottled_usec 2500000\nnr_bursts 0\nburst_usec 0\n",
			},
			want: cgroup.Throttling{Periods: 120, ThrottledPeriods: 30, ThrottledTime: 2500 * time.Millisecond},
		},
		"malformed": {
			content: map[cgroup.Version]string{
				cgroup.V1: "nr_periods 1\nnr_throttled x\nthrottled_time 0\n",
				cgroup.V2: "usage_usec 0\nnr_periods 1\nnr_throttled x\nthrottled_usec 0\n",
			},
			wantErr: `field nr_throttled: parsing "x": not an integer`,
		},
	}
	for name, tc := range tests {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, dir := setup(t, c)
				if content, ok := tc.content[c.v]; ok {
					fs.WriteFile(dir, "cpu.stat", content)
				}
				got, err := m.CPUThrottling(testContext(t), dir)
				if !checkErr(t, err, tc.wantErr, tc.wantIs) {
					return
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("CPUThrottling (-want,+got):\n%s", diff)
				}
			})
		}
	}
	// On v2, cpu.stat lacks the throttling fields when the cpu controller is
	// not enabled in the directory: that is a missing feature, not an error
	// in the file.
	for _, d := range []cgroup.Driver{cgroup.Cgroupfs, cgroup.Systemd} {
		t.Run("v2 cpu controller off/"+string(d), func(t *testing.T) {
			fs, m, dir := setup(t, combo{cgroup.V2, d})
			fs.WriteFile(dir, "cpu.stat", "usage_usec 10\nuser_usec 5\nsystem_usec 5\n")
			_, err := m.CPUThrottling(testContext(t), dir)
			checkErr(t, err, "cpu.stat throttled_usec in cgroup "+dir, cgroup.ErrNotSupported)
		})
	}
}

func TestCFSQuotaRead(t *testing.T) {
	setup := newSetup(t)
	tests := map[string]struct {
		quota, period         string // v1 files
		cpuMax                string // v2 file
		wantQuota, wantPeriod int64
		wantErr               string
	}{
		"unlimited":    {quota: "-1", period: "100000", cpuMax: "max 100000", wantQuota: -1, wantPeriod: 100000},
		"limited":      {quota: "50000", period: "100000", cpuMax: "50000 100000", wantQuota: 50000, wantPeriod: 100000},
		"other period": {quota: "20000", period: "50000", cpuMax: "20000 50000\n", wantQuota: 20000, wantPeriod: 50000},
		"bad quota":    {quota: "5x", period: "100000", cpuMax: "5x 100000", wantErr: `parsing "5x": not an integer`},
		"bad period":   {quota: "5000", period: "1e5", cpuMax: "5000 1e5", wantErr: `parsing "1e5": not an integer`},
	}
	for name, tc := range tests {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, dir := setup(t, c)
				if c.v == cgroup.V1 {
					fs.WriteFile(dir, "cpu.cfs_quota_us", tc.quota)
					fs.WriteFile(dir, "cpu.cfs_period_us", tc.period)
				} else {
					fs.WriteFile(dir, "cpu.max", tc.cpuMax)
				}
				q, p, err := m.CFSQuota(testContext(t), dir)
				if !checkErr(t, err, tc.wantErr, nil) {
					return
				}
				if q != tc.wantQuota || p != tc.wantPeriod {
					t.Errorf("CFSQuota = %d, %d; want %d, %d", q, p, tc.wantQuota, tc.wantPeriod)
				}
			})
		}
	}
	for _, content := range []string{"50000", "", "max", "50000 100000 1", "50000  100000", "max max"} {
		t.Run(fmt.Sprintf("v2 malformed cpu.max %q", content), func(t *testing.T) {
			fs, m, dir := setup(t, combo{cgroup.V2, cgroup.Systemd})
			fs.WriteFile(dir, "cpu.max", content)
			if _, _, err := m.CFSQuota(testContext(t), dir); err == nil || !strings.Contains(err.Error(), "reading cpu.max in cgroup "+dir) {
				t.Errorf("CFSQuota = %v, want an error naming cpu.max and the cgroup", err)
			}
		})
	}
}

// setCase is one write of an integer knob.
type setCase struct {
	// initial is the knob's content before, by version; absent means the
	// content of a fresh cgroup.
	initial     map[cgroup.Version]string
	value       int64
	wantChanged bool
	// wantFile is the knob's content after, by version.
	wantFile map[cgroup.Version]string
	// wantRead is what the getter returns after, by version.
	wantRead map[cgroup.Version]int64
	wantErr  string
	wantIs   error
}

// both returns a by-version map with the same value for v1 and v2.
func both[T any](v T) map[cgroup.Version]T { return map[cgroup.Version]T{cgroup.V1: v, cgroup.V2: v} }

func byVersion[T any](v1, v2 T) map[cgroup.Version]T {
	return map[cgroup.Version]T{cgroup.V1: v1, cgroup.V2: v2}
}

// runSetCases runs cases on every combination: it writes the initial
// content, calls set, and checks the result, the file and whether the file
// was written at all.
func runSetCases(t *testing.T, knob map[cgroup.Version]string, cases map[string]setCase,
	set func(ctx context.Context, m *cgroup.Manager, dir string, value int64) (bool, error),
	get func(ctx context.Context, m *cgroup.Manager, dir string) (int64, error)) {
	t.Helper()
	setup := newSetup(t)
	for name, tc := range cases {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, dir := setup(t, c)
				k := knob[c.v]
				if content, ok := tc.initial[c.v]; ok {
					fs.WriteFile(dir, k, content)
				}
				before := fs.ReadFile(dir, k)
				changed, err := set(testContext(t), m, dir, tc.value)
				if tc.wantErr != "" || tc.wantIs != nil {
					checkErr(t, err, tc.wantErr, tc.wantIs)
					if changed || fs.Changed(dir, k) || fs.ReadFile(dir, k) != before {
						t.Errorf("a failed write changed %s: %q -> %q", k, before, fs.ReadFile(dir, k))
					}
					return
				}
				if !checkErr(t, err, "", nil) {
					return
				}
				if changed != tc.wantChanged {
					t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
				}
				if written := fs.Changed(dir, k); written != tc.wantChanged {
					t.Errorf("%s written = %v, want %v", k, written, tc.wantChanged)
				}
				want, ok := tc.wantFile[c.v]
				if !ok {
					want = before
				}
				if got := fs.ReadFile(dir, k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
				got, err := get(testContext(t), m, dir)
				if err != nil || got != tc.wantRead[c.v] {
					t.Errorf("read back %d, %v; want %d", got, err, tc.wantRead[c.v])
				}
			})
		}
	}
}

func TestSetCPUShares(t *testing.T) {
	runSetCases(t, byVersion("cpu.shares", "cpu.weight"), map[string]setCase{
		// Weights from kubelet's formula 1 + (shares-2)*9999/262142; shares
		// read back on v2 are (weight-1)*262142/9999 + 2.
		"fresh to 512": {value: 512, wantChanged: true, wantFile: byVersion("512", "20"), wantRead: byVersion[int64](512, 500)},
		"minimum":      {value: 2, wantChanged: true, wantFile: byVersion("2", "1"), wantRead: both[int64](2)},
		"maximum":      {value: 262144, wantChanged: true, wantFile: byVersion("262144", "10000"), wantRead: both[int64](262144)},
		"equal is skipped": {
			initial: byVersion("512", "20"), value: 512, wantRead: byVersion[int64](512, 500),
		},
		"same weight is skipped": {
			// 1024 and 1000 shares are both weight 39.
			initial: byVersion("1024", "39"), value: 1024, wantRead: byVersion[int64](1024, 998),
		},
		"too small": {value: 1, wantErr: "cpu.shares 1 for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
		"too large": {value: 262145, wantErr: "cpu.shares 262145 for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
		"malformed current value": {
			initial: both("lots"), value: 512, wantErr: `parsing "lots": not an integer`,
		},
	}, func(ctx context.Context, m *cgroup.Manager, dir string, v int64) (bool, error) {
		return m.SetCPUShares(ctx, dir, v)
	}, func(ctx context.Context, m *cgroup.Manager, dir string) (int64, error) {
		return m.CPUShares(ctx, dir)
	})
}

func TestSetCFSQuota(t *testing.T) {
	runSetCases(t, byVersion("cpu.cfs_quota_us", "cpu.max"), map[string]setCase{
		"fresh to 50ms": {value: 50000, wantChanged: true, wantFile: byVersion("50000", "50000 100000"), wantRead: both[int64](50000)},
		"back to unlimited": {
			initial: byVersion("50000", "50000 100000"), value: -1, wantChanged: true,
			wantFile: byVersion("-1", "max 100000"), wantRead: both[int64](-1),
		},
		"v2 keeps the period": {
			initial: byVersion("20000", "20000 50000"), value: 30000, wantChanged: true,
			wantFile: byVersion("30000", "30000 50000"), wantRead: both[int64](30000),
		},
		"minimum":              {value: 1000, wantChanged: true, wantFile: byVersion("1000", "1000 100000"), wantRead: both[int64](1000)},
		"unlimited is skipped": {value: -1, wantRead: both[int64](-1)},
		"equal is skipped":     {initial: byVersion("50000", "50000 100000"), value: 50000, wantRead: both[int64](50000)},
		"below 1ms":            {value: 999, wantErr: "CFS quota 999 us for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
		"zero":                 {value: 0, wantErr: "must be -1 (unlimited) or at least 1000", wantIs: cgroup.ErrInvalidValue},
		"negative":             {value: -2, wantErr: "CFS quota -2 us", wantIs: cgroup.ErrInvalidValue},
		"malformed current":    {initial: byVersion("5x", "5x 100000"), value: 50000, wantErr: `parsing "5x": not an integer`},
	}, func(ctx context.Context, m *cgroup.Manager, dir string, v int64) (bool, error) {
		return m.SetCFSQuota(ctx, dir, v)
	}, func(ctx context.Context, m *cgroup.Manager, dir string) (int64, error) {
		q, _, err := m.CFSQuota(ctx, dir)
		return q, err
	})
}

func TestSetCFSBurst(t *testing.T) {
	runSetCases(t, byVersion("cpu.cfs_burst_us", "cpu.max.burst"), map[string]setCase{
		"fresh to 5ms":      {value: 5000, wantChanged: true, wantFile: both("5000"), wantRead: both[int64](5000)},
		"back to zero":      {initial: both("5000"), value: 0, wantChanged: true, wantFile: both("0"), wantRead: both[int64](0)},
		"equal is skipped":  {initial: both("5000"), value: 5000, wantRead: both[int64](5000)},
		"negative":          {value: -1, wantErr: "-1 for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
		"malformed current": {initial: both("-"), value: 5000, wantErr: `parsing "-": not an integer`},
	}, func(ctx context.Context, m *cgroup.Manager, dir string, v int64) (bool, error) {
		return m.SetCFSBurst(ctx, dir, v)
	}, func(ctx context.Context, m *cgroup.Manager, dir string) (int64, error) {
		return m.CFSBurst(ctx, dir)
	})
}

func TestSetMemoryLimit(t *testing.T) {
	const gi = int64(1) << 30
	runSetCases(t, byVersion("memory.limit_in_bytes", "memory.max"), map[string]setCase{
		"fresh to 1Gi": {value: gi, wantChanged: true, wantFile: both("1073741824"), wantRead: both(gi)},
		"back to unlimited": {
			initial: both("1073741824"), value: -1, wantChanged: true, wantFile: byVersion("-1", "max"), wantRead: both[int64](-1),
		},
		// A fresh v1 cgroup reports the page-aligned maximum, v2 "max".
		"unlimited is skipped": {value: -1, wantRead: both[int64](-1)},
		"equal is skipped":     {initial: both("1073741824"), value: gi, wantRead: both(gi)},
		// The kernel keeps whole pages: 1Gi+100 bytes is the same limit.
		"same page is skipped": {initial: both("1073741824"), value: gi + 100, wantRead: both(gi)},
		"next page is written": {
			initial: both("1073741824"), value: gi + testPageSize, wantChanged: true,
			wantFile: both("1073745920"), wantRead: both(gi + testPageSize),
		},
		"zero":              {value: 0, wantErr: "0 for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
		"negative":          {value: -2, wantErr: "-2 for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
		"malformed current": {initial: both("1G"), value: gi, wantErr: `parsing "1G": not an integer`},
	}, func(ctx context.Context, m *cgroup.Manager, dir string, v int64) (bool, error) {
		return m.SetMemoryLimit(ctx, dir, v)
	}, func(ctx context.Context, m *cgroup.Manager, dir string) (int64, error) {
		return m.MemoryLimit(ctx, dir)
	})
}

func TestSetMemoryHigh(t *testing.T) {
	const mi = int64(1) << 20
	// On v1 the tests play a kernel that has memory.high (Anolis); a fresh
	// fake v1 cgroup has none (see TestNotSupported).
	unlimited := byVersion("9223372036854771712", "max")
	runSetCases(t, both("memory.high"), map[string]setCase{
		"unlimited to 512Mi": {initial: unlimited, value: 512 * mi, wantChanged: true, wantFile: both("536870912"), wantRead: both(512 * mi)},
		"back to unlimited": {
			initial: both("536870912"), value: -1, wantChanged: true, wantFile: byVersion("-1", "max"), wantRead: both[int64](-1),
		},
		"unlimited is skipped": {initial: unlimited, value: -1, wantRead: both[int64](-1)},
		"equal is skipped":     {initial: both("536870912"), value: 512 * mi, wantRead: both(512 * mi)},
		"zero":                 {initial: unlimited, value: 0, wantErr: "memory.high 0 for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
	}, func(ctx context.Context, m *cgroup.Manager, dir string, v int64) (bool, error) {
		return m.SetMemoryHigh(ctx, dir, v)
	}, func(ctx context.Context, m *cgroup.Manager, dir string) (int64, error) {
		return m.MemoryHigh(ctx, dir)
	})
}

func TestCPUSet(t *testing.T) {
	setup := newSetup(t)
	tests := map[string]struct {
		configured, effective string // cpuset.cpus, and on v2 cpuset.cpus.effective
		set                   cpuset.CPUSet
		wantChanged           bool
		wantFile              string
		wantRead              map[cgroup.Version]string
		wantErr               string
		wantIs                error
	}{
		"set": {
			configured: "0-7", effective: "0-7", set: cpuset.New(2, 3, 5), wantChanged: true,
			wantFile: "2-3,5", wantRead: both("2-3,5"),
		},
		"equal is skipped": {
			configured: "2-3,5", effective: "2-3,5", set: cpuset.New(5, 2, 3), wantFile: "2-3,5", wantRead: both("2-3,5"),
		},
		// v2: an empty cpuset.cpus inherits the parent's; reading gives the
		// effective set, and setting that same set still writes it. v1: an
		// empty cpuset.cpus is a cgroup nobody configured.
		"empty is read as effective on v2 and written": {
			configured: "", effective: "0-3", set: cpuset.New(0, 1, 2, 3), wantChanged: true,
			wantFile: "0-3", wantRead: both("0-3"),
		},
		"empty set": {configured: "0-7", effective: "0-7", set: cpuset.New(), wantErr: "cpuset.cpus for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
		"malformed current": {
			configured: "0-x", effective: "0-7", set: cpuset.New(1), wantErr: "reading cpuset.cpus in cgroup /kubepods",
		},
	}
	for name, tc := range tests {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, dir := setup(t, c)
				fs.WriteFile(dir, "cpuset.cpus", tc.configured)
				if c.v == cgroup.V2 {
					fs.WriteFile(dir, "cpuset.cpus.effective", tc.effective)
				}
				changed, err := m.SetCPUSet(testContext(t), dir, tc.set)
				if tc.wantErr != "" {
					checkErr(t, err, tc.wantErr, tc.wantIs)
					if fs.Changed(dir, "cpuset.cpus") {
						t.Errorf("a failed write changed cpuset.cpus")
					}
					return
				}
				if !checkErr(t, err, "", nil) {
					return
				}
				if changed != tc.wantChanged || fs.Changed(dir, "cpuset.cpus") != tc.wantChanged {
					t.Errorf("changed = %v, written = %v; want %v", changed, fs.Changed(dir, "cpuset.cpus"), tc.wantChanged)
				}
				if got := fs.ReadFile(dir, "cpuset.cpus"); got != tc.wantFile {
					t.Errorf("cpuset.cpus = %q, want %q", got, tc.wantFile)
				}
				got, err := m.CPUSet(testContext(t), dir)
				if err != nil || got.String() != tc.wantRead[c.v] {
					t.Errorf("CPUSet = %q, %v; want %q", got.String(), err, tc.wantRead[c.v])
				}
			})
		}
	}
	for _, c := range combos {
		t.Run("empty read/"+c.String(), func(t *testing.T) {
			fs, m, dir := setup(t, c)
			fs.WriteFile(dir, "cpuset.cpus", "\n")
			want := byVersion("", "0-3")[c.v]
			if c.v == cgroup.V2 {
				fs.WriteFile(dir, "cpuset.cpus.effective", "0-3\n")
			}
			got, err := m.CPUSet(testContext(t), dir)
			if err != nil || got.String() != want {
				t.Errorf("CPUSet = %q, %v; want %q", got.String(), err, want)
			}
		})
	}
}

// op is one Manager call on a directory, and the knob file it needs by
// version.
type op struct {
	call func(ctx context.Context, m *cgroup.Manager, dir string) error
	knob map[cgroup.Version]string
}

func ops() map[string]op {
	return map[string]op{
		"CPUUsage": {knob: byVersion("cpuacct.usage", "cpu.stat"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.CPUUsage(ctx, dir)
			return err
		}},
		"MemoryStats": {knob: byVersion("memory.usage_in_bytes", "memory.current"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.MemoryStats(ctx, dir)
			return err
		}},
		"MemoryWorkingSet": {knob: both("memory.stat"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.MemoryWorkingSet(ctx, dir)
			return err
		}},
		"CPUThrottling": {knob: both("cpu.stat"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.CPUThrottling(ctx, dir)
			return err
		}},
		"CPUShares": {knob: byVersion("cpu.shares", "cpu.weight"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.CPUShares(ctx, dir)
			return err
		}},
		"SetCPUShares": {knob: byVersion("cpu.shares", "cpu.weight"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.SetCPUShares(ctx, dir, 512)
			return err
		}},
		"CFSQuota": {knob: byVersion("cpu.cfs_quota_us", "cpu.max"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, _, err := m.CFSQuota(ctx, dir)
			return err
		}},
		"CFSQuota period": {knob: byVersion("cpu.cfs_period_us", "cpu.max"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, _, err := m.CFSQuota(ctx, dir)
			return err
		}},
		"SetCFSQuota": {knob: byVersion("cpu.cfs_quota_us", "cpu.max"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.SetCFSQuota(ctx, dir, 50000)
			return err
		}},
		"CFSBurst": {knob: byVersion("cpu.cfs_burst_us", "cpu.max.burst"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.CFSBurst(ctx, dir)
			return err
		}},
		"SetCFSBurst": {knob: byVersion("cpu.cfs_burst_us", "cpu.max.burst"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.SetCFSBurst(ctx, dir, 1000)
			return err
		}},
		"CPUSet": {knob: both("cpuset.cpus"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.CPUSet(ctx, dir)
			return err
		}},
		"SetCPUSet": {knob: both("cpuset.cpus"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.SetCPUSet(ctx, dir, cpuset.New(1))
			return err
		}},
		"SetCPUSetTree": {knob: both("cpuset.cpus"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.SetCPUSetTree(ctx, []string{dir}, cpuset.New(1))
			return err
		}},
		"MemoryLimit": {knob: byVersion("memory.limit_in_bytes", "memory.max"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.MemoryLimit(ctx, dir)
			return err
		}},
		"SetMemoryLimit": {knob: byVersion("memory.limit_in_bytes", "memory.max"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.SetMemoryLimit(ctx, dir, 1<<30)
			return err
		}},
		"MemoryHigh": {knob: both("memory.high"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.MemoryHigh(ctx, dir)
			return err
		}},
		"SetMemoryHigh": {knob: both("memory.high"), call: func(ctx context.Context, m *cgroup.Manager, dir string) error {
			_, err := m.SetMemoryHigh(ctx, dir, 1<<30)
			return err
		}},
	}
}

// TestNotFound: every call on a directory that is gone returns ErrNotFound
// and logs nothing.
func TestNotFound(t *testing.T) {
	setup := newSetup(t)
	for name, o := range ops() {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, dir := setup(t, c)
				fs.Remove(dir)
				ctx, logged := logContext(t)
				err := o.call(ctx, m, dir)
				checkErr(t, err, "cgroup "+dir, cgroup.ErrNotFound)
				if errors.Is(err, cgroup.ErrNotSupported) {
					t.Errorf("error %q is also ErrNotSupported", err)
				}
				if msgs := logged(); len(msgs) != 0 {
					t.Errorf("logged %q, want nothing", msgs)
				}
			})
		}
	}
}

// TestNotSupported: a knob file missing from an existing directory gives
// ErrNotSupported, logged once per knob however many calls and directories.
func TestNotSupported(t *testing.T) {
	setup := newSetup(t)
	for name, o := range ops() {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, dir := setup(t, c)
				_, _, other := setup(t, c)
				knob := o.knob[c.v]
				for _, d := range []string{dir, other} {
					if knob == "memory.high" && c.v == cgroup.V1 {
						continue // a fresh fake v1 cgroup has no memory.high, like a stock kernel
					}
					fs.RemoveFile(d, knob)
				}
				ctx, logged := logContext(t)
				for _, d := range []string{dir, dir, other} {
					err := o.call(ctx, m, d)
					checkErr(t, err, knob+" in cgroup "+d, cgroup.ErrNotSupported)
				}
				want := []string{"Found cgroup knob unsupported, skipping it from now on without logging"}
				if diff := cmp.Diff(want, logged()); diff != "" {
					t.Errorf("logged (-want,+got):\n%s", diff)
				}
			})
		}
	}
}

func TestBadDir(t *testing.T) {
	setup := newSetup(t)
	for name, o := range ops() {
		for _, dir := range []string{"kubepods", "/kubepods/../../etc"} {
			t.Run(name+"/"+dir, func(t *testing.T) {
				_, m, _ := setup(t, combos[0])
				err := o.call(testContext(t), m, dir)
				checkErr(t, err, fmt.Sprintf("cgroup directory %q", dir), nil)
			})
		}
	}
}

// TestSetCPUSetTree checks the order of writes: on v1, after every write,
// each directory's CPUs must be within its parent's, as the kernel demands.
func TestSetCPUSetTree(t *testing.T) {
	setup := newSetup(t)
	trees := 0
	type write struct{ Dir, Value string }
	tests := map[string]struct {
		from       string
		to         cpuset.CPUSet
		want       map[cgroup.Version][]write
		wantChange bool
	}{
		"grow is written top-down": {
			from: "0-1", to: cpuset.New(0, 1, 2, 3), wantChange: true,
			want: both([]write{{"qos", "0-3"}, {"pod", "0-3"}, {"container", "0-3"}}),
		},
		"shrink is written bottom-up": {
			from: "0-3", to: cpuset.New(0, 1), wantChange: true,
			want: byVersion(
				[]write{{"container", "0-1"}, {"pod", "0-1"}, {"qos", "0-1"}},
				[]write{{"qos", "0-1"}, {"pod", "0-1"}, {"container", "0-1"}},
			),
		},
		"move goes through the union on v1": {
			from: "0-1", to: cpuset.New(2, 3), wantChange: true,
			want: byVersion(
				[]write{{"qos", "0-3"}, {"pod", "0-3"}, {"container", "0-3"}, {"container", "2-3"}, {"pod", "2-3"}, {"qos", "2-3"}},
				[]write{{"qos", "2-3"}, {"pod", "2-3"}, {"container", "2-3"}},
			),
		},
		"equal writes nothing": {from: "2-3", to: cpuset.New(2, 3), want: both([]write(nil))},
	}
	for name, tc := range tests {
		for _, c := range combos {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				fs, m, _ := setup(t, c)
				// The tree is the besteffort QoS directory, shared by the
				// subtests, and a pod and container of this subtest's own.
				trees++
				uid := types.UID(fmt.Sprintf("tree-%d", trees))
				qos := fs.Layout().QoSDir(corev1.PodQOSBestEffort)
				pod := fs.AddPod(corev1.PodQOSBestEffort, uid)
				container := fs.AddContainer(corev1.PodQOSBestEffort, uid, "containerd://c1")
				dirs := []string{qos, pod, container}
				names := map[string]string{qos: "qos", pod: "pod", container: "container"}
				for _, d := range dirs {
					fs.WriteFile(d, "cpuset.cpus", tc.from)
				}
				var got []write
				cgroup.SetAfterWrite(m, func(dir, knob, value string) {
					got = append(got, write{names[dir], value})
					if c.v != cgroup.V1 {
						return
					}
					for i := 1; i < len(dirs); i++ {
						parent, _ := cpuset.Parse(fs.ReadFile(dirs[i-1], "cpuset.cpus"))
						child, _ := cpuset.Parse(fs.ReadFile(dirs[i], "cpuset.cpus"))
						if !child.IsSubsetOf(parent) {
							t.Errorf("after writing %s=%s: %s has %s, outside its parent's %s", names[dir], value, names[dirs[i]], child, parent)
						}
					}
				})
				changed, err := m.SetCPUSetTree(testContext(t), dirs, tc.to)
				if err != nil || changed != tc.wantChange {
					t.Fatalf("SetCPUSetTree = %v, %v; want %v, nil", changed, err, tc.wantChange)
				}
				if diff := cmp.Diff(tc.want[c.v], got); diff != "" {
					t.Errorf("writes (-want,+got):\n%s", diff)
				}
				for _, d := range dirs {
					if got := fs.ReadFile(d, "cpuset.cpus"); got != tc.to.String() {
						t.Errorf("%s cpuset.cpus = %q, want %q", names[d], got, tc.to.String())
					}
				}
			})
		}
	}
	t.Run("empty set", func(t *testing.T) {
		_, m, dir := setup(t, combos[0])
		_, err := m.SetCPUSetTree(testContext(t), []string{dir}, cpuset.New())
		checkErr(t, err, "cpuset.cpus for cgroups ["+dir+"]: empty set", cgroup.ErrInvalidValue)
	})
	t.Run("a gone child stops the walk", func(t *testing.T) {
		fs, m, dir := setup(t, combos[0])
		gone := dir + "/gone"
		changed, err := m.SetCPUSetTree(testContext(t), []string{dir, gone}, cpuset.New(0, 1, 2, 3, 4, 5, 6, 7, 8))
		checkErr(t, err, "cgroup "+gone, cgroup.ErrNotFound)
		if !changed || fs.ReadFile(dir, "cpuset.cpus") != "0-8" {
			t.Errorf("changed = %v, parent cpuset.cpus = %q; want the parent grown first", changed, fs.ReadFile(dir, "cpuset.cpus"))
		}
	})
}
