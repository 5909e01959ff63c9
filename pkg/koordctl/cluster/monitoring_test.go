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
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestPrometheusConfig: every replica of every component is a target of its job, koord-scheduler over HTTPS,
// and the alert rules are loaded.
func TestPrometheusConfig(t *testing.T) {
	ports := Ports{
		ManagerReplicas:   []ReplicaPorts{{Metrics: 8001}, {Metrics: 8002}},
		SchedulerReplicas: []int{9001, 9002},
		Descheduler:       10251, SimMetrics: 7001,
	}
	data, err := prometheusConfig(ports, "/run/prometheus/koord.rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		Name          string                       `json:"job_name"`
		Scheme        string                       `json:"scheme"`
		StaticConfigs []struct{ Targets []string } `json:"static_configs"`
	}
	var cfg struct {
		Global struct {
			ScrapeInterval string `json:"scrape_interval"`
		} `json:"global"`
		RuleFiles     []string `json:"rule_files"`
		ScrapeConfigs []job    `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	schemes := map[string]string{}
	for _, j := range cfg.ScrapeConfigs {
		for _, sc := range j.StaticConfigs {
			got[j.Name] = append(got[j.Name], sc.Targets...)
		}
		schemes[j.Name] = j.Scheme
	}
	want := map[string][]string{
		"koord-manager":     {"127.0.0.1:8001", "127.0.0.1:8002"},
		"koord-scheduler":   {"127.0.0.1:9001", "127.0.0.1:9002"},
		"koord-descheduler": {"127.0.0.1:10251"},
		"koordlet":          {"127.0.0.1:7001"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets by job (-want,+got):\n%s", diff)
	}
	if schemes["koord-scheduler"] != "https" {
		t.Errorf("koord-scheduler scheme = %q, want https", schemes["koord-scheduler"])
	}
	if diff := cmp.Diff([]string{"/run/prometheus/koord.rules.yaml"}, cfg.RuleFiles); diff != "" {
		t.Errorf("rule_files (-want,+got):\n%s", diff)
	}
	if cfg.Global.ScrapeInterval != prometheusScrapeInterval {
		t.Errorf("scrape_interval = %q, want %q", cfg.Global.ScrapeInterval, prometheusScrapeInterval)
	}
}
