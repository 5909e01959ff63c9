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

package demo

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/examples"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
)

// validScenario is a small valid scenario; tests change one thing in it.
const validScenario = `
name: small
cluster:
  nodes: 3
  speed: 1800
duration: 4h
sampleInterval: 10m
startTime: "10:00"
services:
  - name: web
    replicas: 6
    requests: {cpu: "4", memory: 8Gi}
    usage:
      cpu: {type: diurnal, base: "2", amplitude: 1500m, peak: 12h}
jobs:
  - name: batch
    arrival: 30m
    count: 12
    parallelism: 6
    runDuration: 1h
    requests: {cpu: "3", memory: 4Gi}
    usage:
      cpu: {type: constant, value: 2500m}
`

func TestLoad(t *testing.T) {
	want := &Scenario{
		Name: "small",
		Cluster: ClusterSpec{
			Nodes: 3, Speed: 1800,
			NodeCPU:    ptr.To(cluster.DefaultNodeCPU.DeepCopy()),
			NodeMemory: ptr.To(cluster.DefaultNodeMemory.DeepCopy()),
		},
		Duration:       metav1.Duration{Duration: 4 * time.Hour},
		SampleInterval: metav1.Duration{Duration: 10 * time.Minute},
		StartTime:      "10:00",
		Namespace:      DefaultNamespace,
		Services: []Service{{
			Name: "web", Replicas: 6,
			Requests: Resources{CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi")},
			Usage: &Usage{CPU: &Profile{
				Type: "diurnal", Base: ptr.To(resource.MustParse("2")), Amplitude: ptr.To(resource.MustParse("1500m")),
				Peak: &metav1.Duration{Duration: 12 * time.Hour},
			}},
			Tier: TierProd,
		}},
		Jobs: []Job{{
			Name: "batch", Arrival: metav1.Duration{Duration: 30 * time.Minute}, Count: 12, Parallelism: 6,
			RunDuration: metav1.Duration{Duration: time.Hour},
			Requests:    Resources{CPU: resource.MustParse("3"), Memory: resource.MustParse("4Gi")},
			Usage:       &Usage{CPU: &Profile{Type: "constant", Value: ptr.To(resource.MustParse("2500m"))}},
			Tier:        TierBatch,
		}},
	}
	got, err := Load([]byte(validScenario))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load (-want,+got):\n%s", diff)
	}
	if got.StartOfDay() != 10*time.Hour {
		t.Errorf("StartOfDay = %v, want 10h", got.StartOfDay())
	}
}

func TestLoadRejects(t *testing.T) {
	tests := map[string]struct {
		tc string
		// want are substrings the error must contain, each naming a wrong field.
		want []string
	}{
		"unknown field": {
			tc:   strings.Replace(validScenario, "replicas: 6", "replica: 6", 1),
			want: []string{`unknown field "replica"`},
		},
		"unknown profile field": {
			tc:   strings.Replace(validScenario, "peak: 12h", "peek: 12h", 1),
			want: []string{`unknown field "peek"`},
		},
		"duplicate field": {
			tc:   strings.Replace(validScenario, "  nodes: 3\n", "  nodes: 3\n  nodes: 4\n", 1),
			want: []string{`"nodes"`},
		},
		"not yaml": {tc: "name: [", want: []string{"decode"}},
		"unknown tiers": {
			tc: strings.Replace(strings.Replace(validScenario, "replicas: 6", "replicas: 6\n    tier: batch", 1),
				"count: 12", "count: 12\n    tier: prod", 1),
			want: []string{`services[0].tier: Unsupported value: "batch"`, `jobs[0].tier: Unsupported value: "prod"`},
		},
		"mid and prediction settings out of range": {
			tc: strings.Replace(validScenario, "  nodes: 3\n",
				"  nodes: 3\n  mid: {unallocatedPercent: 101, cpuThresholdPercent: -1}\n  prediction: {coldStartDuration: -1h, trainingInterval: 0s}\n", 1),
			want: []string{
				"cluster.mid.unallocatedPercent: Invalid value: 101: must be 0 to 100",
				"cluster.mid.cpuThresholdPercent: Invalid value: -1: must be 0 to 100",
				"cluster.prediction: Invalid value: --prediction-training-interval: 0s must be above zero",
				"--prediction-cold-start-duration: -1h0m0s is negative",
			},
		},
		"arrival after the end": {
			tc:   strings.Replace(validScenario, "arrival: 30m", "arrival: 5h", 1),
			want: []string{`jobs[0].arrival: Invalid value: "5h0m0s": must be within the scenario's duration 4h`},
		},
		"every field named": {
			tc: `
name: ""
cluster: {nodes: 0, speed: 0, nodeCPU: "-1", reportInterval: 500ms, simFeatureGates: {NoSuchGate: true}}
duration: 0s
sampleInterval: 1500ms
startTime: "25:00"
namespace: kube-system
services:
  - {name: Web, replicas: 0, requests: {cpu: "0"}}
  - {name: api, replicas: 1, requests: {cpu: "1", memory: 1Gi}, usage: {cpu: {type: diurnal, base: "1"}}}
jobs:
  - {name: api, arrival: -1h, every: 0s, count: 2, parallelism: 3, runDuration: 0s, requests: {cpu: "1", memory: 1Gi}}
  - {name: j2, arrival: 0s, count: 0, runDuration: 1m, requests: {cpu: "1", memory: 1Gi}}
`,
			want: []string{
				"name: Required value", "cluster.nodes: Invalid value: 0", `cluster.nodeCPU: Invalid value: "-1"`,
				"cluster.speed: Invalid value: 0", `cluster.reportInterval: Invalid value: "500ms"`,
				"cluster.simFeatureGates", "NoSuchGate", `duration: Invalid value: "0s"`,
				`sampleInterval: Invalid value: "1.5s"`, `startTime: Invalid value: "25:00"`,
				`namespace: Invalid value: "kube-system"`,
				`services[0].name: Invalid value: "Web"`, "services[0].replicas: Invalid value: 0",
				"services[0].requests.cpu: Required value", "services[0].requests.memory: Required value",
				"services[1].usage.cpu.amplitude: Required value",
				`jobs[0].name: Duplicate value: "api"`, `jobs[0].arrival: Invalid value: "-1h0m0s"`,
				`jobs[0].every: Invalid value: "0s"`, "jobs[0].parallelism: Invalid value: 3",
				`jobs[0].runDuration: Invalid value: "0s"`, "jobs[1].count: Invalid value: 0",
				"jobs[1].parallelism: Invalid value: 0",
			},
		},
		"bad usage values": {
			tc: strings.Replace(validScenario, "cpu: {type: constant, value: 2500m}",
				"cpu: {type: bursty, base: 2, burst: 1, probability: 2}\n      memory: {type: constant}", 1),
			want: []string{"jobs[0].usage.cpu.probability: Invalid value: 2: must be a number from 0 to 1",
				"jobs[0].usage.memory.value: Required value"},
		},
		"no workloads": {
			tc:   "name: x\ncluster: {nodes: 1, speed: 1}\nduration: 1h\n",
			want: []string{"services: Required value: at least one service or job"},
		},
		"initial nodes beyond the cluster": {
			tc:   strings.Replace(validScenario, "replicas: 6\n", "replicas: 6\n    initialNodes: 4\n", 1),
			want: []string{"services[0].initialNodes: Invalid value: 4: must be 0 (scheduled as usual) to the 3 nodes of the cluster"},
		},
		"initial nodes too small for the pods": {
			// 6 pods of 4 cores and 8Gi on one node of 16 cores and 32Gi.
			tc: strings.Replace(strings.Replace(validScenario, "replicas: 6\n", "replicas: 6\n    initialNodes: 1\n", 1),
				"nodes: 3\n", "nodes: 3\n  nodeCPU: \"16\"\n  nodeMemory: 32Gi\n", 1),
			want: []string{"services[0].initialNodes: Invalid value: 1: 6 pods a node request 24 cpu, more than a node's 16",
				"6 pods a node request 48Gi memory, more than a node's 32Gi"},
		},
		"bad aggregate duration and descheduler config": {
			tc: strings.Replace(validScenario, "speed: 1800\n",
				"speed: 1800\n  aggregateDuration: 1500ms\n  descheduler:\n    config: {apiVersion: descheduler/v1alpha2, kind: KubeSchedulerConfiguration}\n", 1),
			want: []string{`cluster.aggregateDuration: Invalid value: "1.5s": must be a whole number of seconds`,
				`cluster.descheduler.config: Invalid value: descheduler configuration: kind is "KubeSchedulerConfiguration", want DeschedulerConfiguration`},
		},
		"invalid descheduler arguments": {
			tc: strings.Replace(validScenario, "speed: 1800\n", `speed: 1800
  descheduler:
    config:
      apiVersion: descheduler/v1alpha2
      kind: DeschedulerConfiguration
      profiles:
      - name: p
        pluginConfig:
        - name: LowNodeLoad
          args: {apiVersion: descheduler/v1alpha2, kind: LowNodeLoadArgs, lowThresholds: {cpu: 90}, highThresholds: {cpu: 80}}
`, 1),
			want: []string{"cluster.descheduler.config: Invalid value:", "lowThresholds"},
		},
		"too many samples": {
			tc:   strings.Replace(validScenario, "sampleInterval: 10m", "sampleInterval: 1s", 1),
			want: []string{"sampleInterval: Invalid value: \"1s\": gives 14400 samples over 4h0m0s, at most 10000"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Load([]byte(tc.tc))
			if err == nil {
				t.Fatal("Load accepted the scenario")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestShippedScenarios loads every scenario under examples/ as koordctl demo does.
func TestShippedScenarios(t *testing.T) {
	paths, err := fs.Glob(examples.FS, "demo/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(paths, examples.DefaultScenario) {
		t.Fatalf("embedded scenarios %v lack the default %s", paths, examples.DefaultScenario)
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			data, err := fs.ReadFile(examples.FS, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Load(data); err != nil {
				t.Error(err)
			}
			// The embedded copy is the file in the tree.
			onDisk, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", p))
			if err != nil {
				t.Fatal(err)
			}
			if string(onDisk) != string(data) {
				t.Errorf("embedded %s differs from the file; rebuild", p)
			}
		})
	}
}

func TestFlagsLoadScenario(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(validScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	initialFile := filepath.Join(dir, "initial.yaml")
	if err := os.WriteFile(initialFile, []byte(strings.Replace(validScenario, "replicas: 6\n", "replicas: 6\n    initialNodes: 2\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := func(change func(*Flags)) Flags {
		f := NewFlags()
		change(f)
		return *f
	}
	tests := map[string]struct {
		tc         Flags
		wantNodes  int
		wantSpeed  float64
		wantReport time.Duration
		wantErrSub string
	}{
		"built in": {tc: flags(func(*Flags) {}), wantNodes: 12, wantSpeed: 720, wantReport: time.Second},
		"file":     {tc: flags(func(f *Flags) { f.Scenario = file }), wantNodes: 3, wantSpeed: 1800, wantReport: time.Second},
		"overrides": {
			tc:        flags(func(f *Flags) { f.Scenario, f.Nodes, f.Speed = file, 5, 60 }),
			wantNodes: 5, wantSpeed: 60, wantReport: time.Second,
		},
		"default report interval follows --nodes": {
			tc:        flags(func(f *Flags) { f.Scenario, f.Nodes = file, 1000 }),
			wantNodes: 1000, wantSpeed: 1800, wantReport: 10 * time.Second,
		},
		"the built-in scenario's interval stays with --nodes": {
			tc:        flags(func(f *Flags) { f.Nodes = 1000 }),
			wantNodes: 1000, wantSpeed: 720, wantReport: time.Second,
		},
		"bad overrides": {
			tc:         flags(func(f *Flags) { f.Scenario, f.ReportDir, f.Nodes, f.Speed = file, "", -1, 5000 }),
			wantErrSub: "--speed: 5000 is outside (0, 3600]; 0 keeps the scenario's\n--nodes: -1 is outside 1..10000; 0 keeps the scenario's\n--report-dir: must not be empty",
		},
		"built in, by name": {tc: flags(func(f *Flags) { f.Scenario = "hot-nodes" }), wantNodes: 10, wantSpeed: 60, wantReport: time.Second},
		"built in, by file name": {
			tc:        flags(func(f *Flags) { f.Scenario = "colocation-day.yaml" }),
			wantNodes: 12, wantSpeed: 720, wantReport: time.Second,
		},
		"neither a file nor a built-in scenario": {
			tc:         flags(func(f *Flags) { f.Scenario = "no-such-day" }),
			wantErrSub: "(built-in scenarios: colocation-day, hot-nodes)",
		},
		"--nodes below a service's initial nodes": {
			tc:         flags(func(f *Flags) { f.Scenario, f.Nodes = initialFile, 1 }),
			wantErrSub: "--nodes 1: services[0].initialNodes: Invalid value: 2: must be 0 (scheduled as usual) to the 1 nodes of the cluster",
		},
		"missing file": {
			tc:         flags(func(f *Flags) { f.Scenario = filepath.Join(dir, "nope.yaml") }),
			wantErrSub: "--scenario: open",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, _, err := tc.tc.LoadScenario()
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Cluster.Nodes != tc.wantNodes || s.Cluster.Speed != tc.wantSpeed {
				t.Errorf("nodes %d speed %v, want %d and %v", s.Cluster.Nodes, s.Cluster.Speed, tc.wantNodes, tc.wantSpeed)
			}
			opts, err := tc.tc.ClusterOptions(s)
			if err != nil {
				t.Fatal(err)
			}
			if opts.Nodes != tc.wantNodes || opts.Speed != tc.wantSpeed || opts.ReportInterval != tc.wantReport {
				t.Errorf("cluster options nodes %d speed %v report interval %v, want %d, %v and %v", opts.Nodes, opts.Speed,
					opts.ReportInterval, tc.wantNodes, tc.wantSpeed, tc.wantReport)
			}
			// The demo runs koord-scheduler's shipped configuration.
			if opts.SchedulerConfig != "" {
				t.Errorf("cluster options replace the scheduler configuration with %s", opts.SchedulerConfig)
			}
		})
	}
}

func TestDefaultReportInterval(t *testing.T) {
	tests := map[string]struct {
		tc   int
		want time.Duration
	}{
		"one node":      {tc: 1, want: time.Second},
		"the demo's 12": {tc: 12, want: time.Second},
		"100":           {tc: 100, want: time.Second},
		"101":           {tc: 101, want: 2 * time.Second},
		"1000":          {tc: 1000, want: 10 * time.Second},
		"10000":         {tc: 10000, want: 100 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := DefaultReportInterval(tc.tc); got != tc.want {
				t.Errorf("DefaultReportInterval(%d) = %v, want %v", tc.tc, got, tc.want)
			}
			spec := ClusterSpec{Nodes: tc.tc}
			if got := spec.ReportIntervalOrDefault(); got != tc.want {
				t.Errorf("ReportIntervalOrDefault of %d nodes without an interval = %v, want %v", tc.tc, got, tc.want)
			}
			spec.ReportInterval = &metav1.Duration{Duration: 7 * time.Second}
			if got := spec.ReportIntervalOrDefault(); got != 7*time.Second {
				t.Errorf("ReportIntervalOrDefault with 7s set = %v, want 7s", got)
			}
		})
	}
}

// TestClusterOptionsDescheduler: the scenario's descheduler settings and aggregation window reach the cluster.
func TestClusterOptionsDescheduler(t *testing.T) {
	tests := map[string]struct {
		tc              string
		wantLowNodeLoad bool
		wantConfig      bool
		wantAggregate   time.Duration
	}{
		"unset: as koordctl up": {tc: validScenario, wantLowNodeLoad: true},
		"LowNodeLoad off": {
			tc: strings.Replace(validScenario, "speed: 1800\n", "speed: 1800\n  descheduler: {lowNodeLoad: false}\n", 1),
		},
		"own configuration and window": {
			tc: strings.Replace(validScenario, "speed: 1800\n", `speed: 1800
  aggregateDuration: 2m
  descheduler:
    config: {apiVersion: descheduler/v1alpha2, kind: DeschedulerConfiguration, deschedulingInterval: 2s, profiles: [{name: p}]}
`, 1),
			wantLowNodeLoad: true, wantConfig: true, wantAggregate: 2 * time.Minute,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := Load([]byte(tc.tc))
			if err != nil {
				t.Fatal(err)
			}
			opts, err := NewFlags().ClusterOptions(s)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{opts.DeschedulerLowNodeLoad, len(opts.DeschedulerConfigData) > 0, opts.AggregateDuration}
			if diff := cmp.Diff([]any{tc.wantLowNodeLoad, tc.wantConfig, tc.wantAggregate}, got); diff != "" {
				t.Errorf("LowNodeLoad, own configuration, aggregate duration (-want,+got):\n%s", diff)
			}
			if tc.wantConfig {
				// The data is what the cluster adapts: it must load as a descheduler configuration.
				if _, err := cluster.DeschedulerConfig(opts.DeschedulerConfigData, "", "127.0.0.1:0", opts.DeschedulerLowNodeLoad); err != nil {
					t.Errorf("the configuration passed on does not load: %v", err)
				}
			}
		})
	}
}

// TestClusterOptionsMidAndPrediction: the scenario's mid settings reach the slo-controller-config options and its
// prediction settings the simulated agents, over Koordinator's defaults.
func TestClusterOptionsMidAndPrediction(t *testing.T) {
	tests := map[string]struct {
		tc        string
		wantMid   cluster.MidSettings
		wantPred  *prediction.Config
		wantTiers []string
	}{
		"unset: Koordinator's defaults": {tc: validScenario, wantTiers: []string{TierProd, TierBatch}},
		"set": {
			tc: strings.Replace(strings.Replace(validScenario, "speed: 1800\n",
				"speed: 1800\n  mid: {cpuThresholdPercent: 50}\n  prediction: {coldStartDuration: 1h, safetyMarginPercent: 5}\n", 1),
				"count: 12", "count: 12\n    tier: mid", 1),
			wantMid: cluster.MidSettings{CPUThresholdPercent: ptr.To[int64](50)},
			wantPred: func() *prediction.Config {
				c := prediction.DefaultConfig()
				c.CheckpointDir, c.ColdStartDuration, c.SafetyMarginPercent = "", time.Hour, 5
				return &c
			}(),
			wantTiers: []string{TierProd, TierMid},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := Load([]byte(tc.tc))
			if err != nil {
				t.Fatal(err)
			}
			opts, err := NewFlags().ClusterOptions(s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantMid, opts.Mid); diff != "" {
				t.Errorf("mid settings (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPred, opts.Prediction); diff != "" {
				t.Errorf("prediction (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTiers, []string{s.Services[0].Tier, s.Jobs[0].Tier}); diff != "" {
				t.Errorf("tiers (-want,+got):\n%s", diff)
			}
		})
	}
}
