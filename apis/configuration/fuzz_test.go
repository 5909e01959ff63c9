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

package configuration

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/extension"
)

// The fuzz targets check, for arbitrary ConfigMap values and nodes, that parsing never panics, that a parse error
// names its key, and that a configuration that parses and validates renders for any node into a strategy that
// validates too (so every NodeSLO and NodeMetric written from it is accepted by the API server). Their seed
// corpora run with the unit tests.

// fuzzNode builds a node from "k=v,k=v" labels and a colocation strategy annotation.
func fuzzNode(nodeLabels, annotation string) *corev1.Node {
	l := map[string]string{}
	for _, kv := range strings.Split(nodeLabels, ",") {
		k, v, _ := strings.Cut(kv, "=")
		l[k] = v
	}
	return testNode(l, map[string]string{extension.AnnotationNodeColocationStrategy: annotation})
}

// checkParseError checks that a parse error is a *ParseError naming key.
func checkParseError(t *testing.T, key string, err error) {
	t.Helper()
	var perr *ParseError
	if !errors.As(err, &perr) || perr.Key != key || !strings.HasPrefix(err.Error(), key+": ") {
		t.Fatalf("parse error %q (%T) does not name %s", err, err, key)
	}
}

// seedStrategyKey adds seeds common to the {clusterStrategy, nodeStrategies} keys.
func seedStrategyKey(f *testing.F, valid ...string) {
	for _, s := range append(valid,
		``, `null`, `{}`, `[]`, `{"clusterStrategy": null}`, `{"nodeStrategies": [{}]}`, `{"nodeStrategies": [null]}`,
		`{"clusterStrategy": {"enable": "x"}}`, `{"clusterStrategy": {}, "clusterStrategy": {}}`, `{"unknown": 1}`,
		`{"nodeStrategies": [{"nodeSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}, {"key": "b", "operator": "Exists"}]}},
			{"nodeSelector": {"matchLabels": {"a": "2", "b": "x"}}}]}`,
		"{\n\"clusterStrategy\": {}\n\"nodeStrategies\": []}",
	) {
		f.Add(s, "a=1,b=x,kubernetes.io/kernel=anolis,gpu=true")
	}
}

func FuzzParseColocationCfg(f *testing.F) {
	for _, s := range []string{
		exampleColocation, ``, `null`, `{}`, `[]`, `"x"`, `{"enable": true}`, `{"cpuReclaimThresholdPrecent": 70}`,
		`{"metricAggregatePolicy": {"durations": ["5m", "-1s", "x"]}}`, `{"resourceDiffThreshold": 1e309}`,
		`{"nodeConfigs": [{"nodeSelector": {"matchLabels": {"a": "1"}}, "cpuReclaimThresholdPercent": 9223372036854775807}]}`,
		`{"nodeConfigs": [{"nodeSelector": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}, {"nodeSelector": {"matchLabels": {"a": "1"}}}]}`,
		`{"extensions": {"a": [1, {"b": null}]}}`, "{\"enable\": true\n\"x\": 1}",
	} {
		f.Add(s, "a=1,kubernetes.io/kernel=anolis,node.koordinator.sh/cpu-reclaim-ratio=0.5", `{"enable": true, "cpuReclaimThresholdPercent": 50}`)
		f.Add(s, "node.koordinator.sh/memory-reclaim-ratio=NaN,node.koordinator.sh/mid-static-cpu-reserved-ratio=1e308", `{"degradeTimeMinutes": -1}`)
	}
	f.Fuzz(func(t *testing.T, data, nodeLabels, annotation string) {
		cfg, err := ParseColocationCfg(data)
		if err != nil {
			checkParseError(t, ColocationConfigKey, err)
			return
		}
		if errs := ValidateColocationCfg(field.NewPath(ColocationConfigKey), cfg); len(errs) > 0 {
			return
		}
		strategy, _ := ColocationStrategyForNode(cfg, fuzzNode(nodeLabels, annotation))
		if errs := ValidateColocationStrategy(field.NewPath("rendered"), &strategy); len(errs) > 0 {
			t.Fatalf("a valid configuration rendered an invalid strategy: %v", errs.ToAggregate())
		}
		NodeMetricCollectPolicy(strategy)
	})
}

func FuzzParseResourceThresholdCfg(f *testing.F) {
	seedStrategyKey(f, exampleResourceThreshold,
		`{"clusterStrategy": {"memoryEvictLowerPercent": 69}, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"a": "1"}}, "memoryEvictThresholdPercent": 60}]}`)
	f.Fuzz(func(t *testing.T, data, nodeLabels string) {
		cfg, err := ParseResourceThresholdCfg(data)
		if err != nil {
			checkParseError(t, ResourceThresholdConfigKey, err)
			return
		}
		if errs := ValidateResourceThresholdCfg(field.NewPath(ResourceThresholdConfigKey), cfg); len(errs) > 0 {
			return
		}
		rendered := ResourceThresholdStrategyForNode(cfg, fuzzNode(nodeLabels, ""))
		if errs := ValidateResourceThresholdStrategy(field.NewPath("rendered"), rendered); len(errs) > 0 {
			t.Fatalf("a valid configuration rendered an invalid strategy: %v", errs.ToAggregate())
		}
	})
}

func FuzzParseResourceQOSCfg(f *testing.F) {
	seedStrategyKey(f, exampleResourceQOS,
		`{"clusterStrategy": {"lsClass": {"networkQOS": {"ingressRequest": 60}}}, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"a": "1"}}, "beClass": {"networkQOS": {"ingressRequest": 50}}}]}`,
		`{"clusterStrategy": {"cgroupRoot": {"blkioQOS": {"blocks": [{"name": "/dev/sda", "type": "device", "ioCfg": {"ioWeightPercent": 50}}]}}}}`)
	f.Fuzz(func(t *testing.T, data, nodeLabels string) {
		cfg, err := ParseResourceQOSCfg(data)
		if err != nil {
			checkParseError(t, ResourceQOSConfigKey, err)
			return
		}
		if errs := ValidateResourceQOSCfg(field.NewPath(ResourceQOSConfigKey), cfg); len(errs) > 0 {
			return
		}
		rendered := ResourceQOSStrategyForNode(cfg, fuzzNode(nodeLabels, ""))
		if errs := ValidateResourceQOSStrategy(field.NewPath("rendered"), rendered); len(errs) > 0 {
			t.Fatalf("a valid configuration rendered an invalid strategy: %v", errs.ToAggregate())
		}
	})
}

func FuzzParseCPUBurstCfg(f *testing.F) {
	seedStrategyKey(f, exampleCPUBurst)
	f.Fuzz(func(t *testing.T, data, nodeLabels string) {
		cfg, err := ParseCPUBurstCfg(data)
		if err != nil {
			checkParseError(t, CPUBurstConfigKey, err)
			return
		}
		if errs := ValidateCPUBurstCfg(field.NewPath(CPUBurstConfigKey), cfg); len(errs) > 0 {
			return
		}
		rendered := CPUBurstStrategyForNode(cfg, fuzzNode(nodeLabels, ""))
		if errs := ValidateCPUBurstStrategy(field.NewPath("rendered"), rendered); len(errs) > 0 {
			t.Fatalf("a valid configuration rendered an invalid strategy: %v", errs.ToAggregate())
		}
	})
}

func FuzzParseSystemCfg(f *testing.F) {
	seedStrategyKey(f, exampleSystem, `{"clusterStrategy": {"totalNetworkBandwidth": "10G", "schedFeatures": {"A": true}}}`)
	f.Fuzz(func(t *testing.T, data, nodeLabels string) {
		cfg, err := ParseSystemCfg(data)
		if err != nil {
			checkParseError(t, SystemConfigKey, err)
			return
		}
		if errs := ValidateSystemCfg(field.NewPath(SystemConfigKey), cfg); len(errs) > 0 {
			return
		}
		rendered := SystemStrategyForNode(cfg, fuzzNode(nodeLabels, ""))
		if errs := ValidateSystemStrategy(field.NewPath("rendered"), rendered); len(errs) > 0 {
			t.Fatalf("a valid configuration rendered an invalid strategy: %v", errs.ToAggregate())
		}
	})
}

func FuzzParseHostApplicationCfg(f *testing.F) {
	for _, s := range []string{
		exampleHostApplication, ``, `null`, `{}`, `{"applications": null}`, `{"applications": [{}]}`,
		`{"applications": [{"name": "a", "cgroupPath": {"base": "x"}}]}`, `{"nodeConfigs": [{"applications": [{"name": "a"}]}]}`,
	} {
		f.Add(s, "kubernetes.io/kernel=anolis")
	}
	f.Fuzz(func(t *testing.T, data, nodeLabels string) {
		cfg, err := ParseHostApplicationCfg(data)
		if err != nil {
			checkParseError(t, HostApplicationConfigKey, err)
			return
		}
		if errs := ValidateHostApplicationCfg(field.NewPath(HostApplicationConfigKey), cfg); len(errs) > 0 {
			return
		}
		HostApplicationsForNode(cfg, fuzzNode(nodeLabels, ""))
	})
}
