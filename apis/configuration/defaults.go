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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// The defaults below are Koordinator's (pkg/util/sloconfig). Each call returns a new value that the caller may
// modify.

// DefaultColocationStrategy returns the colocation strategy that applies where colocation-config sets nothing:
// colocation off, metrics averaged over 300 s and reported every 60 s with 5m/10m/30m aggregates, memory counted
// without page cache, reclaim thresholds of 60 % CPU and 65 % memory by usage, degrade after 15 minutes, update at
// least every 300 s or on a 10 % change, mid resources capped at 100 % with no unallocated share and no static
// reservation, and no batch caps.
func DefaultColocationStrategy() ColocationStrategy {
	return ColocationStrategy{
		Enable:                         ptr.To(false),
		MetricAggregateDurationSeconds: ptr.To[int64](300),
		MetricReportIntervalSeconds:    ptr.To[int64](60),
		MetricAggregatePolicy: &slov1alpha1.AggregatePolicy{
			Durations: []metav1.Duration{{Duration: 5 * time.Minute}, {Duration: 10 * time.Minute}, {Duration: 30 * time.Minute}},
		},
		MetricMemoryCollectPolicy:      ptr.To(slov1alpha1.UsageWithoutPageCache),
		CPUReclaimThresholdPercent:     ptr.To[int64](60),
		CPUCalculatePolicy:             ptr.To(CalculateByPodUsage),
		MemoryReclaimThresholdPercent:  ptr.To[int64](65),
		MemoryCalculatePolicy:          ptr.To(CalculateByPodUsage),
		DegradeTimeMinutes:             ptr.To[int64](15),
		UpdateTimeThresholdSeconds:     ptr.To[int64](300),
		ResourceDiffThreshold:          ptr.To(0.1),
		MidCPUThresholdPercent:         ptr.To[int64](100),
		MidMemoryThresholdPercent:      ptr.To[int64](100),
		MidUnallocatedPercent:          ptr.To[int64](0),
		MidStaticCPUReservedPercent:    ptr.To[int64](0),
		MidStaticMemoryReservedPercent: ptr.To[int64](0),
	}
}

// DefaultResourceThresholdStrategy returns the suppression and eviction strategy that applies where
// resource-threshold-config sets nothing: off, CPU suppression at 65 % by cpuset, memory eviction at 70 %, CPU
// eviction by real limit.
func DefaultResourceThresholdStrategy() *slov1alpha1.ResourceThresholdStrategy {
	return &slov1alpha1.ResourceThresholdStrategy{
		Enable:                      ptr.To(false),
		CPUSuppressThresholdPercent: ptr.To[int64](65),
		CPUSuppressPolicy:           slov1alpha1.CPUSetPolicy,
		MemoryEvictThresholdPercent: ptr.To[int64](70),
		CPUEvictPolicy:              slov1alpha1.EvictByRealLimitPolicy,
	}
}

// DefaultResourceQOSStrategy returns the per-class QoS strategy that applies where resource-qos-config sets
// nothing. Every feature is off; the knobs hold Koordinator's recommended values so that turning a feature on is
// enough: Group Identity 2 for LSR and LS, -1 for BE and 0 for SYSTEM; memory QoS with async reclaim at 95 %
// (wmarkScalePermill 20) and wmarkMinAdj -25 for LSR/LS and 50 for BE (SYSTEM: every memory knob off); the
// last-level cache fully shared except BE at 0-30 %. The CPU QoS mechanism is groupIdentity and the network one tc.
func DefaultResourceQOSStrategy() *slov1alpha1.ResourceQOSStrategy {
	class := func(groupIdentity int64, memory *slov1alpha1.MemoryQOS, catEnd int64) *slov1alpha1.ResourceQOS {
		qos := &slov1alpha1.ResourceQOS{
			CPUQOS: &slov1alpha1.CPUQOSCfg{Enable: ptr.To(false), CPUQOS: slov1alpha1.CPUQOS{GroupIdentity: ptr.To(groupIdentity)}},
		}
		if memory != nil {
			qos.MemoryQOS = &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(false), MemoryQOS: *memory}
			qos.ResctrlQOS = &slov1alpha1.ResctrlQOSCfg{Enable: ptr.To(false), ResctrlQOS: slov1alpha1.ResctrlQOS{
				CATRangeStartPercent: ptr.To[int64](0),
				CATRangeEndPercent:   ptr.To(catEnd),
				MBAPercent:           ptr.To[int64](100),
			}}
		}
		return qos
	}
	return &slov1alpha1.ResourceQOSStrategy{
		Policies: &slov1alpha1.ResourceQOSPolicies{
			CPUPolicy:    ptr.To(slov1alpha1.CPUQOSPolicyGroupIdentity),
			NETQOSPolicy: ptr.To(slov1alpha1.NETQOSPolicyTC),
		},
		LSRClass:    class(2, defaultMemoryQOS(-25), 100),
		LSClass:     class(2, defaultMemoryQOS(-25), 100),
		BEClass:     class(-1, defaultMemoryQOS(50), 30),
		SystemClass: class(0, systemMemoryQOS(), 100),
	}
}

// systemMemoryQOS returns Koordinator's memory QoS knobs of the SYSTEM class: every knob off.
func systemMemoryQOS() *slov1alpha1.MemoryQOS {
	m := defaultMemoryQOS(0)
	m.WmarkRatio = ptr.To[int64](0)
	m.WmarkScalePermill = ptr.To[int64](50)
	return m
}

// defaultMemoryQOS returns Koordinator's recommended memory QoS knobs: no memory.min/low/high protection, async
// reclaim on, the given global min watermark adjustment, no OOM priority.
func defaultMemoryQOS(wmarkMinAdj int64) *slov1alpha1.MemoryQOS {
	return &slov1alpha1.MemoryQOS{
		MinLimitPercent:   ptr.To[int64](0),
		LowLimitPercent:   ptr.To[int64](0),
		ThrottlingPercent: ptr.To[int64](0),
		WmarkRatio:        ptr.To[int64](95),
		WmarkScalePermill: ptr.To[int64](20),
		WmarkMinAdj:       ptr.To(wmarkMinAdj),
		PriorityEnable:    ptr.To[int64](0),
		Priority:          ptr.To[int64](0),
		OomKillGroup:      ptr.To[int64](0),
	}
}

// DefaultCPUBurstStrategy returns the CPU burst strategy that applies where cpu-burst-config sets nothing: off,
// with a 1000 % burst allowance, CFS quota raised up to 300 % for an unlimited time, and scaled back above 50 %
// share-pool usage.
func DefaultCPUBurstStrategy() *slov1alpha1.CPUBurstStrategy {
	return &slov1alpha1.CPUBurstStrategy{
		CPUBurstConfig: slov1alpha1.CPUBurstConfig{
			Policy:                     slov1alpha1.CPUBurstNone,
			CPUBurstPercent:            ptr.To[int64](1000),
			CFSQuotaBurstPercent:       ptr.To[int64](300),
			CFSQuotaBurstPeriodSeconds: ptr.To[int64](-1),
		},
		SharePoolThresholdPercent: ptr.To[int64](50),
	}
}

// DefaultSystemStrategy returns the system strategy that applies where system-config sets nothing: every field
// unset, so the node agent leaves the kernel settings as the node has them.
func DefaultSystemStrategy() *slov1alpha1.SystemStrategy {
	return &slov1alpha1.SystemStrategy{}
}
