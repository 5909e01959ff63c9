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
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateKeys parses the given ConfigMap values (see mustParseAll) and validates them, returning the messages.
func validateKeys(t *testing.T, values ...string) []string {
	t.Helper()
	errs := ValidateSLOCfg(nil, mustParseAll(t, values...))
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestValidateColocationCfg(t *testing.T) {
	tests := map[string]struct {
		data string
		want []string
	}{
		"koordinator example": {data: exampleColocation},
		"empty":               {data: `{}`},
		"reclaim above 100 is allowed, as in Koordinator": {data: `{"cpuReclaimThresholdPercent": 150, "memoryReclaimThresholdPercent": 200, "batchCPUThresholdPercent": 120}`},
		"every bound at its limit": {data: `{"metricAggregateDurationSeconds": 1, "metricReportIntervalSeconds": 1, "cpuReclaimThresholdPercent": 0,
			"memoryReclaimThresholdPercent": 10000, "degradeTimeMinutes": 1, "updateTimeThresholdSeconds": 1, "resourceDiffThreshold": 1,
			"midCPUThresholdPercent": 0, "midMemoryThresholdPercent": 100, "midUnallocatedPercent": 100, "midStaticCPUReservedPercent": 100,
			"midStaticMemoryReservedPercent": 0, "batchCPUThresholdPercent": 0, "batchMemoryThresholdPercent": 10000, "midReclaimMode": "static",
			"cpuCalculatePolicy": "maxUsageRequest", "memoryCalculatePolicy": "request", "metricMemoryCollectPolicy": "usageWithPageCache"}`},
		"durations and intervals at least 1": {
			data: `{"metricAggregateDurationSeconds": 0, "metricReportIntervalSeconds": -5, "degradeTimeMinutes": 0, "updateTimeThresholdSeconds": 0}`,
			want: []string{
				"colocation-config.metricAggregateDurationSeconds: Invalid value: 0: must be greater than or equal to 1",
				"colocation-config.metricReportIntervalSeconds: Invalid value: -5: must be greater than or equal to 1",
				"colocation-config.degradeTimeMinutes: Invalid value: 0: must be greater than or equal to 1",
				"colocation-config.updateTimeThresholdSeconds: Invalid value: 0: must be greater than or equal to 1",
			},
		},
		"aggregate windows positive and at most 16": {
			data: `{"metricAggregatePolicy": {"durations": ["0s", "-5m", "1m", "1m", "1m", "1m", "1m", "1m", "1m", "1m", "1m", "1m", "1m", "1m", "1m", "1m", "1m"]}}`,
			want: []string{
				"colocation-config.metricAggregatePolicy.durations: Too many: 17: must have at most 16 items",
				`colocation-config.metricAggregatePolicy.durations[0]: Invalid value: "0s": must be positive`,
				`colocation-config.metricAggregatePolicy.durations[1]: Invalid value: "-5m0s": must be positive`,
			},
		},
		"reclaim and batch thresholds between 0 and 10000": {
			data: `{"cpuReclaimThresholdPercent": -1, "memoryReclaimThresholdPercent": 10001, "batchCPUThresholdPercent": -1, "batchMemoryThresholdPercent": 20000}`,
			want: []string{
				"colocation-config.cpuReclaimThresholdPercent: Invalid value: -1: must be between 0 and 10000",
				"colocation-config.memoryReclaimThresholdPercent: Invalid value: 10001: must be between 0 and 10000",
				"colocation-config.batchCPUThresholdPercent: Invalid value: -1: must be between 0 and 10000",
				"colocation-config.batchMemoryThresholdPercent: Invalid value: 20000: must be between 0 and 10000",
			},
		},
		"calculate policies": {
			data: `{"cpuCalculatePolicy": "request", "memoryCalculatePolicy": "Usage"}`,
			want: []string{
				`colocation-config.cpuCalculatePolicy: Unsupported value: "request": supported values: "usage", "maxUsageRequest"`,
				`colocation-config.memoryCalculatePolicy: Unsupported value: "Usage": supported values: "usage", "request", "maxUsageRequest"`,
			},
		},
		"resource diff threshold in (0, 1]": {
			data: `{"resourceDiffThreshold": 0, "nodeConfigs": [{"nodeSelector": {"matchLabels": {"a": "b"}}, "resourceDiffThreshold": 1.5}]}`,
			want: []string{
				"colocation-config.resourceDiffThreshold: Invalid value: 0: must be greater than 0 and at most 1",
				"colocation-config.nodeConfigs[0].resourceDiffThreshold: Invalid value: 1.5: must be greater than 0 and at most 1",
			},
		},
		"mid percentages between 0 and 100": {
			data: `{"nodeConfigs": [{"nodeSelector": {"matchLabels": {"a": "b"}}},
				{"nodeSelector": {"matchLabels": {"a": "c"}}, "midCPUThresholdPercent": 150, "midMemoryThresholdPercent": -1,
				 "midUnallocatedPercent": 101, "midStaticCPUReservedPercent": 200, "midStaticMemoryReservedPercent": -3}]}`,
			want: []string{
				"colocation-config.nodeConfigs[1].midCPUThresholdPercent: Invalid value: 150: must be between 0 and 100",
				"colocation-config.nodeConfigs[1].midMemoryThresholdPercent: Invalid value: -1: must be between 0 and 100",
				"colocation-config.nodeConfigs[1].midUnallocatedPercent: Invalid value: 101: must be between 0 and 100",
				"colocation-config.nodeConfigs[1].midStaticCPUReservedPercent: Invalid value: 200: must be between 0 and 100",
				"colocation-config.nodeConfigs[1].midStaticMemoryReservedPercent: Invalid value: -3: must be between 0 and 100",
			},
		},
		"enums": {
			data: `{"midReclaimMode": "dynamic", "metricMemoryCollectPolicy": "all"}`,
			want: []string{
				`colocation-config.metricMemoryCollectPolicy: Unsupported value: "all": supported values: "usageWithoutPageCache", "usageWithHotPageCache", "usageWithPageCache"`,
				`colocation-config.midReclaimMode: Unsupported value: "dynamic": supported values: "static"`,
			},
		},
		"node selector required": {
			data: `{"nodeConfigs": [{"name": "a"}, {"name": "b", "nodeSelector": {}}]}`,
			want: []string{
				"colocation-config.nodeConfigs[0].nodeSelector: Required value: a node strategy must select nodes by matchLabels or matchExpressions",
				"colocation-config.nodeConfigs[1].nodeSelector: Required value: a node strategy must select nodes by matchLabels or matchExpressions",
			},
		},
		"node selector must parse": {
			data: `{"nodeConfigs": [{"nodeSelector": {"matchExpressions": [{"key": "a", "operator": "In"}, {"key": "b", "operator": "Near", "values": ["x"]}]}},
				{"nodeSelector": {"matchLabels": {"bad key!": "x"}}}]}`,
			want: []string{
				"colocation-config.nodeConfigs[0].nodeSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
				`colocation-config.nodeConfigs[0].nodeSelector.matchExpressions[1].operator: Invalid value: "Near": not a valid selector operator`,
				`colocation-config.nodeConfigs[1].nodeSelector.matchLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			},
		},
		"overlap: same labels": {
			data: `{"nodeConfigs": [{"name": "a", "nodeSelector": {"matchLabels": {"pool": "x"}}},
				{"name": "b", "nodeSelector": {"matchLabels": {"pool": "x", "zone": "1"}}}]}`,
			want: []string{
				`colocation-config.nodeConfigs[1].nodeSelector: Forbidden: node strategy "b" (colocation-config.nodeConfigs[1]) overlaps node strategy "a" (colocation-config.nodeConfigs[0]): both select a node labelled "pool=x,zone=1"; the first match would win, so node strategies must not overlap`,
			},
		},
		"overlap: In values": {
			data: `{"nodeConfigs": [{"nodeSelector": {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["x", "y"]}]}},
				{"nodeSelector": {"matchLabels": {"pool": "y"}}}]}`,
			want: []string{
				`colocation-config.nodeConfigs[1].nodeSelector: Forbidden: node strategy colocation-config.nodeConfigs[1] overlaps node strategy colocation-config.nodeConfigs[0]: both select a node labelled "pool=y"; the first match would win, so node strategies must not overlap`,
			},
		},
		"overlap: Exists": {
			data: `{"nodeConfigs": [{"name": "gpu", "nodeSelector": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}},
				{"name": "a100", "nodeSelector": {"matchLabels": {"gpu": "a100"}}}]}`,
			want: []string{
				`colocation-config.nodeConfigs[1].nodeSelector: Forbidden: node strategy "a100" (colocation-config.nodeConfigs[1]) overlaps node strategy "gpu" (colocation-config.nodeConfigs[0]): both select a node labelled "gpu=a100"; the first match would win, so node strategies must not overlap`,
			},
		},
		"no overlap: disjoint values": {
			data: `{"nodeConfigs": [{"nodeSelector": {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["x", "y"]}]}},
				{"nodeSelector": {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["x", "y"]}, {"key": "pool", "operator": "Exists"}]}},
				{"nodeSelector": {"matchLabels": {"pool": "z"}, "matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}}]}`,
			want: []string{
				`colocation-config.nodeConfigs[2].nodeSelector: Forbidden: node strategy colocation-config.nodeConfigs[2] overlaps node strategy colocation-config.nodeConfigs[1]: both select a node labelled "pool=z"; the first match would win, so node strategies must not overlap`,
			},
		},
		"no overlap: different keys, as in Koordinator": {
			data: `{"nodeConfigs": [{"nodeSelector": {"matchLabels": {"pool": "x"}}}, {"nodeSelector": {"matchLabels": {"gpu": "true"}}}]}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := validateKeys(t, tc.data)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateColocationCfg() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateResourceThresholdCfg(t *testing.T) {
	tests := map[string]struct {
		data string
		want []string
	}{
		"koordinator example": {data: exampleResourceThreshold},
		"percentages between 0 and 100": {
			data: `{"clusterStrategy": {"cpuSuppressThresholdPercent": 101, "cpuSuppressMinPercent": -1, "memoryEvictThresholdPercent": 200,
				"cpuEvictBEUsageThresholdPercent": 101, "cpuEvictThresholdPercent": -2}}`,
			want: []string{
				"resource-threshold-config.clusterStrategy.cpuSuppressThresholdPercent: Invalid value: 101: must be between 0 and 100",
				"resource-threshold-config.clusterStrategy.cpuSuppressMinPercent: Invalid value: -1: must be between 0 and 100",
				"resource-threshold-config.clusterStrategy.memoryEvictThresholdPercent: Invalid value: 200: must be between 0 and 100",
				"resource-threshold-config.clusterStrategy.cpuEvictBEUsageThresholdPercent: Invalid value: 101: must be between 0 and 100",
				"resource-threshold-config.clusterStrategy.cpuEvictThresholdPercent: Invalid value: -2: must be between 0 and 100",
			},
		},
		"allocatable eviction may exceed 100 but not go negative": {
			data: `{"clusterStrategy": {"cpuAllocatableEvictThresholdPercent": 150, "cpuAllocatableEvictLowerPercent": 140,
				"memoryAllocatableEvictThresholdPercent": -1, "cpuEvictTimeWindowSeconds": 0, "allocatableEvictPriorityThreshold": 9000}}`,
			want: []string{
				"resource-threshold-config.clusterStrategy.memoryAllocatableEvictThresholdPercent: Invalid value: -1: must be greater than or equal to 0",
				"resource-threshold-config.clusterStrategy.cpuEvictTimeWindowSeconds: Invalid value: 0: must be greater than or equal to 1",
				"resource-threshold-config.clusterStrategy.allocatableEvictPriorityThreshold: Invalid value: 9000: must be at most 7999: allocatable-based eviction may not evict koord-prod pods",
			},
		},
		"pressure threshold of 0": {
			data: `{"clusterStrategy": {"cpuSuppressPSIThresholdPercent": 0}}`,
			want: []string{
				"resource-threshold-config.clusterStrategy.cpuSuppressPSIThresholdPercent: Invalid value: 0: must be between 1 and 100",
			},
		},
		"enums": {
			data: `{"clusterStrategy": {"cpuSuppressPolicy": "quota", "cpuEvictPolicy": "evictByLimit"}}`,
			want: []string{
				`resource-threshold-config.clusterStrategy.cpuSuppressPolicy: Unsupported value: "quota": supported values: "cpuset", "cfsQuota"`,
				`resource-threshold-config.clusterStrategy.cpuEvictPolicy: Unsupported value: "evictByLimit": supported values: "evictByRealLimit", "evictByAllocatable"`,
			},
		},
		"evict lower must be below upper": {
			data: `{"clusterStrategy": {"memoryEvictThresholdPercent": 70, "memoryEvictLowerPercent": 70,
				"cpuEvictBESatisfactionUpperPercent": 50, "cpuEvictBESatisfactionLowerPercent": 60,
				"cpuEvictThresholdPercent": 80, "cpuEvictLowerPercent": 90,
				"cpuAllocatableEvictThresholdPercent": 100, "cpuAllocatableEvictLowerPercent": 100,
				"memoryAllocatableEvictThresholdPercent": 100, "memoryAllocatableEvictLowerPercent": 101}}`,
			want: []string{
				"resource-threshold-config.clusterStrategy.memoryEvictLowerPercent: Invalid value: 70: must be less than memoryEvictThresholdPercent (70)",
				"resource-threshold-config.clusterStrategy.cpuEvictBESatisfactionLowerPercent: Invalid value: 60: must be less than cpuEvictBESatisfactionUpperPercent (50)",
				"resource-threshold-config.clusterStrategy.cpuEvictLowerPercent: Invalid value: 90: must be less than cpuEvictThresholdPercent (80)",
				"resource-threshold-config.clusterStrategy.cpuAllocatableEvictLowerPercent: Invalid value: 100: must be less than cpuAllocatableEvictThresholdPercent (100)",
				"resource-threshold-config.clusterStrategy.memoryAllocatableEvictLowerPercent: Invalid value: 101: must be less than memoryAllocatableEvictThresholdPercent (100)",
			},
		},
		"relations are checked against the defaults": {
			data: `{"clusterStrategy": {"memoryEvictLowerPercent": 75}}`,
			want: []string{
				"resource-threshold-config.clusterStrategy.memoryEvictLowerPercent: Invalid value: 75: must be less than memoryEvictThresholdPercent (70)",
			},
		},
		"relations are checked against the cluster strategy": {
			data: `{"clusterStrategy": {"memoryEvictThresholdPercent": 90, "memoryEvictLowerPercent": 85},
				"nodeStrategies": [{"nodeSelector": {"matchLabels": {"a": "b"}}, "memoryEvictThresholdPercent": 80}]}`,
			want: []string{
				"resource-threshold-config.nodeStrategies[0].memoryEvictLowerPercent: Invalid value: 85: must be less than memoryEvictThresholdPercent (80)",
			},
		},
		"a node strategy is not blamed for the cluster's error": {
			data: `{"clusterStrategy": {"memoryEvictLowerPercent": 75},
				"nodeStrategies": [{"nodeSelector": {"matchLabels": {"a": "b"}}, "enable": true}, {"nodeSelector": {"matchLabels": {"a": "c"}}, "memoryEvictThresholdPercent": 80}]}`,
			want: []string{
				"resource-threshold-config.clusterStrategy.memoryEvictLowerPercent: Invalid value: 75: must be less than memoryEvictThresholdPercent (70)",
			},
		},
		"node strategies need selectors and must not overlap": {
			data: `{"nodeStrategies": [{"name": "a", "nodeSelector": {"matchLabels": {"pool": "x"}}}, {"name": "b", "nodeSelector": {"matchLabels": {"pool": "x"}}}, {"name": "c"}]}`,
			want: []string{
				"resource-threshold-config.nodeStrategies[2].nodeSelector: Required value: a node strategy must select nodes by matchLabels or matchExpressions",
				`resource-threshold-config.nodeStrategies[1].nodeSelector: Forbidden: node strategy "b" (resource-threshold-config.nodeStrategies[1]) overlaps node strategy "a" (resource-threshold-config.nodeStrategies[0]): both select a node labelled "pool=x"; the first match would win, so node strategies must not overlap`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := validateKeys(t, "", tc.data)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateResourceThresholdCfg() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateResourceQOSCfg(t *testing.T) {
	tests := map[string]struct {
		data string
		want []string
	}{
		"koordinator example": {data: exampleResourceQOS},
		"policies": {
			data: `{"clusterStrategy": {"policies": {"cpuPolicy": "bvt", "netQOSPolicy": "tbf"}}}`,
			want: []string{
				`resource-qos-config.clusterStrategy.policies.cpuPolicy: Unsupported value: "bvt": supported values: "groupIdentity", "coreSched"`,
				`resource-qos-config.clusterStrategy.policies.netQOSPolicy: Unsupported value: "tbf": supported values: "tc", "terway-qos"`,
			},
		},
		"cpu qos": {
			data: `{"clusterStrategy": {"lsClass": {"cpuQOS": {"groupIdentity": 3, "schedIdle": 2}}, "beClass": {"cpuQOS": {"groupIdentity": -2}}}}`,
			want: []string{
				"resource-qos-config.clusterStrategy.lsClass.cpuQOS.groupIdentity: Invalid value: 3: must be between -1 and 2",
				"resource-qos-config.clusterStrategy.lsClass.cpuQOS.schedIdle: Invalid value: 2: must be between 0 and 1",
				"resource-qos-config.clusterStrategy.beClass.cpuQOS.groupIdentity: Invalid value: -2: must be between -1 and 2",
			},
		},
		"memory qos": {
			data: `{"clusterStrategy": {"lsrClass": {"memoryQOS": {"minLimitPercent": 101, "lowLimitPercent": -1, "throttlingPercent": 101,
				"wmarkRatio": 101, "wmarkScalePermill": 0, "wmarkMinAdj": -26, "priorityEnable": 2, "priority": 13, "oomKillGroup": 2,
				"pageCacheLimitEnable": 2, "pageCacheLimitSize": -1, "pageCacheLimitSync": 2}}}}`,
			want: []string{
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.minLimitPercent: Invalid value: 101: must be between 0 and 100",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.lowLimitPercent: Invalid value: -1: must be between 0 and 100",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.throttlingPercent: Invalid value: 101: must be between 0 and 100",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.wmarkRatio: Invalid value: 101: must be between 0 and 100",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.wmarkScalePermill: Invalid value: 0: must be between 1 and 1000",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.wmarkMinAdj: Invalid value: -26: must be between -25 and 50",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.priorityEnable: Invalid value: 2: must be between 0 and 1",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.priority: Invalid value: 13: must be between 0 and 12",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.oomKillGroup: Invalid value: 2: must be between 0 and 1",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.pageCacheLimitEnable: Invalid value: 2: must be between 0 and 1",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.pageCacheLimitSize: Invalid value: -1: must be greater than or equal to 0",
				"resource-qos-config.clusterStrategy.lsrClass.memoryQOS.pageCacheLimitSync: Invalid value: 2: must be between 0 and 1",
			},
		},
		"blkio qos": {
			data: `{"clusterStrategy": {"cgroupRoot": {"blkioQOS": {"blocks": [{"name": "/dev/sdb", "type": "disk",
				"ioCfg": {"readIOPS": -1, "ioWeightPercent": 0, "readLatencyPercent": 101, "modelReadBPS": 0}}]}}}}`,
			want: []string{
				`resource-qos-config.clusterStrategy.cgroupRoot.blkioQOS.blocks[0].type: Unsupported value: "disk": supported values: "device", "volumegroup", "podvolume"`,
				"resource-qos-config.clusterStrategy.cgroupRoot.blkioQOS.blocks[0].ioCfg.readIOPS: Invalid value: -1: must be greater than or equal to 0",
				"resource-qos-config.clusterStrategy.cgroupRoot.blkioQOS.blocks[0].ioCfg.modelReadBPS: Invalid value: 0: must be greater than or equal to 1",
				"resource-qos-config.clusterStrategy.cgroupRoot.blkioQOS.blocks[0].ioCfg.ioWeightPercent: Invalid value: 0: must be between 1 and 100",
				"resource-qos-config.clusterStrategy.cgroupRoot.blkioQOS.blocks[0].ioCfg.readLatencyPercent: Invalid value: 101: must be between 0 and 100",
			},
		},
		"resctrl range start below end, after merging with the defaults": {
			data: `{"clusterStrategy": {"beClass": {"resctrlQOS": {"catRangeStartPercent": 40, "mbaPercent": 101}}}}`,
			want: []string{
				"resource-qos-config.clusterStrategy.beClass.resctrlQOS.mbaPercent: Invalid value: 101: must be between 0 and 100",
				"resource-qos-config.clusterStrategy.beClass.resctrlQOS.catRangeStartPercent: Invalid value: 40: must be less than catRangeEndPercent (30)",
			},
		},
		"network qos values": {
			data: `{"clusterStrategy": {"lsClass": {"networkQOS": {"ingressRequest": 101, "ingressLimit": "fast", "egressRequest": "-5M", "egressLimit": "1G"}}}}`,
			want: []string{
				"resource-qos-config.clusterStrategy.lsClass.networkQOS.ingressRequest: Invalid value: 101: must be an integer percentage in 0..100 or a bandwidth quantity such as 50M",
				`resource-qos-config.clusterStrategy.lsClass.networkQOS.ingressLimit: Invalid value: "fast": must be an integer percentage in 0..100 or a bandwidth quantity such as 50M`,
				`resource-qos-config.clusterStrategy.lsClass.networkQOS.egressRequest: Invalid value: "-5M": must be an integer percentage in 0..100 or a bandwidth quantity such as 50M`,
				`resource-qos-config.clusterStrategy.lsClass.networkQOS.ingressLimit: Invalid value: "fast": network QoS values must be all percentages or all quantities, but lsClass.networkQOS.ingressRequest are percentages and lsClass.networkQOS.ingressLimit, lsClass.networkQOS.egressRequest, lsClass.networkQOS.egressLimit are quantities`,
			},
		},
		"network qos request percentages sum to at most 100": {
			data: `{"clusterStrategy": {"lsClass": {"networkQOS": {"ingressRequest": 60, "egressRequest": 50}}, "beClass": {"networkQOS": {"ingressRequest": 50, "egressRequest": 50}}}}`,
			want: []string{
				"resource-qos-config.clusterStrategy: Invalid value: 110: the ingressRequest percentages of all classes must sum to at most 100",
			},
		},
		"node strategy relation against the cluster": {
			data: `{"clusterStrategy": {"lsClass": {"resctrlQOS": {"catRangeStartPercent": 20}}},
				"nodeStrategies": [{"nodeSelector": {"matchLabels": {"a": "b"}}, "lsClass": {"resctrlQOS": {"catRangeEndPercent": 10}}}]}`,
			want: []string{
				"resource-qos-config.nodeStrategies[0].lsClass.resctrlQOS.catRangeStartPercent: Invalid value: 20: must be less than catRangeEndPercent (10)",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := validateKeys(t, "", "", tc.data)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateResourceQOSCfg() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateCPUBurstCfg(t *testing.T) {
	tests := map[string]struct {
		data string
		want []string
	}{
		"koordinator example": {data: exampleCPUBurst},
		"bounds": {
			data: `{"clusterStrategy": {"policy": "always", "cpuBurstPercent": 0, "cfsQuotaBurstPercent": 99, "cfsQuotaBurstPeriodSeconds": -2, "sharePoolThresholdPercent": 101},
				"nodeStrategies": [{"nodeSelector": {"matchLabels": {"a": "b"}}, "cpuBurstPercent": 10001}]}`,
			want: []string{
				`cpu-burst-config.clusterStrategy.policy: Unsupported value: "always": supported values: "none", "cpuBurstOnly", "cfsQuotaBurstOnly", "auto"`,
				"cpu-burst-config.clusterStrategy.cpuBurstPercent: Invalid value: 0: must be between 1 and 10000",
				"cpu-burst-config.clusterStrategy.cfsQuotaBurstPercent: Invalid value: 99: must be greater than or equal to 100",
				"cpu-burst-config.clusterStrategy.cfsQuotaBurstPeriodSeconds: Invalid value: -2: must be greater than or equal to -1",
				"cpu-burst-config.clusterStrategy.sharePoolThresholdPercent: Invalid value: 101: must be between 0 and 100",
				"cpu-burst-config.nodeStrategies[0].cpuBurstPercent: Invalid value: 10001: must be between 1 and 10000",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := validateKeys(t, "", "", "", tc.data)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateCPUBurstCfg() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateSystemCfg(t *testing.T) {
	tests := map[string]struct {
		data string
		want []string
	}{
		"koordinator example": {data: exampleSystem},
		"bounds": {
			data: `{"clusterStrategy": {"minFreeKbytesFactor": 0, "watermarkScaleFactor": 401, "memcgReapBackGround": 2, "schedGroupIdentityEnabled": -1,
				"schedIdleSaverWmark": -1, "pageCacheLimitEnabled": 3, "totalNetworkBandwidth": "-1G", "schedFeatures": {"": true, "ID_LOOSE_EXPEL": false}}}`,
			want: []string{
				"system-config.clusterStrategy.minFreeKbytesFactor: Invalid value: 0: must be greater than or equal to 1",
				"system-config.clusterStrategy.watermarkScaleFactor: Invalid value: 401: must be between 1 and 400",
				"system-config.clusterStrategy.memcgReapBackGround: Invalid value: 2: must be between 0 and 1",
				"system-config.clusterStrategy.schedGroupIdentityEnabled: Invalid value: -1: must be between 0 and 1",
				"system-config.clusterStrategy.schedIdleSaverWmark: Invalid value: -1: must be greater than or equal to 0",
				"system-config.clusterStrategy.pageCacheLimitEnabled: Invalid value: 3: must be between 0 and 1",
				`system-config.clusterStrategy.schedFeatures[]: Invalid value: "": must be the name of a scheduler feature`,
				`system-config.clusterStrategy.totalNetworkBandwidth: Invalid value: "-1G": must not be negative`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := validateKeys(t, "", "", "", "", tc.data)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateSystemCfg() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateHostApplicationCfg(t *testing.T) {
	tests := map[string]struct {
		data string
		want []string
	}{
		"example": {data: exampleHostApplication},
		"applications": {
			data: `{"applications": [{"name": "a", "priority": "koord-high", "qos": "LSX", "cgroupPath": {"base": "Root"}}, {"name": "a"}, {}],
				"nodeConfigs": [{"nodeSelector": {"matchLabels": {"x": "y"}}, "applications": [{"name": "b", "qos": "BE"}, {"name": "b"}]}]}`,
			want: []string{
				`host-application-config.applications[0].priority: Unsupported value: "koord-high": supported values: "koord-prod", "koord-mid", "koord-batch", "koord-free"`,
				`host-application-config.applications[0].qos: Unsupported value: "LSX": supported values: "LSE", "LSR", "LS", "BE", "SYSTEM"`,
				`host-application-config.applications[0].cgroupPath.base: Unsupported value: "Root": supported values: "CgroupRoot", "Kubepods", "KubepodsBurstable", "KubepodsBesteffort"`,
				`host-application-config.applications[1].name: Invalid value: "a": is also the name of host-application-config.applications[0]`,
				"host-application-config.applications[2].name: Required value: the node agent reports host applications by name",
				`host-application-config.nodeConfigs[0].applications[1].name: Invalid value: "b": is also the name of host-application-config.nodeConfigs[0].applications[0]`,
			},
		},
		"node configs": {
			data: `{"nodeConfigs": [{"nodeSelector": {"matchLabels": {"x": "y"}}}, {"nodeSelector": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}]}`,
			want: []string{
				`host-application-config.nodeConfigs[1].nodeSelector: Forbidden: node strategy host-application-config.nodeConfigs[1] overlaps node strategy host-application-config.nodeConfigs[0]: both select a node labelled "x=y"; the first match would win, so node strategies must not overlap`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := validateKeys(t, "", "", "", "", "", tc.data)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateHostApplicationCfg() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateSLOCfgPath(t *testing.T) {
	cfg := mustParseAll(t, `{"degradeTimeMinutes": 0}`)
	got := ValidateSLOCfg(field.NewPath("data"), cfg)
	want := "data.colocation-config.degradeTimeMinutes: Invalid value: 0: must be greater than or equal to 1"
	if len(got) != 1 || got[0].Error() != want {
		t.Errorf("ValidateSLOCfg() = %v, want %s", got, want)
	}
	if got := ValidateSLOCfg(nil, nil); len(got) != 0 {
		t.Errorf("ValidateSLOCfg(nil) = %v, want none", got)
	}
}
