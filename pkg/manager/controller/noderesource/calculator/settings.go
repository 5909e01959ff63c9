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

package calculator

import (
	"cmp"
	"time"

	"github.com/koord-dev/koord/apis/configuration"
)

// defaults is configuration.DefaultColocationStrategy (Koordinator's defaults, the spec §4.1), read once: the
// fields a strategy leaves nil take these values.
var defaults = configuration.DefaultColocationStrategy()

// settings is a colocation strategy with every field resolved to a value.
type settings struct {
	enable bool

	cpuReclaimPercent    int64
	memoryReclaimPercent int64
	// cpuPolicy and memoryPolicy are the policies in effect; cpuPolicyConfigured is the configured CPU policy
	// when CPU does not support it, and memoryPolicyConfigured likewise for an unknown memory policy.
	cpuPolicy              configuration.CalculatePolicy
	memoryPolicy           configuration.CalculatePolicy
	cpuPolicyConfigured    configuration.CalculatePolicy
	memoryPolicyConfigured configuration.CalculatePolicy

	degradeTime         time.Duration
	updateTimeThreshold time.Duration
	diffThreshold       float64

	midStatic                 bool
	midCPUThresholdPercent    int64
	midMemoryThresholdPercent int64
	midUnallocatedPercent     int64
	midStaticCPUPercent       int64
	midStaticMemoryPercent    int64

	batchCPUThresholdPercent    *int64
	batchMemoryThresholdPercent *int64
}

// resolve fills the fields s leaves nil with their defaults. A nil s is the default strategy.
func resolve(s *configuration.ColocationStrategy) settings {
	if s == nil {
		s = &configuration.ColocationStrategy{}
	}
	out := settings{
		enable:                      deref(s.Enable, defaults.Enable),
		cpuReclaimPercent:           deref(s.CPUReclaimThresholdPercent, defaults.CPUReclaimThresholdPercent),
		memoryReclaimPercent:        deref(s.MemoryReclaimThresholdPercent, defaults.MemoryReclaimThresholdPercent),
		degradeTime:                 time.Duration(deref(s.DegradeTimeMinutes, defaults.DegradeTimeMinutes)) * time.Minute,
		updateTimeThreshold:         time.Duration(deref(s.UpdateTimeThresholdSeconds, defaults.UpdateTimeThresholdSeconds)) * time.Second,
		diffThreshold:               deref(s.ResourceDiffThreshold, defaults.ResourceDiffThreshold),
		midStatic:                   deref(s.MidReclaimMode, defaults.MidReclaimMode) == configuration.MidReclaimModeStatic,
		midCPUThresholdPercent:      deref(s.MidCPUThresholdPercent, defaults.MidCPUThresholdPercent),
		midMemoryThresholdPercent:   deref(s.MidMemoryThresholdPercent, defaults.MidMemoryThresholdPercent),
		midUnallocatedPercent:       deref(s.MidUnallocatedPercent, defaults.MidUnallocatedPercent),
		midStaticCPUPercent:         deref(s.MidStaticCPUReservedPercent, defaults.MidStaticCPUReservedPercent),
		midStaticMemoryPercent:      deref(s.MidStaticMemoryReservedPercent, defaults.MidStaticMemoryReservedPercent),
		batchCPUThresholdPercent:    cmp.Or(s.BatchCPUThresholdPercent, defaults.BatchCPUThresholdPercent),
		batchMemoryThresholdPercent: cmp.Or(s.BatchMemoryThresholdPercent, defaults.BatchMemoryThresholdPercent),
	}

	// CPU supports usage and maxUsageRequest; anything else (request) falls back to usage.
	switch p := deref(s.CPUCalculatePolicy, defaults.CPUCalculatePolicy); p {
	case configuration.CalculateByPodUsage, configuration.CalculateByPodMaxUsageRequest:
		out.cpuPolicy = p
	default:
		out.cpuPolicy, out.cpuPolicyConfigured = configuration.CalculateByPodUsage, p
	}
	// Memory supports all three; an unknown policy, which validation rejects, falls back to usage.
	switch p := deref(s.MemoryCalculatePolicy, defaults.MemoryCalculatePolicy); p {
	case configuration.CalculateByPodUsage, configuration.CalculateByPodRequest, configuration.CalculateByPodMaxUsageRequest:
		out.memoryPolicy = p
	default:
		out.memoryPolicy, out.memoryPolicyConfigured = configuration.CalculateByPodUsage, p
	}
	return out
}

// deref returns *p, else *def, else the zero value.
func deref[T any](p, def *T) T {
	if p != nil {
		return *p
	}
	if def != nil {
		return *def
	}
	var zero T
	return zero
}
