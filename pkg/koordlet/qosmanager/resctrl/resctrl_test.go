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

package resctrl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

var layouts = []struct {
	v cgroup.Version
	d cgroup.Driver
}{{cgroup.V1, cgroup.Cgroupfs}, {cgroup.V1, cgroup.Systemd}, {cgroup.V2, cgroup.Cgroupfs}, {cgroup.V2, cgroup.Systemd}}

// intel is the resctrl tree of a two-socket Intel node with 11 L3 ways per socket and MBA in steps of 10 %.
var intel = map[string]string{
	"info/L3/cbm_mask":       "7ff\n",
	"info/L3/min_cbm_bits":   "1\n",
	"info/L3/num_closids":    "16\n",
	"info/MB/min_bandwidth":  "10\n",
	"info/MB/bandwidth_gran": "10\n",
	"info/MB/num_closids":    "8\n",
	"info/last_cmd_status":   "ok\n",
	"schemata":               "L3:0=7ff;1=7ff\nMB:0=100;1=100\n",
	"tasks":                  "1\n2\n3\n",
}

// with returns base with the files of changes set, and those set to "" removed.
func with(base map[string]string, changes map[string]string) map[string]string {
	out := maps.Clone(base)
	for k, v := range changes {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// stamp is the modification time of the files the tests write, to tell whether the strategy wrote them since.
var stamp = time.Unix(1_000_000_000, 0)

// env is a node with a fake resctrl tree and a fake cgroupfs holding one pod of each class, with threads:
// lse (LSE, 101), lsr (LSR, 201 and 202), web (LS, 301), batch (BE, 401 and 402 in its container, 499 in its
// sandbox) and sys (SYSTEM, 501).
type env struct {
	t        *testing.T
	root     string
	fs       *cgrouptest.FS
	pods     []*corev1.Pod
	batchCtr string
	metrics  *Metrics
	strategy *Strategy
}

func newEnv(t *testing.T, v cgroup.Version, d cgroup.Driver, files map[string]string) *env {
	t.Helper()
	e := &env{t: t, root: t.TempDir(), fs: cgrouptest.NewFS(t, v, d), metrics: NewMetrics()}
	for name, content := range files {
		e.write(name, content)
	}
	type podSpec struct {
		name    string
		qos     extension.QoSClass
		kube    corev1.PodQOSClass
		threads string
	}
	for _, p := range []podSpec{
		{"lse", extension.QoSLSE, corev1.PodQOSGuaranteed, "101\n"},
		{"lsr", extension.QoSLSR, corev1.PodQOSGuaranteed, "201\n202\n"},
		{"web", extension.QoSLS, corev1.PodQOSBurstable, "301\n"},
		{"batch", extension.QoSBE, corev1.PodQOSBestEffort, "401\n402\n"},
		{"sys", extension.QoSSystem, corev1.PodQOSBurstable, "501\n"},
	} {
		pod := qostest.Pod(p.name, qostest.QoS(p.qos), qostest.KubeQoS(p.kube), qostest.Container("app", "containerd://"+p.name, nil, nil))
		e.pods = append(e.pods, pod)
		dir := e.fs.AddContainer(p.kube, pod.UID, "containerd://"+p.name)
		e.fs.WriteFile(dir, threadsKnob(e.fs.Layout()), p.threads)
		if p.name == "batch" {
			e.batchCtr = dir
			// The sandbox is not in the pod's status, but its cgroup is under the pod's.
			sandbox := e.fs.AddContainer(p.kube, pod.UID, "containerd://sandbox")
			e.fs.WriteFile(sandbox, threadsKnob(e.fs.Layout()), "499\n")
		}
	}
	e.strategy = New(e.root, cgroup.NewManager(e.fs.Layout()), WithMetrics(e.metrics))
	return e
}

// write writes a file of the resctrl tree, with an old modification time.
func (e *env) write(name, content string) {
	e.t.Helper()
	path := filepath.Join(e.root, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		e.t.Fatal(err)
	}
}

// read returns a file of the resctrl tree, "<none>" when it does not exist.
func (e *env) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, name))
	if errors.Is(err, fs.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// written reports whether the strategy wrote a file of the resctrl tree since the test did.
func (e *env) written(name string) bool {
	e.t.Helper()
	info, err := os.Stat(filepath.Join(e.root, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return !info.ModTime().Equal(stamp)
}

// groups returns the schemata and tasks of the LSR, LS and BE groups.
func (e *env) groups() map[string][2]string {
	e.t.Helper()
	out := map[string][2]string{}
	for _, g := range []string{GroupLSR, GroupLS, GroupBE} {
		out[g] = [2]string{e.read(g + "/schemata"), e.read(g + "/tasks")}
	}
	return out
}

func (e *env) runCtx(ctx context.Context, strategy *slov1alpha1.ResourceQOSStrategy) error {
	slo := qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: strategy})
	return e.strategy.Run(ctx, qostest.State(qostest.Node("8", "16Gi"), slo, qostest.Cache(), e.pods...))
}

func (e *env) run(strategy *slov1alpha1.ResourceQOSStrategy) error {
	e.t.Helper()
	_, ctx := ktesting.NewTestContext(e.t)
	return e.runCtx(ctx, strategy)
}

// resctrl returns a strategy whose classes set resctrlQOS to the given values (nil: left to the defaults).
func resctrl(lsr, ls, be *slov1alpha1.ResctrlQOSCfg) *slov1alpha1.ResourceQOSStrategy {
	class := func(c *slov1alpha1.ResctrlQOSCfg) *slov1alpha1.ResourceQOS {
		if c == nil {
			return nil
		}
		return &slov1alpha1.ResourceQOS{ResctrlQOS: c}
	}
	return &slov1alpha1.ResourceQOSStrategy{LSRClass: class(lsr), LSClass: class(ls), BEClass: class(be)}
}

func on() *slov1alpha1.ResctrlQOSCfg { return &slov1alpha1.ResctrlQOSCfg{Enable: ptr.To(true)} }

func off() *slov1alpha1.ResctrlQOSCfg { return &slov1alpha1.ResctrlQOSCfg{Enable: ptr.To(false)} }

// cfg returns an enabled resctrlQOS with a cache range and an MBA percent.
func cfg(start, end, mba int64) *slov1alpha1.ResctrlQOSCfg {
	return &slov1alpha1.ResctrlQOSCfg{Enable: ptr.To(true), ResctrlQOS: slov1alpha1.ResctrlQOS{
		CATRangeStartPercent: ptr.To(start), CATRangeEndPercent: ptr.To(end), MBAPercent: ptr.To(mba),
	}}
}

const full = "L3:0=7ff;1=7ff\nMB:0=100;1=100\n"

// With every class on at the defaults, each class's group gets its mask and its pods' threads, on every cgroup
// layout; SYSTEM pods stay in the root group.
func TestDefaultsPerClass(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			e := newEnv(t, l.v, l.d, intel)
			if err := e.run(resctrl(on(), on(), on())); err != nil {
				t.Fatal(err)
			}
			want := map[string][2]string{
				GroupLSR: {full, "101\n201\n202\n"},
				GroupLS:  {full, "301\n"},
				GroupBE:  {"L3:0=f;1=f\nMB:0=100;1=100\n", "401\n402\n499\n"},
			}
			if diff := cmp.Diff(want, e.groups()); diff != "" {
				t.Errorf("groups (-want,+got):\n%s", diff)
			}
			if got := e.read("tasks"); got != "1\n2\n3\n" {
				t.Errorf("root tasks = %q, want them untouched", got)
			}
		})
	}
}

// Custom ranges and MBA percents, on caches of 11, 12 and 20 ways.
func TestCustomRanges(t *testing.T) {
	cases := map[string]struct {
		files    map[string]string
		strategy *slov1alpha1.ResourceQOSStrategy
		want     map[string]string
	}{
		"11-ways": {
			files:    intel,
			strategy: resctrl(cfg(0, 100, 100), cfg(10, 50, 80), cfg(0, 30, 35)),
			want:     map[string]string{GroupLSR: full, GroupLS: "L3:0=3c;1=3c\nMB:0=80;1=80\n", GroupBE: "L3:0=f;1=f\nMB:0=40;1=40\n"},
		},
		"12-ways": {
			files:    with(intel, map[string]string{"info/L3/cbm_mask": "fff\n", "schemata": "L3:0=fff;1=fff\nMB:0=100;1=100\n"}),
			strategy: resctrl(cfg(50, 100, 100), cfg(25, 75, 100), cfg(0, 30, 1)),
			want: map[string]string{GroupLSR: "L3:0=fc0;1=fc0\nMB:0=100;1=100\n", GroupLS: "L3:0=1f8;1=1f8\nMB:0=100;1=100\n",
				GroupBE: "L3:0=f;1=f\nMB:0=10;1=10\n"},
		},
		"20-ways": {
			files:    with(intel, map[string]string{"info/L3/cbm_mask": "fffff\n", "schemata": "L3:0=fffff;1=fffff\nMB:0=100;1=100\n"}),
			strategy: resctrl(cfg(95, 100, 100), cfg(0, 99, 99), cfg(10, 50, 0)),
			want: map[string]string{GroupLSR: "L3:0=80000;1=80000\nMB:0=100;1=100\n", GroupLS: "L3:0=fffff;1=fffff\nMB:0=100;1=100\n",
				GroupBE: "L3:0=3fc;1=3fc\nMB:0=10;1=10\n"},
		},
		"one-domain-fine-grained-mba": {
			files: with(intel, map[string]string{"info/MB/min_bandwidth": "5\n", "info/MB/bandwidth_gran": "1\n",
				"schemata": "L3:0=7ff\nMB:0=100\n"}),
			strategy: resctrl(off(), off(), cfg(0, 30, 3)),
			want:     map[string]string{GroupLSR: "<none>", GroupLS: "<none>", GroupBE: "L3:0=f\nMB:0=5\n"},
		},
		"no-mba-granularity-files": {
			files:    with(intel, map[string]string{"info/MB/min_bandwidth": "", "info/MB/bandwidth_gran": ""}),
			strategy: resctrl(off(), off(), cfg(0, 30, 35)),
			want:     map[string]string{GroupLSR: "<none>", GroupLS: "<none>", GroupBE: "L3:0=f;1=f\nMB:0=40;1=40\n"},
		},
		"cdp": {
			files: with(intel, map[string]string{"info/L3/cbm_mask": "", "info/L3CODE/cbm_mask": "7ff\n", "info/L3DATA/cbm_mask": "7ff\n",
				"schemata": "L3CODE:0=7ff;1=7ff\nL3DATA:0=7ff;1=7ff\nMB:0=100;1=100\n"}),
			strategy: resctrl(off(), off(), on()),
			want:     map[string]string{GroupLSR: "<none>", GroupLS: "<none>", GroupBE: "L3CODE:0=f;1=f\nL3DATA:0=f;1=f\nMB:0=100;1=100\n"},
		},
		"amd": {
			files: with(intel, map[string]string{"info/L3/cbm_mask": "ffff\n", "info/MB/min_bandwidth": "0\n", "info/MB/bandwidth_gran": "1\n",
				"schemata": "L3:0=ffff;1=ffff;2=ffff;3=ffff\nMB:0=2048;1=2048;2=2048;3=2048\n"}),
			strategy: resctrl(on(), off(), cfg(0, 30, 50)),
			want: map[string]string{GroupLSR: "L3:0=ffff;1=ffff;2=ffff;3=ffff\nMB:0=2048;1=2048;2=2048;3=2048\n", GroupLS: "<none>",
				GroupBE: "L3:0=1f;1=1f;2=1f;3=1f\nMB:0=80;1=80;2=80;3=80\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, cgroup.V2, cgroup.Systemd, tc.files)
			if err := e.run(tc.strategy); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for g, files := range e.groups() {
				got[g] = files[0]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("schemata (-want,+got):\n%s", diff)
			}
		})
	}
}

// The schemata is compared by value, so the kernel's padded form is not rewritten; drift is repaired.
func TestSchemataWrittenOnlyWhenDifferent(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, intel)
	strategy := resctrl(off(), off(), on())
	if err := e.run(strategy); err != nil {
		t.Fatal(err)
	}
	const kernel = "    L3:0=00f;1=00f\n    MB:0=100;1=100\n"
	e.write("BE/schemata", kernel)
	if err := e.run(strategy); err != nil {
		t.Fatal(err)
	}
	if e.written("BE/schemata") {
		t.Errorf("schemata rewritten although it held the mask: %q", e.read("BE/schemata"))
	}

	e.write("BE/schemata", "L3:0=7ff;1=00f\nMB:0=100;1=100\n")
	if err := e.run(strategy); err != nil {
		t.Fatal(err)
	}
	if got, want := e.read("BE/schemata"), "L3:0=f;1=f\nMB:0=100;1=100\n"; got != want {
		t.Errorf("schemata after drift = %q, want %q", got, want)
	}
}

// Only threads the group does not list are written, each round; threads of pods whose cgroup is gone are
// skipped quietly.
func TestThreadsAssignedEachRound(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			e := newEnv(t, l.v, l.d, intel)
			if err := os.Mkdir(filepath.Join(e.root, GroupBE), 0o755); err != nil {
				t.Fatal(err)
			}
			e.write("BE/tasks", "402\n")
			strategy := resctrl(off(), off(), on())
			if err := e.run(strategy); err != nil {
				t.Fatal(err)
			}
			if got, want := e.read("BE/tasks"), "402\n401\n499\n"; got != want {
				t.Errorf("tasks = %q, want %q", got, want)
			}

			// The container starts a thread; a pod's cgroup disappears. On a real kernel the new thread is in the
			// group already (threads inherit their creator's); here it is only found by the next full round, which
			// reads every pod's threads again.
			e.fs.WriteFile(e.batchCtr, threadsKnob(e.fs.Layout()), "401\n402\n403\n")
			e.fs.Remove(e.fs.Layout().PodDir(corev1.PodQOSGuaranteed, qostest.UID("lsr")))
			if err := e.run(resctrl(on(), off(), on())); err != nil {
				t.Fatal(err)
			}
			if got, want := e.read("BE/tasks"), "402\n401\n499\n"; got != want {
				t.Errorf("tasks a round after a new thread = %q, want %q: known containers are read by full rounds only", got, want)
			}
			for range qosmanager.DefaultVerifyEvery - 1 {
				if err := e.run(resctrl(on(), off(), on())); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := e.read("BE/tasks"), "402\n401\n499\n403\n"; got != want {
				t.Errorf("tasks after a full round = %q, want %q", got, want)
			}
			if got, want := e.read("LSR/tasks"), "101\n"; got != want {
				t.Errorf("LSR tasks = %q, want %q", got, want)
			}
		})
	}
}

// A class turned off gets the full schemata back and no more threads; a class that never had a group gets none.
func TestRevertOnDisable(t *testing.T) {
	e := newEnv(t, cgroup.V2, cgroup.Cgroupfs, intel)
	if err := e.run(resctrl(off(), off(), cfg(0, 30, 50))); err != nil {
		t.Fatal(err)
	}
	if got, want := e.read("BE/schemata"), "L3:0=f;1=f\nMB:0=50;1=50\n"; got != want {
		t.Fatalf("BE schemata = %q, want %q", got, want)
	}

	e.fs.WriteFile(e.batchCtr, threadsKnob(e.fs.Layout()), "401\n402\n403\n")
	if err := e.run(resctrl(off(), off(), &slov1alpha1.ResctrlQOSCfg{Enable: ptr.To(false), ResctrlQOS: cfg(0, 30, 50).ResctrlQOS})); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		GroupLSR: {"<none>", "<none>"},
		GroupLS:  {"<none>", "<none>"},
		GroupBE:  {full, "401\n402\n499\n"},
	}
	if diff := cmp.Diff(want, e.groups()); diff != "" {
		t.Errorf("groups after disabling BE (-want,+got):\n%s", diff)
	}

	// Everything on, then a NodeSLO without a resourceQOSStrategy: every group goes back to full.
	if err := e.run(resctrl(cfg(0, 50, 50), cfg(0, 50, 50), cfg(0, 30, 20))); err != nil {
		t.Fatal(err)
	}
	if err := e.run(nil); err != nil {
		t.Fatal(err)
	}
	for g, files := range e.groups() {
		if files[0] != full {
			t.Errorf("%s schemata without a strategy = %q, want %q", g, files[0], full)
		}
	}
}

// A node without resctrl is said once and nothing is done, with no error.
func TestNoResctrl(t *testing.T) {
	cases := map[string]func(root string) error{
		"not-mounted": func(string) error { return nil },
		"no-mount-point": func(root string) error {
			return os.Remove(root)
		},
		"no-l3-and-no-mb": func(root string) error {
			return os.WriteFile(filepath.Join(root, "schemata"), []byte("L2:0=ff\n"), 0o644)
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, nil)
			if err := setup(e.root); err != nil {
				t.Fatal(err)
			}
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			ctx := klog.NewContext(t.Context(), logger)
			for range 3 {
				if err := e.runCtx(ctx, resctrl(on(), on(), on())); err != nil {
					t.Fatalf("Run = %v, want nil", err)
				}
			}
			logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
			if c := strings.Count(logs, "Resctrl is not available on this node; LLC and memory bandwidth QoS are off"); c != 1 {
				t.Errorf("said %d times, want once:\n%s", c, logs)
			}
			if _, err := os.Stat(filepath.Join(e.root, GroupBE)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("BE group created on a node without resctrl (stat: %v)", err)
			}
		})
	}
}

// A feature the node lacks is said once and the other is still applied.
func TestPartialResctrl(t *testing.T) {
	cases := map[string]struct {
		files   map[string]string
		want    string
		wantLog string
	}{
		"no-info-mb": {
			files:   with(intel, map[string]string{"info/MB/min_bandwidth": "", "info/MB/bandwidth_gran": "", "info/MB/num_closids": ""}),
			want:    "L3:0=f;1=f\n",
			wantLog: "memory bandwidth allocation: the root schemata has it but info/MB is missing",
		},
		"mba-in-mbps": {
			files:   with(intel, map[string]string{"schemata": "L3:0=7ff;1=7ff\nMB:0=4294967295;1=4294967295\n"}),
			want:    "L3:0=f;1=f\n",
			wantLog: "the root group's value 4294967295 is neither a percent (100) nor AMD's (2048)",
		},
		"mba-only": {
			files:   with(intel, map[string]string{"info/L3/cbm_mask": "", "schemata": "MB:0=100;1=100\n"}),
			want:    "MB:0=50;1=50\n",
			wantLog: "LLC cache allocation: the root schemata has no L3 line",
		},
		"no-info-l3": {
			files:   with(intel, map[string]string{"info/L3/cbm_mask": ""}),
			want:    "MB:0=50;1=50\n",
			wantLog: "L3 cache allocation: the root schemata has it but info/L3/cbm_mask is missing",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, tc.files)
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			ctx := klog.NewContext(t.Context(), logger)
			for range 2 {
				if err := e.runCtx(ctx, resctrl(off(), off(), cfg(0, 30, 50))); err != nil {
					t.Fatal(err)
				}
			}
			if got := e.read("BE/schemata"); got != tc.want {
				t.Errorf("BE schemata = %q, want %q", got, tc.want)
			}
			logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
			if c := strings.Count(logs, tc.wantLog); c != 1 {
				t.Errorf("%q said %d times, want once:\n%s", tc.wantLog, c, logs)
			}
		})
	}
}

// Malformed files are errors naming the file.
func TestMalformedFiles(t *testing.T) {
	cases := map[string]struct {
		files   map[string]string
		threads string
		wantErr string
	}{
		"cbm-not-hex":       {files: with(intel, map[string]string{"info/L3/cbm_mask": "xyz\n"}), wantErr: `info/L3/cbm_mask: "xyz" is not a hex bit mask`},
		"cbm-empty":         {files: with(intel, map[string]string{"info/L3/cbm_mask": "\n"}), wantErr: `info/L3/cbm_mask: "" is not a hex bit mask`},
		"cbm-not-from-0":    {files: with(intel, map[string]string{"info/L3/cbm_mask": "7fe\n"}), wantErr: "info/L3/cbm_mask: \"7fe\" is not a bit mask of contiguous ways"},
		"min-cbm-bits":      {files: with(intel, map[string]string{"info/L3/min_cbm_bits": "one\n"}), wantErr: `info/L3/min_cbm_bits: "one" is not an unsigned number`},
		"min-bandwidth":     {files: with(intel, map[string]string{"info/MB/min_bandwidth": "ten\n"}), wantErr: `info/MB/min_bandwidth: "ten" is not an unsigned number`},
		"root-line":         {files: with(intel, map[string]string{"schemata": "L3:0=7ff;1\nMB:0=100;1=100\n"}), wantErr: `/schemata: line 1 "L3:0=7ff;1"`},
		"root-mask":         {files: with(intel, map[string]string{"schemata": "L3:0=7ff;1=zz\nMB:0=100;1=100\n"}), wantErr: `/schemata: L3 domain 1: "zz" is not a hex bit mask`},
		"root-mb":           {files: with(intel, map[string]string{"schemata": "L3:0=7ff;1=7ff\nMB:0=100;1=lots\n"}), wantErr: `/schemata: MB domain 1: "lots" is not a number`},
		"group-schemata":    {files: with(intel, map[string]string{"BE/schemata": "L3=f\n"}), wantErr: `BE/schemata: line 1 "L3=f"`},
		"group-mask":        {files: with(intel, map[string]string{"BE/schemata": "L3:0=f;1=g\nMB:0=100;1=100\n"}), wantErr: `BE/schemata: L3 domain 1: "g" is not a hex bit mask`},
		"group-tasks":       {files: with(intel, map[string]string{"BE/tasks": "401\nfour\n"}), wantErr: `BE/tasks: "four" is not a thread ID`},
		"container-threads": {files: intel, threads: "401\n-2\n", wantErr: `: "-2" is not a thread ID`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, tc.files)
			if tc.threads != "" {
				e.fs.WriteFile(e.batchCtr, "tasks", tc.threads)
			}
			err := e.run(resctrl(off(), off(), on()))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Run error = %v, want one containing %q", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), e.root) && !strings.Contains(err.Error(), e.fs.Root()) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// An invalid configuration is an error naming the field; the last valid one stays in force.
func TestInvalidConfig(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, intel)
	err := e.run(resctrl(off(), off(), cfg(50, 40, 100)))
	const field = "spec.resourceQOSStrategy.beClass.resctrlQOS.catRangeStartPercent"
	if err == nil || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "NodeSLO n1") {
		t.Fatalf("Run error = %v, want one naming NodeSLO n1 and %s", err, field)
	}
	if got := e.read("BE/schemata"); got != "<none>" {
		t.Errorf("BE schemata = %q although no configuration was valid yet", got)
	}

	if err := e.run(resctrl(off(), off(), cfg(0, 30, 100))); err != nil {
		t.Fatal(err)
	}
	err = e.run(resctrl(off(), off(), cfg(0, 130, 100)))
	if err == nil || !strings.Contains(err.Error(), "spec.resourceQOSStrategy.beClass.resctrlQOS.catRangeEndPercent") {
		t.Fatalf("Run error = %v, want one naming catRangeEndPercent", err)
	}
	if got, want := e.read("BE/schemata"), "L3:0=f;1=f\nMB:0=100;1=100\n"; got != want {
		t.Errorf("BE schemata = %q, want the last valid %q", got, want)
	}
}

// A range too narrow for the cache is an error naming the class; the bandwidth and the threads are still set.
func TestRangeWithoutWays(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, intel)
	err := e.run(resctrl(off(), off(), cfg(1, 5, 50)))
	const want = "resctrl group BE: beClass.resctrlQOS: L3: catRangeStartPercent 1 and catRangeEndPercent 5 select 0 of 11 cache ways"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run error = %v, want one containing %q", err, want)
	}
	if diff := cmp.Diff([2]string{"MB:0=50;1=50\n", "401\n402\n499\n"}, e.groups()[GroupBE]); diff != "" {
		t.Errorf("BE group (-want,+got):\n%s", diff)
	}
}

// The defaults the strategy merges under the NodeSLO are Koordinator's.
func TestDefaults(t *testing.T) {
	got, err := resctrlConfig(qostest.State(qostest.Node("8", "16Gi"), nil, qostest.Cache()))
	if err != nil {
		t.Fatal(err)
	}
	def := func(end int64) *slov1alpha1.ResourceQOS {
		return &slov1alpha1.ResourceQOS{ResctrlQOS: &slov1alpha1.ResctrlQOSCfg{Enable: ptr.To(false), ResctrlQOS: slov1alpha1.ResctrlQOS{
			CATRangeStartPercent: ptr.To[int64](0), CATRangeEndPercent: ptr.To(end), MBAPercent: ptr.To[int64](100),
		}}}
	}
	want := &slov1alpha1.ResourceQOSStrategy{LSRClass: def(100), LSClass: def(100), BEClass: def(30)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resctrl configuration without a NodeSLO (-want,+got):\n%s", diff)
	}
	// The merge keeps what the NodeSLO sets over the defaults.
	merged := configuration.Merge(configuration.DefaultResourceQOSStrategy(), resctrl(nil, nil, cfg(10, 20, 30)))
	if q := merged.BEClass.ResctrlQOS; *q.CATRangeStartPercent != 10 || *q.CATRangeEndPercent != 20 || *q.MBAPercent != 30 || !*q.Enable {
		t.Errorf("merged BE resctrlQOS = %+v", q)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, intel)
	if err := e.metrics.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := e.run(resctrl(on(), off(), cfg(0, 30, 35))); err != nil {
		t.Fatal(err)
	}
	const want = `
# HELP koord_koordlet_resctrl_cache_ways Last-level cache ways the resctrl group of a QoS class (LSR, LS, BE) may fill, by catRangeStartPercent and catRangeEndPercent. Absent while the class's resctrl QoS is off.
# TYPE koord_koordlet_resctrl_cache_ways gauge
koord_koordlet_resctrl_cache_ways{class="BE"} 4
koord_koordlet_resctrl_cache_ways{class="LSR"} 11
# HELP koord_koordlet_resctrl_memory_bandwidth_percent Memory bandwidth the resctrl group of a QoS class (LSR, LS, BE) is limited to, in percent: mbaPercent, rounded up to the kernel's granularity where it takes percents. Absent while the class's resctrl QoS is off.
# TYPE koord_koordlet_resctrl_memory_bandwidth_percent gauge
koord_koordlet_resctrl_memory_bandwidth_percent{class="BE"} 40
koord_koordlet_resctrl_memory_bandwidth_percent{class="LSR"} 100
# HELP koord_koordlet_resctrl_threads_assigned_total Threads of pods moved into the resctrl group of their QoS class (LSR, LS, BE).
# TYPE koord_koordlet_resctrl_threads_assigned_total counter
koord_koordlet_resctrl_threads_assigned_total{class="BE"} 3
koord_koordlet_resctrl_threads_assigned_total{class="LSR"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// BE turned off: its gauges go, its counter stays.
	if err := e.run(resctrl(on(), off(), off())); err != nil {
		t.Fatal(err)
	}
	if got := testutil.CollectAndCount(e.metrics.cacheWays); got != 1 {
		t.Errorf("cache ways series = %d, want 1 (LSR)", got)
	}
	if got := testutil.CollectAndCount(e.metrics.bandwidth); got != 1 {
		t.Errorf("bandwidth series = %d, want 1 (LSR)", got)
	}
}

// A container that starts in a pod whose other containers' threads are in the group is read at once.
func TestNewContainerReadAtOnce(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, intel)
	strategy := resctrl(off(), off(), on())
	if err := e.run(strategy); err != nil {
		t.Fatal(err)
	}
	batch := e.pods[3]
	qostest.Container("sidecar", "containerd://sidecar", nil, nil)(batch)
	dir := e.fs.AddContainer(corev1.PodQOSBestEffort, batch.UID, "containerd://sidecar")
	e.fs.WriteFile(dir, threadsKnob(e.fs.Layout()), "450\n")
	if err := e.run(strategy); err != nil {
		t.Fatal(err)
	}
	if got, want := e.read("BE/tasks"), "401\n402\n499\n450\n"; got != want {
		t.Errorf("tasks after a new container = %q, want %q", got, want)
	}
}
