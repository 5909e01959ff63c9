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

package config_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config/validation"
)

func argsOf[T any](t *testing.T, p *config.DeschedulerProfile, name string) T {
	t.Helper()
	for _, pc := range p.PluginConfig {
		if pc.Name == name {
			a, ok := pc.Args.Object.(T)
			if !ok {
				t.Fatalf("args of %s are %T", name, pc.Args.Object)
			}
			return a
		}
	}
	t.Fatalf("no args of %s", name)
	var zero T
	return zero
}

// TestKoordinatorChartConfig: the configuration Koordinator's v1.8 chart ships loads unchanged, with
// Koordinator's defaults filled in.
func TestKoordinatorChartConfig(t *testing.T) {
	c, err := config.LoadFile("testdata/koordinator-v1.8-chart-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := validation.ValidateDeschedulerConfiguration(c); err != nil {
		t.Fatal(err)
	}
	if c.DeschedulingInterval.Duration != 10*time.Second || *c.HealthzBindAddress != "0.0.0.0:10251" || c.LeaderElection.ResourceName != "koord-descheduler" {
		t.Errorf("interval %v, healthz %s, lease %s", c.DeschedulingInterval, *c.HealthzBindAddress, c.LeaderElection.ResourceName)
	}
	p := &c.Profiles[0]
	if diff := cmp.Diff(&config.Plugins{
		Evict:  config.PluginSet{Enabled: []config.Plugin{{Name: "MigrationController"}}},
		Filter: config.PluginSet{Enabled: []config.Plugin{{Name: "MigrationController"}}},
	}, p.Plugins); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
	mc := argsOf[*config.MigrationControllerArgs](t, p, "MigrationController")
	if mc.EvictQPS.Value != 10 || !mc.EvictQPS.Quoted || *mc.EvictBurst != 1 || mc.EvictionPolicy != "Eviction" ||
		mc.DefaultJobMode != "ReservationFirst" || mc.DefaultJobTTL.Duration != 5*time.Minute || *mc.MaxMigratingPerNode != 2 {
		t.Errorf("MigrationController args: %+v", mc)
	}
	if diff := cmp.Diff(&config.Namespaces{Exclude: []string{"kube-system", "koordinator-system"}}, mc.Namespaces); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	ln := argsOf[*config.LowNodeLoadArgs](t, p, "LowNodeLoad")
	want := []config.LowNodeLoadNodePool{{
		Name:               config.DefaultNodePoolName,
		LowThresholds:      config.ResourceThresholds{"cpu": 45, "memory": 55},
		HighThresholds:     config.ResourceThresholds{"cpu": 75, "memory": 80},
		ProdLowThresholds:  config.ResourceThresholds{},
		ProdHighThresholds: config.ResourceThresholds{},
		ResourceWeights:    map[corev1.ResourceName]int64{"cpu": 1, "memory": 1},
		AnomalyCondition:   &config.LoadAnomalyCondition{Timeout: &metav1.Duration{Duration: time.Minute}, ConsecutiveAbnormalities: 5, ConsecutiveNormalities: 3},
	}}
	if diff := cmp.Diff(want, ln.NodePools, cmp.Transformer("nilAsEmpty", func(m config.ResourceThresholds) config.ResourceThresholds {
		if m == nil {
			return config.ResourceThresholds{}
		}
		return m
	})); diff != "" {
		t.Errorf("node pools (-want +got):\n%s", diff)
	}
	if !*ln.NodeFit || *ln.NodeMetricExpirationSeconds != 180 || ln.DetectorCacheTimeout.Duration != 5*time.Minute {
		t.Errorf("LowNodeLoad args: %+v", ln)
	}
}

func TestDefaults(t *testing.T) {
	c, err := config.Decode([]byte("apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\ndeschedulingInterval: 10m\nprofiles:\n- plugins:\n    balance:\n      enabled: [{name: LowNodeLoad}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validation.ValidateDeschedulerConfiguration(c); err != nil {
		t.Fatal(err)
	}
	p := &c.Profiles[0]
	if p.Name != "koord-descheduler" {
		t.Errorf("profile name %q", p.Name)
	}
	ln := argsOf[*config.LowNodeLoadArgs](t, p, "LowNodeLoad")
	// A detector must outlive the time between two rounds.
	if ln.DetectorCacheTimeout.Duration != 20*time.Minute {
		t.Errorf("detectorCacheTimeout %v, want 20m (twice the interval)", ln.DetectorCacheTimeout.Duration)
	}
	argsOf[*config.MigrationControllerArgs](t, p, "MigrationController")
	if *c.MetricsBindAddress != "0.0.0.0:10251" || c.LeaderElection.ResourceNamespace != "koordinator-system" || !*c.LeaderElection.LeaderElect {
		t.Errorf("metrics %s, lease namespace %s", *c.MetricsBindAddress, c.LeaderElection.ResourceNamespace)
	}
}

func TestNodePools(t *testing.T) {
	c, err := config.Decode([]byte(`apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
profiles:
- name: p
  plugins:
    balance:
      enabled: [{name: LowNodeLoad}]
  pluginConfig:
  - name: LowNodeLoad
    args:
      nodePools:
      - name: gpu
        nodeSelector: {matchLabels: {pool: gpu}}
        lowThresholds: {cpu: 30}
        highThresholds: {cpu: 60}
        anomalyCondition: {consecutiveAbnormalities: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	ln := argsOf[*config.LowNodeLoadArgs](t, &c.Profiles[0], "LowNodeLoad")
	// Without thresholds of its own, the arguments form no first pool.
	if len(ln.NodePools) != 1 || ln.NodePools[0].Name != "gpu" {
		t.Fatalf("pools %+v", ln.NodePools)
	}
	if got := ln.NodePools[0].AnomalyCondition; got.ConsecutiveAbnormalities != 2 || got.ConsecutiveNormalities != 3 || got.Timeout.Duration != time.Minute {
		t.Errorf("anomaly condition %+v", got)
	}
}

func TestErrors(t *testing.T) {
	const head = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\n"
	tests := []struct {
		name, config, want string
	}{
		{name: "unknown field", config: head + "deschedulingIntervall: 10s\n", want: `unknown field "deschedulingIntervall"`},
		{name: "wrong kind", config: "apiVersion: descheduler/v1alpha2\nkind: LowNodeLoadArgs\n", want: "want descheduler/v1alpha2, Kind=DeschedulerConfiguration"},
		{name: "unknown args field", config: head + "profiles:\n- name: a\n  pluginConfig:\n  - name: LowNodeLoad\n    args: {highThreshold: {cpu: 1}}\n", want: `profiles[0].pluginConfig[0]: decode args of LowNodeLoad: strict decoding error: unknown field "highThreshold"`},
		{name: "evictQPS not a number", config: head + "profiles:\n- name: a\n  pluginConfig:\n  - name: MigrationController\n    args: {evictQPS: ten}\n", want: `"ten" is not a number`},
		{name: "unsupported plugin", config: head + "profiles:\n- name: a\n  plugins:\n    deschedule:\n      enabled: [{name: RemoveDuplicates}]\n", want: `profiles[0].plugins.deschedule.enabled[0].name: Unsupported value: "RemoveDuplicates"`},
		{name: "low above high", config: head + "profiles:\n- name: a\n  pluginConfig:\n  - name: LowNodeLoad\n    args: {lowThresholds: {cpu: 80}, highThresholds: {cpu: 70}}\n", want: "profiles[0].pluginConfig[0].args.lowThresholds[cpu]: Invalid value: 80: must not be above highThresholds[cpu] (70)"},
		{name: "negative threshold in a pool", config: head + "profiles:\n- name: a\n  pluginConfig:\n  - name: LowNodeLoad\n    args: {nodePools: [{name: x, highThresholds: {cpu: -1}}]}\n", want: "profiles[0].pluginConfig[0].args.nodePools[0].highThresholds[cpu]: Invalid value: -1: must not be negative"},
		{name: "bad job mode", config: head + "profiles:\n- name: a\n  pluginConfig:\n  - name: MigrationController\n    args: {defaultJobMode: Evict}\n", want: `profiles[0].pluginConfig[0].args.defaultJobMode: Unsupported value: "Evict"`},
		{name: "bad gate", config: head + "profiles:\n- name: a\n  pluginConfig:\n  - name: MigrationController\n    args: {skipEvictionGates: [MaxMigratingPerPod]}\n", want: `skipEvictionGates[0]: Unsupported value: "MaxMigratingPerPod"`},
		{name: "duplicate profiles", config: head + "profiles:\n- name: a\n- name: a\n", want: `profiles[1].name: Duplicate value: "a"`},
		{name: "unnamed of two", config: head + "profiles:\n- name: a\n- {}\n", want: "profiles[1].name: Required value"},
		{name: "both namespace lists", config: head + "profiles:\n- name: a\n  pluginConfig:\n  - name: LowNodeLoad\n    args: {evictableNamespaces: {include: [a], exclude: [b]}}\n", want: "only one of include and exclude may be set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Decode([]byte(tt.config))
			if err == nil {
				err = validation.ValidateDeschedulerConfiguration(c)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// FuzzDecode: no input makes decoding, defaulting or validation panic.
func FuzzDecode(f *testing.F) {
	chart, err := os.ReadFile("testdata/koordinator-v1.8-chart-config.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(chart)
	f.Add([]byte("apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: LowNodeLoad\n    args: {nodePools: [{name: a, lowThresholds: {cpu: 10}}], useDeviationThresholds: true}\n"))
	f.Add([]byte(`{"apiVersion":"descheduler/v1alpha2","kind":"DeschedulerConfiguration","profiles":[{"pluginConfig":[{"name":"MigrationController","args":{"evictQPS":"1.5","maxMigratingPerWorkload":"20%"}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Decode(data)
		if err != nil {
			return
		}
		_ = validation.ValidateDeschedulerConfiguration(c)
	})
}
