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

package sysconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// node is a fake /proc and /sys with the kernel's values, of a node of 16000000 kB of memory (see state).
type node struct {
	t                      *testing.T
	proc, sys              string
	minFree, scale, reaper string
}

func newNode(t *testing.T, withMemcgReaper bool) *node {
	t.Helper()
	n := &node{t: t, proc: t.TempDir(), sys: t.TempDir()}
	n.minFree = filepath.Join(n.proc, "sys", "vm", "min_free_kbytes")
	n.scale = filepath.Join(n.proc, "sys", "vm", "watermark_scale_factor")
	n.reaper = filepath.Join(n.sys, "kernel", "mm", "memcg_reaper", "reap_background")
	n.write(n.minFree, "67584\n")
	n.write(n.scale, "10\n")
	if withMemcgReaper {
		n.write(n.reaper, "0\n")
	}
	return n
}

func (n *node) write(path, content string) {
	n.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		n.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		n.t.Fatal(err)
	}
}

// values reads the knobs: min_free_kbytes, watermark_scale_factor, reap_background ("-" when absent).
func (n *node) values() []string {
	n.t.Helper()
	var out []string
	for _, p := range []string{n.minFree, n.scale, n.reaper} {
		b, err := os.ReadFile(p)
		if err != nil {
			out = append(out, "-")
			continue
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	return out
}

// state is a round's state on a node of 16000000 kB of memory.
func state(s *slov1alpha1.SystemStrategy) *qosmanager.State {
	node := &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
		corev1.ResourceMemory: *resource.NewQuantity(16000000<<10, resource.BinarySI)}}}
	return &qosmanager.State{Node: node, NodeSLO: &slov1alpha1.NodeSLO{Spec: slov1alpha1.NodeSLOSpec{SystemStrategy: s}}}
}

func TestSystemConfig(t *testing.T) {
	recommended := &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100), WatermarkScaleFactor: ptr.To[int64](150),
		MemcgReapBackGround: ptr.To[int64](1)}
	cases := map[string]struct {
		memcgReaper bool
		strategy    *slov1alpha1.SystemStrategy
		// want are min_free_kbytes, watermark_scale_factor and reap_background after the round.
		want        []string
		wantErrText string
	}{
		// 100 × 16000000 / 10000 = 160000 kB.
		"Koordinator's recommended values": {
			memcgReaper: true, strategy: recommended, want: []string{"160000", "150", "1"},
		},
		"a kernel without the memcg reaper: the rest applies": {
			strategy: recommended, want: []string{"160000", "150", "-"},
		},
		"unset fields leave the node's values": {
			memcgReaper: true, strategy: &slov1alpha1.SystemStrategy{WatermarkScaleFactor: ptr.To[int64](200)},
			want: []string{"67584", "200", "0"},
		},
		"no systemStrategy: nothing written": {
			memcgReaper: true, want: []string{"67584", "10", "0"},
		},
		// 1000 × 16000000 / 10000 = 1600000 kB is within 5 GiB; 5000 × ... = 8000000 kB is not.
		"min_free_kbytes above 5 GiB: refused with the field named, the others applied": {
			memcgReaper: true, strategy: &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](5000), WatermarkScaleFactor: ptr.To[int64](150)},
			want: []string{"67584", "150", "0"}, wantErrText: "systemStrategy.minFreeKbytesFactor 5000",
		},
		"watermark_scale_factor out of range": {
			memcgReaper: true, strategy: &slov1alpha1.SystemStrategy{WatermarkScaleFactor: ptr.To[int64](500)},
			want: []string{"67584", "10", "0"}, wantErrText: "systemStrategy.watermarkScaleFactor 500",
		},
		"reap_background not 0 or 1": {
			memcgReaper: true, strategy: &slov1alpha1.SystemStrategy{MemcgReapBackGround: ptr.To[int64](2)},
			want: []string{"67584", "10", "0"}, wantErrText: "systemStrategy.memcgReapBackGround 2",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := newNode(t, tc.memcgReaper)
			_, ctx := ktesting.NewTestContext(t)
			err := New(n.proc, n.sys).Run(ctx, state(tc.strategy))
			switch {
			case tc.wantErrText == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tc.wantErrText != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrText)):
				t.Fatalf("Run: error %v, want one naming %q", err, tc.wantErrText)
			}
			if diff := cmp.Diff(tc.want, n.values()); diff != "" {
				t.Errorf("kernel settings (-want,+got):\n%s", diff)
			}
		})
	}
}

// The originals come back once the NodeSLO unsets a knob, and at Restore; a value changed by hand in between is
// set again, and the original kept is the one from before the first write.
func TestSystemConfigRestores(t *testing.T) {
	n := newNode(t, true)
	_, ctx := ktesting.NewTestContext(t)
	s := New(n.proc, n.sys)
	all := &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100), WatermarkScaleFactor: ptr.To[int64](150),
		MemcgReapBackGround: ptr.To[int64](1)}
	run := func(st *slov1alpha1.SystemStrategy, want ...string) {
		t.Helper()
		if err := s.Run(ctx, state(st)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, n.values()); diff != "" {
			t.Errorf("kernel settings (-want,+got):\n%s", diff)
		}
	}
	run(all, "160000", "150", "1")
	n.write(n.scale, "42\n") // changed by hand
	run(all, "160000", "150", "1")
	// watermarkScaleFactor unset: its original (10, not 42) comes back, once.
	run(&slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100), MemcgReapBackGround: ptr.To[int64](1)}, "160000", "10", "1")
	n.write(n.scale, "77\n")
	run(&slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100), MemcgReapBackGround: ptr.To[int64](1)}, "160000", "77", "1")
	// The agent stops.
	if err := s.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"67584", "77", "0"}, n.values()); diff != "" {
		t.Errorf("kernel settings after Restore (-want,+got):\n%s", diff)
	}
}

// A kernel without the memcg reaper is said once, not every round.
func TestSystemConfigSaysUnsupportedOnce(t *testing.T) {
	n := newNode(t, false)
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(t.Context(), logger)
	s := New(n.proc, n.sys)
	for range 3 {
		if err := s.Run(ctx, state(&slov1alpha1.SystemStrategy{MemcgReapBackGround: ptr.To[int64](1)})); err != nil {
			t.Fatal(err)
		}
	}
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if c := strings.Count(logs, "Not supported on this kernel"); c != 1 {
		t.Errorf("said %d times, want once:\n%s", c, logs)
	}
}
