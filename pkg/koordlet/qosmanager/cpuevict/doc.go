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

// Package cpuevict is koordlet's CPU eviction, Koordinator's CPUEvict strategy with its three feature gates, run
// in this order within a round (qosmanager.RunEvictions):
//
//   - BECPUEvict: BE pods are evicted when what they may use stays well below what they requested while they
//     use all of it, so that the rest get enough CPU. Every round it samples the BE pods' CPU: usage (Σ newest
//     pod samples), request (Σ batch-cpu requests) and limit (the besteffort cgroup's real limit: the fewer of
//     its CPUs and its CFS quota, which cpusuppress sets; or the node's batch-cpu allocatable under
//     cpuEvictPolicy evictByAllocatable). With satisfaction = limit / request, it releases request ×
//     (cpuEvictBESatisfactionUpperPercent − satisfaction) when satisfaction is below
//     cpuEvictBESatisfactionLowerPercent (at most 60) and usage is at least cpuEvictBEUsageThresholdPercent
//     (default 90) of the limit, both over the average of cpuEvictTimeWindowSeconds and now; the smaller of the
//     two counts. It does nothing until both satisfaction percents are set, and until its samples cover a
//     third of the window. Victims are BE pods in SortCandidates order (eviction priority, 0 when absent;
//     priority; usage / request), each releasing its batch-cpu request.
//   - CPUAllocatableEvict: when the CPU requests of the batch (or mid) pods at or below
//     allocatableEvictPriorityThreshold pass cpuAllocatableEvictThresholdPercent of the node's batch-cpu
//     (mid-cpu) allocatable, eviction-enabled pods of that tier down to cpuAllocatableEvictLowerPercent.
//   - CPUEvict: when the node's CPU usage averaged over cpuEvictTimeWindowSeconds reaches
//     cpuEvictThresholdPercent, pods labelled koordinator.sh/eviction-enabled=true with a priority up to
//     evictEnabledPriorityThreshold, largest CPU users first, down to cpuEvictLowerPercent (threshold − 2).
//
// A pod whose koordinator.sh/eviction-policy does not name the gate is never its victim. After a round that
// evicted, it waits 20 s.
package cpuevict
