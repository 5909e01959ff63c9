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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
)

// Pressure files as kernels write them.
const (
	// cpuPressure is a cpu.pressure of Linux 5.13 or later, with a full line.
	cpuPressure = "some avg10=0.21 avg60=0.66 avg300=10.87 total=4232774220\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	// oldCPUPressure is a cpu.pressure of a kernel before 5.13: no full line.
	oldCPUPressure = "some avg10=1.50 avg60=2.25 avg300=3.00 total=1000\n"
	// memoryPressure is a memory.pressure under reclaim.
	memoryPressure = "some avg10=12.34 avg60=5.60 avg300=1.00 total=98765\nfull avg10=100.00 avg60=3.02 avg300=0.50 total=4321\n"
)

var (
	cpuPressureParsed = cgroup.Pressure{
		Some:    cgroup.PressureLine{Avg10: 0.21, Avg60: 0.66, Avg300: 10.87, Total: 4232774220 * time.Microsecond},
		HasFull: true,
	}
	oldCPUPressureParsed = cgroup.Pressure{
		Some: cgroup.PressureLine{Avg10: 1.5, Avg60: 2.25, Avg300: 3, Total: time.Millisecond},
	}
	memoryPressureParsed = cgroup.Pressure{
		Some:    cgroup.PressureLine{Avg10: 12.34, Avg60: 5.6, Avg300: 1, Total: 98765 * time.Microsecond},
		Full:    cgroup.PressureLine{Avg10: 100, Avg60: 3.02, Avg300: 0.5, Total: 4321 * time.Microsecond},
		HasFull: true,
	}
)

// psiPlacement is where a kernel keeps the pressure files of cgroups.
type psiPlacement struct {
	name string
	v    cgroup.Version
	d    cgroup.Driver
	// path returns the pressure file of knob in dir.
	path func(l cgroup.Layout, dir string, r cgroup.PressureResource) string
}

// v1CPUAcctPressurePath is where kernels with PSI for cgroup v1 (Anolis) keep pressure files.
func v1CPUAcctPressurePath(l cgroup.Layout, dir string, r cgroup.PressureResource) string {
	return filepath.Join(l.Root, "cpuacct", dir, string(r)+".pressure")
}

var psiPlacements = func() []psiPlacement {
	var out []psiPlacement
	for _, d := range []cgroup.Driver{cgroup.Cgroupfs, cgroup.Systemd} {
		out = append(out,
			psiPlacement{name: "v2/" + string(d), v: cgroup.V2, d: d, path: cgroup.Layout.PressurePath},
			psiPlacement{name: "v1-hybrid/" + string(d), v: cgroup.V1, d: d, path: cgroup.Layout.PressurePath},
			psiPlacement{name: "v1-cpuacct/" + string(d), v: cgroup.V1, d: d, path: v1CPUAcctPressurePath},
		)
	}
	return out
}()

// writeFile writes content to path, creating its directory.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newPressureFS returns a fake cgroupfs for p, a Manager on it and the directory of a new burstable pod, with
// the pod's directory in the hybrid mount on v1 (as runc makes it).
func newPressureFS(t testing.TB, p psiPlacement) (*cgrouptest.FS, *cgroup.Manager, string) {
	t.Helper()
	fs := cgrouptest.NewFS(t, p.v, p.d)
	dir := fs.AddPod(corev1.PodQOSBurstable, testUID)
	if p.v == cgroup.V1 {
		if err := os.MkdirAll(filepath.Join(fs.Root(), "unified", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return fs, cgroup.NewManager(fs.Layout()), dir
}

func TestPressurePath(t *testing.T) {
	tests := map[string]struct {
		layout cgroup.Layout
		want   string
	}{
		"v2":        {layout: cgroup.Layout{Root: "/sys/fs/cgroup", Version: cgroup.V2}, want: "/sys/fs/cgroup/kubepods/pod1/io.pressure"},
		"v1 hybrid": {layout: cgroup.Layout{Root: "/host-cgroup", Version: cgroup.V1}, want: "/host-cgroup/unified/kubepods/pod1/io.pressure"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.layout.PressurePath("/kubepods/pod1", cgroup.PressureIO); got != tc.want {
				t.Errorf("PressurePath = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPressure(t *testing.T) {
	tests := map[string]struct {
		r       cgroup.PressureResource
		content string
		want    cgroup.Pressure
		wantErr string
	}{
		"cpu with a full line":   {r: cgroup.PressureCPU, content: cpuPressure, want: cpuPressureParsed},
		"cpu before Linux 5.13":  {r: cgroup.PressureCPU, content: oldCPUPressure, want: oldCPUPressureParsed},
		"memory":                 {r: cgroup.PressureMemory, content: memoryPressure, want: memoryPressureParsed},
		"io, no final newline":   {r: cgroup.PressureIO, content: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7", want: cgroup.Pressure{Full: cgroup.PressureLine{Total: 7 * time.Microsecond}, HasFull: true}},
		"malformed":              {r: cgroup.PressureCPU, content: "some avg10=x avg60=0.00 avg300=0.00 total=0\n", wantErr: `reading cpu.pressure in cgroup %s: parsing pressure line "some avg10=x avg60=0.00 avg300=0.00 total=0": field avg10: parsing "x": not a decimal`},
		"no some line":           {r: cgroup.PressureMemory, content: "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", wantErr: `reading memory.pressure in cgroup %s: parsing pressure "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n": no "some" line`},
		"unknown resource kind":  {r: "pids", wantErr: `pressure resource "pids": want cpu, memory or io`},
		"empty file":             {r: cgroup.PressureIO, content: "", wantErr: `reading io.pressure in cgroup %s: parsing pressure "": no "some" line`},
		"unknown lines are kept": {r: cgroup.PressureCPU, content: "some avg10=1 avg60=2 avg300=3 total=4\nnew avg10=9\n", want: cgroup.Pressure{Some: cgroup.PressureLine{Avg10: 1, Avg60: 2, Avg300: 3, Total: 4 * time.Microsecond}}},
	}
	for name, tc := range tests {
		for _, p := range psiPlacements {
			t.Run(name+"/"+p.name, func(t *testing.T) {
				fs, m, dir := newPressureFS(t, p)
				if tc.r != "pids" {
					writeFile(t, p.path(fs.Layout(), dir, tc.r), tc.content)
				}
				got, err := m.Pressure(testContext(t), dir, tc.r)
				if tc.wantErr != "" {
					want := tc.wantErr
					if strings.Contains(want, "%s") {
						want = fmt.Sprintf(want, dir)
					}
					checkErr(t, err, want, nil)
					return
				}
				if !checkErr(t, err, "", nil) {
					return
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("Pressure (-want,+got):\n%s", diff)
				}
			})
		}
	}
}

// TestPressureCPUAcctFirst: on cgroup v1 the cpuacct hierarchy's pressure files win over the hybrid mount's.
func TestPressureCPUAcctFirst(t *testing.T) {
	for _, d := range []cgroup.Driver{cgroup.Cgroupfs, cgroup.Systemd} {
		t.Run(string(d), func(t *testing.T) {
			fs, m, dir := newPressureFS(t, psiPlacement{v: cgroup.V1, d: d})
			writeFile(t, fs.Layout().PressurePath(dir, cgroup.PressureMemory), oldCPUPressure)
			writeFile(t, v1CPUAcctPressurePath(fs.Layout(), dir, cgroup.PressureMemory), memoryPressure)
			got, err := m.Pressure(testContext(t), dir, cgroup.PressureMemory)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(memoryPressureParsed, got); diff != "" {
				t.Errorf("Pressure (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestPressureMissing: the package's error contract for pressure files: a gone cgroup is ErrNotFound and logs
// nothing; a missing file, or on v1 a cgroup missing from the cgroup v2 hierarchy, is ErrNotSupported, logged
// once per file.
func TestPressureMissing(t *testing.T) {
	type layoutCase struct {
		v cgroup.Version
		// prepare changes the tree of the pod dir (and another pod's, other) before the calls.
		prepare func(t *testing.T, fs *cgrouptest.FS, dir, other string)
	}
	tests := map[string]struct {
		layouts map[string]layoutCase
		wantErr string // %[1]s is the directory
		wantIs  error
		wantLog []string
	}{
		"cgroup gone": {
			layouts: map[string]layoutCase{
				"v1": {v: cgroup.V1, prepare: func(t *testing.T, fs *cgrouptest.FS, dir, other string) {
					for _, d := range []string{dir, other} {
						fs.Remove(d)
						if err := os.RemoveAll(filepath.Join(fs.Root(), "unified", d)); err != nil {
							t.Fatal(err)
						}
					}
				}},
				"v2": {v: cgroup.V2, prepare: func(_ *testing.T, fs *cgrouptest.FS, dir, other string) {
					fs.Remove(dir)
					fs.Remove(other)
				}},
			},
			wantErr: "reading cpu.pressure: cgroup %[1]s", wantIs: cgroup.ErrNotFound,
		},
		"kernel without PSI": {
			layouts: map[string]layoutCase{
				"v1": {v: cgroup.V1}, // the hybrid mount has the directories, not the files
				"v2": {v: cgroup.V2},
			},
			wantErr: "cpu.pressure in cgroup %[1]s", wantIs: cgroup.ErrNotSupported,
			wantLog: []string{"Found cgroup knob unsupported, skipping it from now on without logging"},
		},
		"cgroup not in the hybrid mount": {
			layouts: map[string]layoutCase{
				"v1": {v: cgroup.V1, prepare: func(t *testing.T, fs *cgrouptest.FS, dir, other string) {
					for _, d := range []string{dir, other} {
						if err := os.RemoveAll(filepath.Join(fs.Root(), "unified", d)); err != nil {
							t.Fatal(err)
						}
					}
				}},
			},
			wantErr: "unified/cpu.pressure in cgroup %[1]s", wantIs: cgroup.ErrNotSupported,
			wantLog: []string{"Found cgroup knob unsupported, skipping it from now on without logging"},
		},
		"no hybrid mount": {
			layouts: map[string]layoutCase{
				"v1": {v: cgroup.V1, prepare: func(t *testing.T, fs *cgrouptest.FS, _, _ string) {
					if err := os.RemoveAll(filepath.Join(fs.Root(), "unified")); err != nil {
						t.Fatal(err)
					}
				}},
			},
			wantErr: "unified/cpu.pressure in cgroup %[1]s", wantIs: cgroup.ErrNotSupported,
			wantLog: []string{"Found cgroup knob unsupported, skipping it from now on without logging"},
		},
	}
	for name, tc := range tests {
		for lname, lc := range tc.layouts {
			t.Run(name+"/"+lname, func(t *testing.T) {
				fs, m, dir := newPressureFS(t, psiPlacement{v: lc.v, d: cgroup.Cgroupfs})
				other := fs.AddPod(corev1.PodQOSBestEffort, types.UID("other"))
				if lc.v == cgroup.V1 {
					writeFile(t, filepath.Join(fs.Root(), "unified", other, "memory.pressure"), memoryPressure)
				}
				if lc.prepare != nil {
					lc.prepare(t, fs, dir, other)
				}
				ctx, logged := logContext(t)
				for _, d := range []string{dir, dir, other} {
					_, err := m.Pressure(ctx, d, cgroup.PressureCPU)
					checkErr(t, err, fmt.Sprintf(tc.wantErr, d), tc.wantIs)
					if errors.Is(err, cgroup.ErrNotFound) && errors.Is(err, cgroup.ErrNotSupported) {
						t.Errorf("error %q is both ErrNotFound and ErrNotSupported", err)
					}
				}
				if diff := cmp.Diff(tc.wantLog, logged()); diff != "" {
					t.Errorf("logged (-want,+got):\n%s", diff)
				}
			})
		}
	}
	t.Run("bad directory", func(t *testing.T) {
		for _, p := range psiPlacements[:2] {
			_, m, _ := newPressureFS(t, p)
			_, err := m.Pressure(testContext(t), "/kubepods/../../etc", cgroup.PressureCPU)
			checkErr(t, err, `cgroup directory "/kubepods/../../etc"`, nil)
		}
	})
}

func TestNodePressure(t *testing.T) {
	tests := map[string]struct {
		r       cgroup.PressureResource
		content string // "-" means no file
		noDir   bool   // no <procRoot>/pressure: a kernel without PSI
		want    cgroup.Pressure
		wantErr string
		wantIs  error
	}{
		"cpu":                        {r: cgroup.PressureCPU, content: cpuPressure, want: cpuPressureParsed},
		"cpu before Linux 5.13":      {r: cgroup.PressureCPU, content: oldCPUPressure, want: oldCPUPressureParsed},
		"memory":                     {r: cgroup.PressureMemory, content: memoryPressure, want: memoryPressureParsed},
		"fields in another order":    {r: cgroup.PressureIO, content: "some total=5 avg300=0.3 avg60=0.2 avg10=0.1\n", want: cgroup.Pressure{Some: cgroup.PressureLine{Avg10: 0.1, Avg60: 0.2, Avg300: 0.3, Total: 5 * time.Microsecond}}},
		"integer averages":           {r: cgroup.PressureIO, content: "some avg10=100 avg60=0 avg300=7 total=0\n", want: cgroup.Pressure{Some: cgroup.PressureLine{Avg10: 100, Avg300: 7}}},
		"kernel without PSI":         {r: cgroup.PressureCPU, noDir: true, wantErr: "pressure/cpu", wantIs: cgroup.ErrNotSupported},
		"file missing":               {r: cgroup.PressureIO, content: "-", wantErr: "pressure/io", wantIs: cgroup.ErrNotSupported},
		"missing field":              {r: cgroup.PressureCPU, content: "some avg10=0.00 avg60=0.00 avg300=0.00\n", wantErr: "field total: missing field"},
		"not key=value":              {r: cgroup.PressureCPU, content: "some avg10=0.00 avg60 avg300=0.00 total=0\n", wantErr: `field "avg60": want key=value`},
		"negative average":           {r: cgroup.PressureCPU, content: "some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n", wantErr: `field avg10: parsing "-1.00": not a decimal`},
		"dot without fraction":       {r: cgroup.PressureCPU, content: "some avg10=1. avg60=0.00 avg300=0.00 total=0\n", wantErr: `field avg10: parsing "1.": not a decimal`},
		"too many digits":            {r: cgroup.PressureCPU, content: "some avg10=1.0000000000000000 avg60=0 avg300=0 total=0\n", wantErr: "not a decimal of at most 15 digits"},
		"negative total":             {r: cgroup.PressureCPU, content: "some avg10=0 avg60=0 avg300=0 total=-1\n", wantErr: `field total: parsing "-1": out of range`},
		"total beyond time.Duration": {r: cgroup.PressureCPU, content: "some avg10=0 avg60=0 avg300=0 total=9223372036854776\n", wantErr: "out of range"},
		"bad full line":              {r: cgroup.PressureMemory, content: "some avg10=0 avg60=0 avg300=0 total=0\nfull avg10=0\n", wantErr: `parsing pressure line "full avg10=0": field avg60: missing field`},
		"unknown resource":           {r: "pids", content: "-", wantErr: `pressure resource "pids"`, wantIs: cgroup.ErrInvalidValue},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			proc := t.TempDir()
			if !tc.noDir {
				if err := os.Mkdir(filepath.Join(proc, "pressure"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.content != "-" && !tc.noDir {
				writeFile(t, filepath.Join(proc, "pressure", string(tc.r)), tc.content)
			}
			got, err := cgroup.NodePressure(proc, tc.r)
			if tc.wantErr != "" {
				checkErr(t, err, tc.wantErr, tc.wantIs)
				return
			}
			if !checkErr(t, err, "", nil) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NodePressure (-want,+got):\n%s", diff)
			}
		})
	}
}

// BenchmarkPressure measures reading one pressure file of a pod, as the collector does three times per pod and
// round.
func BenchmarkPressure(b *testing.B) {
	for _, p := range psiPlacements[:3] {
		b.Run("placement="+p.name, func(b *testing.B) {
			_, ctx := ktesting.NewTestContext(b)
			fs, m, dir := newPressureFS(b, p)
			writeFile(b, p.path(fs.Layout(), dir, cgroup.PressureCPU), cpuPressure)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Pressure(ctx, dir, cgroup.PressureCPU); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
