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

package up

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2/ktesting"

	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordctl/preflight"
)

// parse returns the flags after parsing args.
func parse(t *testing.T, args ...string) *Flags {
	t.Helper()
	f := NewFlags()
	fs := pflag.NewFlagSet("up", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return f
}

func TestClusterOptions(t *testing.T) {
	type summary struct {
		Nodes                 int
		CPU, Memory           string
		Pods                  int64
		Speed                 float64
		Report, Degrade       time.Duration
		APIServerPort         int
		StateDir, Kubeconfig  string
		Suppress, MemoryEvict bool
		Clean                 bool
		Replicas              int
		AuditLog              string
	}
	for name, tc := range map[string]struct {
		args []string
		want summary
	}{
		"defaults": {
			want: summary{Nodes: 10, CPU: "32", Memory: "128Gi", Pods: 110, Speed: 1, Report: 10 * time.Second,
				StateDir: ".koord", Kubeconfig: "koord.kubeconfig", Suppress: true, Replicas: 1},
		},
		"everything set": {
			args: []string{"--nodes=1000", "--node-cpu=16", "--node-memory=64Gi", "--node-pods=250", "--speed=60",
				"--report-interval=1m", "--degrade-time=5m", "--apiserver-port=6443", "--state-dir=/tmp/s", "--kubeconfig-out=",
				"--sim-feature-gates=BECPUSuppress=false,BEMemoryEvict=true", "--clean", "--replicas=3", "--audit-log=/tmp/audit.log"},
			want: summary{Nodes: 1000, CPU: "16", Memory: "64Gi", Pods: 250, Speed: 60, Report: time.Minute, Degrade: 5 * time.Minute,
				APIServerPort: 6443, StateDir: "/tmp/s", MemoryEvict: true, Clean: true, Replicas: 3, AuditLog: "/tmp/audit.log"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			o, err := parse(t, tc.args...).ClusterOptions()
			if err != nil {
				t.Fatalf("ClusterOptions() = %v", err)
			}
			got := summary{o.Nodes, o.NodeCPU.String(), o.NodeMemory.String(), o.NodePods, o.Speed, o.ReportInterval, o.DegradeTime,
				o.APIServerPort, o.StateDir, o.KubeconfigOut, o.SimFeatures.BECPUSuppress, o.SimFeatures.BEMemoryEvict, o.Clean, o.Replicas, o.AuditLog}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("options (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestClusterOptionsErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"quantities": {
			args: []string{"--node-cpu=lots", "--node-memory=12 GB"},
			want: []string{`--node-cpu: "lots" is not a quantity such as 32 or 500m`, `--node-memory: "12 GB" is not a quantity such as 128Gi`},
		},
		"a bad quantity does not hide the other errors": {
			args: []string{"--node-cpu=x", "--nodes=0", "--speed=-2", "--v=-1"},
			want: []string{
				`--node-cpu: "x" is not a quantity such as 32 or 500m`,
				"--v: -1 must be 0 or more",
				"--nodes: 0 is outside 1..10000",
				"--speed: -2 is outside (0, 3600] (1 is real time, 60 a simulated minute per second)",
			},
		},
		"too many replicas": {
			args: []string{"--replicas=4"},
			want: []string{"--replicas: 4 is outside 1..3"},
		},
		"negative capacity": {
			args: []string{"--node-memory=-1Gi"},
			want: []string{"--node-memory: -1Gi must be above zero"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parse(t, tc.args...).ClusterOptions()
			if err == nil {
				t.Fatal("ClusterOptions() = nil, want an error")
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSimFeatureGatesFlag(t *testing.T) {
	f := NewFlags()
	fs := pflag.NewFlagSet("up", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse([]string{"--sim-feature-gates=NoSuchGate=true"}); err == nil {
		t.Error("an unknown gate was accepted")
	}
	if got := features.ResolveKoordlet(NewFlags().SimFeatureGates); !got.BECPUSuppress || got.BEMemoryEvict {
		t.Errorf("default simulated gates = %+v, want koordlet's defaults", got)
	}
}

func TestRunReportsPreflightFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := NewFlags()
	f.Options.BinDir = t.TempDir()
	f.Options.StateDir = filepath.Join(t.TempDir(), "state")
	var out bytes.Buffer
	err := Run(ctx, f, &out, false)
	var missing *preflight.MissingBinariesError
	if !errors.As(err, &missing) || len(missing.Problems) != 8 {
		t.Fatalf("Run() = %v, want the eight binaries reported missing", err)
	}
	if got := out.String(); !strings.HasPrefix(got, "[failed] Preflight: binaries, ports, state directory (") || strings.Count(got, "\n") != 1 {
		t.Errorf("output = %q, want one failed preflight line", got)
	}
}
