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
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// The values of Koordinator's documented example ConfigMap (website docs/user-manuals/slo-config.md), which
// must keep working unchanged. The documented system-config lacks a comma; it is fixed here and the broken form
// is a test case of its own.
const (
	exampleColocation = `{
  "enable": false,
  "metricAggregateDurationSeconds": 300,
  "metricReportIntervalSeconds": 60,
  "metricAggregatePolicy": {"durations": ["5m", "10m", "15m"]},
  "cpuReclaimThresholdPercent": 60,
  "memoryReclaimThresholdPercent": 65,
  "memoryCalculatePolicy": "usage",
  "degradeTimeMinutes": 15,
  "updateTimeThresholdSeconds": 300,
  "resourceDiffThreshold": 0.1,
  "nodeConfigs": [{
    "name": "anolis",
    "nodeSelector": {"matchLabels": {"kubernetes.io/kernel": "anolis"}},
    "updateTimeThresholdSeconds": 360,
    "resourceDiffThreshold": 0.2
  }]
}`
	exampleResourceThreshold = `{
  "clusterStrategy": {
    "enable": false,
    "cpuSuppressThresholdPercent": 65,
    "cpuSuppressPolicy": "cpuset",
    "memoryEvictThresholdPercent": 70,
    "memoryEvictLowerPercent": 65,
    "cpuEvictBESatisfactionUpperPercent": 90,
    "cpuEvictBESatisfactionLowerPercent": 60,
    "cpuEvictBEUsageThresholdPercent": 90
  },
  "nodeStrategies": [{
    "name": "anolis",
    "nodeSelector": {"matchLabels": {"kubernetes.io/kernel": "anolis"}},
    "cpuEvictBEUsageThresholdPercent": 80
  }]
}`
	exampleResourceQOS = `{
  "clusterStrategy": {
    "lsrClass": {
      "cpuQOS": {"enable": false, "groupIdentity": 2},
      "memoryQOS": {"enable": false, "minLimitPercent": 0, "lowLimitPercent": 0, "throttlingPercent": 0,
        "wmarkRatio": 95, "wmarkScalePermill": 20, "wmarkMinAdj": -25, "priorityEnable": 0, "priority": 0, "oomKillGroup": 0},
      "resctrlQOS": {"enable": false, "catRangeStartPercent": 0, "catRangeEndPercent": 100, "mbaPercent": 100}
    },
    "lsClass": {
      "cpuQOS": {"enable": false, "groupIdentity": 2},
      "memoryQOS": {"enable": false, "minLimitPercent": 0, "lowLimitPercent": 0, "throttlingPercent": 0,
        "wmarkRatio": 95, "wmarkScalePermill": 20, "wmarkMinAdj": -25, "priorityEnable": 0, "priority": 0, "oomKillGroup": 0},
      "resctrlQOS": {"enable": false, "catRangeStartPercent": 0, "catRangeEndPercent": 100, "mbaPercent": 100}
    },
    "beClass": {
      "cpuQOS": {"enable": false, "groupIdentity": -1},
      "memoryQOS": {"enable": false, "minLimitPercent": 0, "lowLimitPercent": 0, "throttlingPercent": 0,
        "wmarkRatio": 95, "wmarkScalePermill": 20, "wmarkMinAdj": 50, "priorityEnable": 0, "priority": 0, "oomKillGroup": 0},
      "resctrlQOS": {"enable": false, "catRangeStartPercent": 0, "catRangeEndPercent": 30, "mbaPercent": 100}
    }
  },
  "nodeStrategies": [{
    "name": "anolis",
    "nodeSelector": {"matchLabels": {"kubernetes.io/kernel": "anolis"}},
    "beClass": {"memoryQOS": {"wmarkRatio": 90}}
  }]
}`
	exampleCPUBurst = `{
  "clusterStrategy": {"policy": "none", "cpuBurstPercent": 1000, "cfsQuotaBurstPercent": 300,
    "cfsQuotaBurstPeriodSeconds": -1, "sharePoolThresholdPercent": 50},
  "nodeStrategies": [{
    "name": "anolis",
    "nodeSelector": {"matchLabels": {"kubernetes.io/kernel": "anolis"}},
    "policy": "cfsQuotaBurstOnly",
    "cfsQuotaBurstPercent": 400
  }]
}`
	exampleSystem = `{
  "clusterStrategy": {"minFreeKbytesFactor": 100, "watermarkScaleFactor": 150, "memcgReapBackGround": 0},
  "nodeStrategies": [{
    "name": "anolis",
    "nodeSelector": {"matchLabels": {"kubernetes.io/kernel": "anolis"}},
    "minFreeKbytesFactor": 100,
    "watermarkScaleFactor": 150
  }]
}`
	exampleHostApplication = `{
  "applications": [{"name": "nginx", "priority": "koord-prod", "qos": "LS",
    "cgroupPath": {"base": "CgroupRoot", "parentDir": "host-latency-sensitive/", "relativePath": "nginx/"}}],
  "nodeConfigs": [{
    "name": "anolis",
    "nodeSelector": {"matchLabels": {"kubernetes.io/kernel": "anolis"}},
    "applications": []
  }]
}`
)

var anolis = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/kernel": "anolis"}}

func TestParseColocationCfg(t *testing.T) {
	tests := map[string]struct {
		data    string
		want    *ColocationCfg
		wantErr string
	}{
		"koordinator example": {
			data: exampleColocation,
			want: &ColocationCfg{
				ColocationStrategy: ColocationStrategy{
					Enable:                         ptr.To(false),
					MetricAggregateDurationSeconds: ptr.To[int64](300),
					MetricReportIntervalSeconds:    ptr.To[int64](60),
					MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{
						{Duration: 5 * time.Minute}, {Duration: 10 * time.Minute}, {Duration: 15 * time.Minute},
					}},
					CPUReclaimThresholdPercent:    ptr.To[int64](60),
					MemoryReclaimThresholdPercent: ptr.To[int64](65),
					MemoryCalculatePolicy:         ptr.To(CalculateByPodUsage),
					DegradeTimeMinutes:            ptr.To[int64](15),
					UpdateTimeThresholdSeconds:    ptr.To[int64](300),
					ResourceDiffThreshold:         ptr.To(0.1),
				},
				NodeConfigs: []NodeColocationCfg{{
					NodeCfgProfile: NodeCfgProfile{Name: "anolis", NodeSelector: anolis},
					ColocationStrategy: ColocationStrategy{
						UpdateTimeThresholdSeconds: ptr.To[int64](360),
						ResourceDiffThreshold:      ptr.To(0.2),
					},
				}},
			},
		},
		"null":  {data: "null", want: &ColocationCfg{}},
		"empty": {data: "{}", want: &ColocationCfg{}},
		"extensions pass through": {
			data: `{"extensions": {"vendor": {"x": 1}}}`,
			want: &ColocationCfg{ColocationStrategy: ColocationStrategy{
				Extensions: &slov1alpha1.ExtensionsMap{Object: map[string]any{"vendor": map[string]any{"x": float64(1)}}},
			}},
		},
		"misspelt field": {
			data:    `{"cpuReclaimThresholdPrecent": 70}`,
			wantErr: `colocation-config: unknown field "cpuReclaimThresholdPrecent"`,
			want:    &ColocationCfg{},
		},
		"unknown fields are each named with their path": {
			data: `{"enabled": true, "nodeConfigs": [{"nodeSelector": {}}, {"nodeSelector": {}, "cpuReclaim": 1}]}`,
			wantErr: "colocation-config: unknown field \"enabled\"\n" +
				`colocation-config: unknown field "nodeConfigs[1].cpuReclaim"`,
			want: &ColocationCfg{NodeConfigs: []NodeColocationCfg{
				{NodeCfgProfile: NodeCfgProfile{NodeSelector: &metav1.LabelSelector{}}},
				{NodeCfgProfile: NodeCfgProfile{NodeSelector: &metav1.LabelSelector{}}},
			}},
		},
		"field names match case-insensitively, as in Koordinator": {
			data: `{"CPUReclaimThresholdPercent": 70, "nodeConfigs": [{"Name": "a", "NODESELECTOR": {"matchLabels": {"Pool": "X"}}, "enable": true}]}`,
			want: &ColocationCfg{
				ColocationStrategy: ColocationStrategy{CPUReclaimThresholdPercent: ptr.To[int64](70)},
				NodeConfigs: []NodeColocationCfg{{
					NodeCfgProfile:     NodeCfgProfile{Name: "a", NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"Pool": "X"}}},
					ColocationStrategy: ColocationStrategy{Enable: ptr.To(true)},
				}},
			},
		},
		"a case variant next to the exact name is unknown": {
			data:    `{"enable": true, "Enable": false}`,
			wantErr: `colocation-config: unknown field "Enable"`,
			want:    &ColocationCfg{ColocationStrategy: ColocationStrategy{Enable: ptr.To(true)}},
		},
		"two case variants: the first in byte order wins, the other is unknown": {
			data:    `{"Enable": true, "ENABLE": false}`,
			wantErr: `colocation-config: unknown field "Enable"`,
			want:    &ColocationCfg{ColocationStrategy: ColocationStrategy{Enable: ptr.To(false)}},
		},
		"wrong type in a case variant": {
			data:    `{"nodeConfigs": [{"DegradeTimeMinutes": "5"}]}`,
			wantErr: `colocation-config: field "nodeConfigs.degradeTimeMinutes": cannot decode string as int64`,
		},
		"large integers keep their value": {
			data: `{"nodeConfigs": [{"Name": "a", "batchCPUThresholdPercent": 9007199254740993}]}`,
			want: &ColocationCfg{NodeConfigs: []NodeColocationCfg{{
				NodeCfgProfile:     NodeCfgProfile{Name: "a"},
				ColocationStrategy: ColocationStrategy{BatchCPUThresholdPercent: ptr.To[int64](9007199254740993)},
			}}},
		},
		"top-level array": {
			data:    `[]`,
			wantErr: `colocation-config: cannot decode array as ColocationCfg`,
		},
		"duplicate field": {
			data:    `{"enable": true, "enable": false}`,
			wantErr: `colocation-config: duplicate field "enable"`,
		},
		"wrong type names the JSON path": {
			data:    `{"nodeConfigs": [{"cpuReclaimThresholdPercent": 1.5}]}`,
			wantErr: `colocation-config: field "nodeConfigs.cpuReclaimThresholdPercent": cannot decode number 1.5 as int64`,
		},
		"string for bool": {
			data:    `{"enable": "true"}`,
			wantErr: `colocation-config: field "enable": cannot decode string as bool`,
		},
		"bad duration": {
			data:    `{"metricAggregatePolicy": {"durations": ["5x"]}}`,
			wantErr: `colocation-config: time: unknown unit "x" in duration "5x"`,
		},
		"syntax error gives line and column": {
			data:    "{\n  \"enable\": true\n  \"degradeTimeMinutes\": 5\n}",
			wantErr: `colocation-config: line 3, column 3: invalid character '"' after object key:value pair`,
		},
		"truncated": {
			data:    `{"enable": true`,
			wantErr: `colocation-config: line 1, column 15: unexpected end of JSON input`,
		},
		"trailing data": {
			data:    `{} {}`,
			wantErr: `colocation-config: line 1, column 4: invalid character '{' after top-level value`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseColocationCfg(tc.data)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("ParseColocationCfg() error (-want,+got):\n%s", diff)
			}
			if err != nil {
				var perr *ParseError
				if !errors.As(err, &perr) || perr.Key != ColocationConfigKey {
					t.Errorf("ParseColocationCfg() error %T does not name the key", err)
				}
			}
			// Unknown fields alone leave the rest decoded (tc.want), for a tolerant caller; any other error none.
			if onlyUnknown := strings.Contains(errString(err), "unknown field"); IsOnlyUnknownFields(err) != onlyUnknown {
				t.Errorf("IsOnlyUnknownFields() = %v, want %v", !onlyUnknown, onlyUnknown)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseColocationCfg() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestParseStrategyKeys(t *testing.T) {
	tests := map[string]struct {
		parse   func(string) (any, error)
		data    string
		want    any
		wantErr string
	}{
		"resource-threshold-config example": {
			parse: func(s string) (any, error) { return ParseResourceThresholdCfg(s) },
			data:  exampleResourceThreshold,
			want: &ResourceThresholdCfg{
				ClusterStrategy: &slov1alpha1.ResourceThresholdStrategy{
					Enable:                             ptr.To(false),
					CPUSuppressThresholdPercent:        ptr.To[int64](65),
					CPUSuppressPolicy:                  slov1alpha1.CPUSetPolicy,
					MemoryEvictThresholdPercent:        ptr.To[int64](70),
					MemoryEvictLowerPercent:            ptr.To[int64](65),
					CPUEvictBESatisfactionUpperPercent: ptr.To[int64](90),
					CPUEvictBESatisfactionLowerPercent: ptr.To[int64](60),
					CPUEvictBEUsageThresholdPercent:    ptr.To[int64](90),
				},
				NodeStrategies: []NodeResourceThresholdStrategy{{
					NodeCfgProfile:            NodeCfgProfile{Name: "anolis", NodeSelector: anolis},
					ResourceThresholdStrategy: &slov1alpha1.ResourceThresholdStrategy{CPUEvictBEUsageThresholdPercent: ptr.To[int64](80)},
				}},
			},
		},
		"resource-threshold-config as Koordinator's eviction manual writes it": {
			parse: func(s string) (any, error) { return ParseResourceThresholdCfg(s) },
			data: `{"clusterStrategy": {"enable": true, "cpuEvictBESatisfactionLowerPercent": 60, "cpuEvictBESatisfactionUpperPercent": 80,
				"cpuEvictBEUsageThresholdPercent": 90, "CPUEvictTimeWindowSeconds": 60}}`,
			want: &ResourceThresholdCfg{ClusterStrategy: &slov1alpha1.ResourceThresholdStrategy{
				Enable:                             ptr.To(true),
				CPUEvictBESatisfactionLowerPercent: ptr.To[int64](60),
				CPUEvictBESatisfactionUpperPercent: ptr.To[int64](80),
				CPUEvictBEUsageThresholdPercent:    ptr.To[int64](90),
				CPUEvictTimeWindowSeconds:          ptr.To[int64](60),
			}},
		},
		"resource-qos-config node strategy": {
			parse: func(s string) (any, error) { return ParseResourceQOSCfg(s) },
			data:  `{"nodeStrategies": [{"name": "n", "nodeSelector": {"matchLabels": {"a": "b"}}, "lsClass": {"networkQOS": {"enable": true, "ingressRequest": "50M", "egressLimit": 80}}}]}`,
			want: &ResourceQOSCfg{NodeStrategies: []NodeResourceQOSStrategy{{
				NodeCfgProfile: NodeCfgProfile{Name: "n", NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
				ResourceQOSStrategy: &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{NetworkQOS: &slov1alpha1.NetworkQOSCfg{
					Enable: ptr.To(true),
					NetworkQOS: slov1alpha1.NetworkQOS{
						IngressRequest: ptr.To(intstr.FromString("50M")),
						EgressLimit:    ptr.To(intstr.FromInt32(80)),
					},
				}}},
			}}},
		},
		"resource-qos-config wrong type deep inside": {
			parse:   func(s string) (any, error) { return ParseResourceQOSCfg(s) },
			data:    `{"nodeStrategies": [{"beClass": {"cpuQOS": {"groupIdentity": "high"}}}]}`,
			wantErr: `resource-qos-config: field "nodeStrategies.beClass.cpuQOS.groupIdentity": cannot decode string as int64`,
		},
		"cpu-burst-config example": {
			parse: func(s string) (any, error) { return ParseCPUBurstCfg(s) },
			data:  exampleCPUBurst,
			want: &CPUBurstCfg{
				ClusterStrategy: &slov1alpha1.CPUBurstStrategy{
					CPUBurstConfig: slov1alpha1.CPUBurstConfig{
						Policy:                     slov1alpha1.CPUBurstNone,
						CPUBurstPercent:            ptr.To[int64](1000),
						CFSQuotaBurstPercent:       ptr.To[int64](300),
						CFSQuotaBurstPeriodSeconds: ptr.To[int64](-1),
					},
					SharePoolThresholdPercent: ptr.To[int64](50),
				},
				NodeStrategies: []NodeCPUBurstCfg{{
					NodeCfgProfile: NodeCfgProfile{Name: "anolis", NodeSelector: anolis},
					CPUBurstStrategy: &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{
						Policy:               slov1alpha1.CFSQuotaBurstOnly,
						CFSQuotaBurstPercent: ptr.To[int64](400),
					}},
				}},
			},
		},
		"cpu-burst-config unknown field": {
			parse:   func(s string) (any, error) { return ParseCPUBurstCfg(s) },
			data:    `{"clusterStrategy": {"cpuBurstPercentage": 100}}`,
			wantErr: `cpu-burst-config: unknown field "clusterStrategy.cpuBurstPercentage"`,
		},
		"system-config example": {
			parse: func(s string) (any, error) { return ParseSystemCfg(s) },
			data:  exampleSystem,
			want: &SystemCfg{
				ClusterStrategy: &slov1alpha1.SystemStrategy{
					MinFreeKbytesFactor: ptr.To[int64](100), WatermarkScaleFactor: ptr.To[int64](150), MemcgReapBackGround: ptr.To[int64](0),
				},
				NodeStrategies: []NodeSystemStrategy{{
					NodeCfgProfile: NodeCfgProfile{Name: "anolis", NodeSelector: anolis},
					SystemStrategy: &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100), WatermarkScaleFactor: ptr.To[int64](150)},
				}},
			},
		},
		"system-config as documented, missing a comma": {
			parse:   func(s string) (any, error) { return ParseSystemCfg(s) },
			data:    "{\n  \"clusterStrategy\": {\"minFreeKbytesFactor\": 100}\n  \"nodeStrategies\": []\n}",
			wantErr: `system-config: line 3, column 3: invalid character '"' after object key:value pair`,
		},
		"host-application-config": {
			parse: func(s string) (any, error) { return ParseHostApplicationCfg(s) },
			data:  exampleHostApplication,
			want: &HostApplicationCfg{
				Applications: []slov1alpha1.HostApplicationSpec{{
					Name: "nginx", Priority: "koord-prod", QoS: "LS",
					CgroupPath: &slov1alpha1.CgroupPath{Base: slov1alpha1.CgroupBaseTypeRoot, ParentDir: "host-latency-sensitive/", RelativePath: "nginx/"},
				}},
				NodeConfigs: []NodeHostApplicationCfg{{
					NodeCfgProfile: NodeCfgProfile{Name: "anolis", NodeSelector: anolis},
					Applications:   []slov1alpha1.HostApplicationSpec{},
				}},
			},
		},
		"host-application-config unknown field": {
			parse:   func(s string) (any, error) { return ParseHostApplicationCfg(s) },
			data:    `{"applications": [{"name": "a", "cgroup": "x"}]}`,
			wantErr: `host-application-config: unknown field "applications[0].cgroup"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.parse(tc.data)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("parse error (-want,+got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parse (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestExampleValidates(t *testing.T) {
	cfg := mustParseAll(t, exampleColocation, exampleResourceThreshold, exampleResourceQOS, exampleCPUBurst, exampleSystem, exampleHostApplication)
	if errs := ValidateSLOCfg(nil, cfg); len(errs) > 0 {
		t.Errorf("Koordinator's example does not validate: %v", errs.ToAggregate())
	}
}

// mustParseAll parses the values of the keys, in the order colocation, resource threshold, resource QoS, CPU
// burst, system, host application; an empty value leaves the key unset.
func mustParseAll(t testing.TB, values ...string) *SLOCfg {
	t.Helper()
	cfg := &SLOCfg{}
	var err error
	for i, v := range values {
		if v == "" {
			continue
		}
		switch i {
		case 0:
			cfg.Colocation, err = ParseColocationCfg(v)
		case 1:
			cfg.ResourceThreshold, err = ParseResourceThresholdCfg(v)
		case 2:
			cfg.ResourceQOS, err = ParseResourceQOSCfg(v)
		case 3:
			cfg.CPUBurst, err = ParseCPUBurstCfg(v)
		case 4:
			cfg.System, err = ParseSystemCfg(v)
		case 5:
			cfg.HostApplication, err = ParseHostApplicationCfg(v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
