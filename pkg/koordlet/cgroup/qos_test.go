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
	"strconv"
	"strings"
	"testing"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

func TestSetIntKnob(t *testing.T) {
	for _, k := range []cgroup.IntKnob{cgroup.KnobCPUIdle, cgroup.KnobCPUBVTWarpNs, cgroup.KnobMemoryWmarkMinAdj} {
		t.Run(k.Name, func(t *testing.T) {
			runSetCases(t, both(k.Name), map[string]setCase{
				"set the max":       {initial: both("0"), value: k.Max, wantChanged: true, wantFile: both(itoa(k.Max)), wantRead: both(k.Max)},
				"set the min":       {initial: both("1"), value: k.Min, wantChanged: true, wantFile: both(itoa(k.Min)), wantRead: both(k.Min)},
				"equal is skipped":  {initial: both(itoa(k.Max)), value: k.Max, wantRead: both(k.Max)},
				"above the range":   {initial: both("0"), value: k.Max + 1, wantErr: k.Name + " " + itoa(k.Max+1) + " for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
				"below the range":   {initial: both("0"), value: k.Min - 1, wantErr: "must be within", wantIs: cgroup.ErrInvalidValue},
				"malformed content": {initial: both("x"), value: k.Max, wantErr: "not an integer"},
			}, func(ctx context.Context, m *cgroup.Manager, dir string, v int64) (bool, error) {
				return m.SetInt(ctx, dir, k, v)
			}, func(ctx context.Context, m *cgroup.Manager, dir string) (int64, error) {
				return m.Int(ctx, dir, k)
			})
		})
	}
}

func TestSetMemoryProtection(t *testing.T) {
	const mi = int64(1) << 20
	for name, knob := range map[string]struct {
		file string
		set  func(*cgroup.Manager) func(context.Context, string, int64) (bool, error)
		get  func(*cgroup.Manager) func(context.Context, string) (int64, error)
	}{
		"min": {file: "memory.min",
			set: func(m *cgroup.Manager) func(context.Context, string, int64) (bool, error) { return m.SetMemoryMin },
			get: func(m *cgroup.Manager) func(context.Context, string) (int64, error) { return m.MemoryMin }},
		"low": {file: "memory.low",
			set: func(m *cgroup.Manager) func(context.Context, string, int64) (bool, error) { return m.SetMemoryLow },
			get: func(m *cgroup.Manager) func(context.Context, string) (int64, error) { return m.MemoryLow }},
	} {
		t.Run(name, func(t *testing.T) {
			runSetCases(t, both(knob.file), map[string]setCase{
				"protect 256Mi":         {initial: both("0"), value: 256 * mi, wantChanged: true, wantFile: both("268435456"), wantRead: both(256 * mi)},
				"back to none":          {initial: both("268435456"), value: 0, wantChanged: true, wantFile: both("0"), wantRead: both[int64](0)},
				"equal in pages":        {initial: both("268435456"), value: 256*mi + 100, wantRead: both(256 * mi)},
				"max is replaced":       {initial: both("max"), value: 0, wantChanged: true, wantFile: both("0"), wantRead: both[int64](0)},
				"negative is refused":   {initial: both("0"), value: -1, wantErr: knob.file + " -1 for cgroup /kubepods", wantIs: cgroup.ErrInvalidValue},
				"malformed is an error": {initial: both("lots"), value: 0, wantErr: "not an integer"},
			}, func(ctx context.Context, m *cgroup.Manager, dir string, v int64) (bool, error) {
				return knob.set(m)(ctx, dir, v)
			}, func(ctx context.Context, m *cgroup.Manager, dir string) (int64, error) {
				return knob.get(m)(ctx, dir)
			})
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestProcs(t *testing.T) {
	setup := newSetup(t)
	for _, c := range combos {
		t.Run(c.String(), func(t *testing.T) {
			fs, m, dir := setup(t, c)
			fs.WriteFile(dir, "cgroup.procs", "12\n345\n")
			got, err := m.Procs(testContext(t), dir)
			if err != nil || len(got) != 2 || got[0] != 12 || got[1] != 345 {
				t.Errorf("Procs = %v, %v; want [12 345]", got, err)
			}
			fs.WriteFile(dir, "cgroup.procs", "")
			if got, err := m.Procs(testContext(t), dir); err != nil || len(got) != 0 {
				t.Errorf("Procs of an empty cgroup = %v, %v; want none", got, err)
			}
			fs.WriteFile(dir, "cgroup.procs", "12\nabc\n")
			if _, err := m.Procs(testContext(t), dir); err == nil || !strings.Contains(err.Error(), `"abc" is not a PID`) {
				t.Errorf("Procs of a malformed file: %v, want an error naming the line", err)
			}
		})
	}
}
