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

package koordlet

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"
)

func TestOptionsValidate(t *testing.T) {
	tests := map[string]struct {
		change   func(o *Options)
		wantErrs []string
	}{
		"defaults with a node name": {change: func(o *Options) {}},
		"no node name": {
			change:   func(o *Options) { o.NodeName = "" },
			wantErrs: []string{"--node-name: empty"},
		},
		"bad node name": {
			change:   func(o *Options) { o.NodeName = "Node_1" },
			wantErrs: []string{`--node-name: "Node_1" is not a valid node name`},
		},
		"unknown driver": {
			change:   func(o *Options) { o.CgroupDriver = "runc" },
			wantErrs: []string{`--cgroup-driver: "runc" is neither cgroupfs nor systemd`},
		},
		"relative kubelet cgroup root": {
			change:   func(o *Options) { o.KubeletCgroupRoot = "kube" },
			wantErrs: []string{`--kubelet-cgroup-root: "kube" must be an absolute cgroup path`},
		},
		"too short intervals and windows": {
			change: func(o *Options) {
				o.CollectInterval = time.Millisecond
				o.QoSInterval = 0
				o.NodeMetricWindow = time.Second
				o.PodMetricWindow = 0
				o.ReportWarmup = -time.Second
			},
			wantErrs: []string{
				"--collect-interval: 1ms is shorter than 100ms",
				"--qos-interval: 0s is shorter than 100ms",
				"--node-metric-window: 1s is shorter than 1m",
				"--pod-metric-window: 0s is shorter than 1m",
				"--report-warmup: -1s is negative",
			},
		},
		"empty roots and bad client limits": {
			change: func(o *Options) {
				o.CgroupRoot, o.ProcRoot = "", ""
				o.KubeAPIQPS = 0
			},
			wantErrs: []string{"--cgroup-root: empty", "--proc-root: empty", "--kube-api-qps (0) and --kube-api-burst (30) must be positive"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			o.NodeName = "node-1"
			tc.change(&o)
			err := o.Validate()
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			// Every wanted message appears, and nothing else is reported.
			for _, w := range tc.wantErrs {
				found := false
				for _, g := range got {
					if strings.HasPrefix(g, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("error %q not reported; got %q", w, got)
				}
			}
			if len(got) != len(tc.wantErrs) {
				t.Errorf("got %d errors, want %d: %q", len(got), len(tc.wantErrs), got)
			}
		})
	}
}

func TestOptionsFlags(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("koordlet", pflag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{
		"--node-name=n1", "--cgroup-root=/host-cgroup", "--cgroup-driver=systemd", "--proc-root=/host-proc",
		"--collect-interval=2s", "--feature-gates=BEMemoryEvict=true,CPUBurst=false,TCNetworkQoS=true",
	})
	if err != nil {
		t.Fatalf("parse flags: %v", err)
	}
	got := []any{o.NodeName, o.CgroupRoot, o.CgroupDriver, o.ProcRoot, o.CollectInterval,
		o.FeatureGates.Enabled("BEMemoryEvict"), o.FeatureGates.Enabled("CPUBurst")}
	want := []any{"n1", "/host-cgroup", "systemd", "/host-proc", 2 * time.Second, true, false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed options (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"TCNetworkQoS"}, o.gatesFlag.Ignored()); diff != "" {
		t.Errorf("ignored Koordinator gates (-want,+got):\n%s", diff)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestSamples(t *testing.T) {
	tests := map[string]struct {
		window, interval time.Duration
		want             int
	}{
		"30m at 1s":             {30 * time.Minute, time.Second, 1800},
		"5m at 2s":              {5 * time.Minute, 2 * time.Second, 150},
		"window below interval": {time.Second, time.Minute, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := samples(tc.window, tc.interval); got != tc.want {
				t.Errorf("samples(%s, %s) = %d, want %d", tc.window, tc.interval, got, tc.want)
			}
		})
	}
}

// TestKoordinatorCommandLine parses the command line Koordinator's v1.8 Helm chart gives koordlet.
func TestKoordinatorCommandLine(t *testing.T) {
	o := DefaultOptions()
	o.NodeName = "n1"
	fs := pflag.NewFlagSet("koordlet", pflag.ContinueOnError)
	o.AddFlags(fs)
	logsapi.AddFlags(logsapi.NewLoggingConfiguration(), fs) // as main does
	args := []string{
		"-addr=:9316", "-cgroup-root-dir=/host-cgroup/",
		"-feature-gates=BECPUEvict=true,BEMemoryEvict=true,CgroupReconcile=true,Accelerators=true",
		"-runtime-hooks-host-endpoint=/var/run/koordlet/koordlet.sock", "--logtostderr=true", "--v=4",
	}
	if err := fs.Parse(KoordinatorArgs(fs, args)); err != nil {
		t.Fatalf("parse Koordinator's command line: %v", err)
	}
	got := []any{o.MetricsBindAddress, o.CgroupRoot, o.FeatureGates.Enabled("BECPUEvict"), o.FeatureGates.Enabled("PodCgroupReconcile"),
		o.FeatureGates.Enabled("CgroupReconcile")}
	want := []any{":9316", "/host-cgroup/", true, true, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed options (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"logtostderr", "runtime-hooks-host-endpoint"}, o.compat.Ignored()); diff != "" {
		t.Errorf("ignored flags (-want,+got):\n%s", diff)
	}
	// Koordinator's CgroupReconcile is its memory QoS reconciler, Koord's too; Koord's own per-class reconciler
	// (PodCgroupReconcile) stays on.
	if diff := cmp.Diff([]string(nil), o.gatesFlag.Ignored()); diff != "" {
		t.Errorf("ignored Koordinator gates (-want,+got):\n%s", diff)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
