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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestDefaults pins the defaults, written as the JSON a user would write, to Koordinator's (spec §4.1), and
// checks that each default passes its own validation.
func TestDefaults(t *testing.T) {
	tests := map[string]struct {
		got      func() any
		validate func() field.ErrorList
		want     string
	}{
		"colocation": {
			got: func() any { return DefaultColocationStrategy() },
			validate: func() field.ErrorList {
				s := DefaultColocationStrategy()
				return ValidateColocationStrategy(field.NewPath("s"), &s)
			},
			want: `{"enable":false,"metricAggregateDurationSeconds":300,"metricReportIntervalSeconds":60,` +
				`"metricAggregatePolicy":{"durations":["5m0s","10m0s","30m0s"]},"metricMemoryCollectPolicy":"usageWithoutPageCache",` +
				`"cpuReclaimThresholdPercent":60,"cpuCalculatePolicy":"usage","memoryReclaimThresholdPercent":65,"memoryCalculatePolicy":"usage",` +
				`"degradeTimeMinutes":15,"updateTimeThresholdSeconds":300,"resourceDiffThreshold":0.1,` +
				`"midCPUThresholdPercent":100,"midMemoryThresholdPercent":100,"midUnallocatedPercent":0,` +
				`"midStaticCPUReservedPercent":0,"midStaticMemoryReservedPercent":0}`,
		},
		"resource threshold": {
			got: func() any { return DefaultResourceThresholdStrategy() },
			validate: func() field.ErrorList {
				return ValidateResourceThresholdStrategy(field.NewPath("s"), DefaultResourceThresholdStrategy())
			},
			want: `{"enable":false,"cpuSuppressThresholdPercent":65,"cpuSuppressPolicy":"cpuset",` +
				`"memoryEvictThresholdPercent":70,"cpuEvictPolicy":"evictByRealLimit"}`,
		},
		"resource qos": {
			got: func() any { return DefaultResourceQOSStrategy() },
			validate: func() field.ErrorList {
				return ValidateResourceQOSStrategy(field.NewPath("s"), DefaultResourceQOSStrategy())
			},
			want: `{"policies":{"cpuPolicy":"groupIdentity","netQOSPolicy":"tc"},` +
				`"lsrClass":{"cpuQOS":{"enable":false,"groupIdentity":2},` +
				`"memoryQOS":{"enable":false,"minLimitPercent":0,"lowLimitPercent":0,"throttlingPercent":0,"wmarkRatio":95,"wmarkScalePermill":20,"wmarkMinAdj":-25,"priorityEnable":0,"priority":0,"oomKillGroup":0},` +
				`"resctrlQOS":{"enable":false,"catRangeStartPercent":0,"catRangeEndPercent":100,"mbaPercent":100}},` +
				`"lsClass":{"cpuQOS":{"enable":false,"groupIdentity":2},` +
				`"memoryQOS":{"enable":false,"minLimitPercent":0,"lowLimitPercent":0,"throttlingPercent":0,"wmarkRatio":95,"wmarkScalePermill":20,"wmarkMinAdj":-25,"priorityEnable":0,"priority":0,"oomKillGroup":0},` +
				`"resctrlQOS":{"enable":false,"catRangeStartPercent":0,"catRangeEndPercent":100,"mbaPercent":100}},` +
				`"beClass":{"cpuQOS":{"enable":false,"groupIdentity":-1},` +
				`"memoryQOS":{"enable":false,"minLimitPercent":0,"lowLimitPercent":0,"throttlingPercent":0,"wmarkRatio":95,"wmarkScalePermill":20,"wmarkMinAdj":50,"priorityEnable":0,"priority":0,"oomKillGroup":0},` +
				`"resctrlQOS":{"enable":false,"catRangeStartPercent":0,"catRangeEndPercent":30,"mbaPercent":100}},` +
				`"systemClass":{"cpuQOS":{"enable":false,"groupIdentity":0},` +
				`"memoryQOS":{"enable":false,"minLimitPercent":0,"lowLimitPercent":0,"throttlingPercent":0,"wmarkRatio":0,"wmarkScalePermill":50,"wmarkMinAdj":0,"priorityEnable":0,"priority":0,"oomKillGroup":0},` +
				`"resctrlQOS":{"enable":false,"catRangeStartPercent":0,"catRangeEndPercent":100,"mbaPercent":100}}}`,
		},
		"cpu burst": {
			got:      func() any { return DefaultCPUBurstStrategy() },
			validate: func() field.ErrorList { return ValidateCPUBurstStrategy(field.NewPath("s"), DefaultCPUBurstStrategy()) },
			want:     `{"policy":"none","cpuBurstPercent":1000,"cfsQuotaBurstPercent":300,"cfsQuotaBurstPeriodSeconds":-1,"sharePoolThresholdPercent":50}`,
		},
		"system": {
			got:      func() any { return DefaultSystemStrategy() },
			validate: func() field.ErrorList { return ValidateSystemStrategy(field.NewPath("s"), DefaultSystemStrategy()) },
			want:     `{"totalNetworkBandwidth":"0"}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(tc.got())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(data)); diff != "" {
				t.Errorf("default (-want,+got):\n%s", diff)
			}
			if errs := tc.validate(); len(errs) > 0 {
				t.Errorf("default does not validate: %v", errs.ToAggregate())
			}
		})
	}
}

// TestDefaultsAreFresh checks that each call returns a value of its own.
func TestDefaultsAreFresh(t *testing.T) {
	a := DefaultColocationStrategy()
	*a.CPUReclaimThresholdPercent = 1
	a.MetricAggregatePolicy.Durations[0].Duration = 1
	if b := DefaultColocationStrategy(); *b.CPUReclaimThresholdPercent != 60 || b.MetricAggregatePolicy.Durations[0].Duration == 1 {
		t.Errorf("DefaultColocationStrategy() shares memory between calls")
	}
	q := DefaultResourceQOSStrategy()
	*q.BEClass.CPUQOS.GroupIdentity = 2
	if *DefaultResourceQOSStrategy().BEClass.CPUQOS.GroupIdentity != -1 {
		t.Errorf("DefaultResourceQOSStrategy() shares memory between calls")
	}
}
