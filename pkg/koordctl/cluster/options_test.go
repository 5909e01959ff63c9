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

package cluster

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestOptionsValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		tc   func(*Options)
		want []string
	}{
		"defaults": {tc: func(*Options) {}},
		"largest cluster, fixed ports": {
			tc: func(o *Options) {
				o.Nodes, o.APIServerPort, o.SchedulerPort, o.Speed, o.DegradeTime = MaxNodes, 6443, 65535, 3600, 5*time.Minute
				o.Replicas = MaxReplicas
			},
		},
		"empty paths": {
			tc:   func(o *Options) { o.BinDir, o.StateDir = "", "" },
			want: []string{"--bin-dir: must not be empty", "--state-dir: must not be empty"},
		},
		"node count and capacity": {
			tc: func(o *Options) {
				o.Nodes, o.NodeCPU, o.NodeMemory, o.NodePods = 0, resource.MustParse("0"), resource.MustParse("-1Gi"), 0
			},
			want: []string{
				"--nodes: 0 is outside 1..10000",
				"--node-cpu: 0 must be above zero",
				"--node-memory: -1Gi must be above zero",
				"--node-pods: 0 must be at least 1",
			},
		},
		"too many nodes": {
			tc:   func(o *Options) { o.Nodes = MaxNodes + 1 },
			want: []string{"--nodes: 10001 is outside 1..10000"},
		},
		"ports": {
			tc: func(o *Options) { o.APIServerPort, o.WebhookPort, o.PrometheusPort = -1, 65536, 70000 },
			want: []string{"--apiserver-port: -1 is not a port (0 picks a free one)", "--webhook-port: 65536 is not a port (0 picks a free one)",
				"--prometheus-port: 70000 is not a port (0 picks a free one)"},
		},
		"replicas": {
			tc:   func(o *Options) { o.Replicas = MaxReplicas + 1 },
			want: []string{"--replicas: 4 is outside 1..3"},
		},
		"negative replicas": {
			tc:   func(o *Options) { o.Replicas = -1 },
			want: []string{"--replicas: -1 is outside 1..3"},
		},
		"speed": {
			tc:   func(o *Options) { o.Speed = math.NaN() },
			want: []string{"--speed: NaN is outside (0, 3600] (1 is real time, 60 a simulated minute per second)"},
		},
		"zero speed": {
			tc:   func(o *Options) { o.Speed = 0 },
			want: []string{"--speed: 0 is outside (0, 3600] (1 is real time, 60 a simulated minute per second)"},
		},
		"intervals": {
			tc: func(o *Options) {
				o.ReportInterval, o.DegradeTime, o.AggregateDuration = 1500*time.Millisecond, 90*time.Second, 2500*time.Millisecond
			},
			want: []string{
				"--report-interval: 1.5s must be a whole number of seconds, at least 1s",
				"--degrade-time: 1m30s must be a whole number of minutes (0 keeps the default)",
				"--aggregate-duration: 2.5s must be a whole number of seconds (0 keeps the default)",
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			tc.tc(&o)
			var got []string
			if err := o.Validate(); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestDefaultOptionsBinDir(t *testing.T) {
	for name, tc := range map[string]struct {
		env  string
		want string
	}{
		"unset":            {env: "", want: DefaultBinDir},
		"from environment": {env: "/opt/koord/bin", want: "/opt/koord/bin"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(BinDirEnv, tc.env)
			if got := DefaultOptions().BinDir; got != tc.want {
				t.Errorf("BinDir = %q, want %q", got, tc.want)
			}
		})
	}
}
