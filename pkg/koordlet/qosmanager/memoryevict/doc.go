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

// Package memoryevict is koordlet's memory eviction, Koordinator's memoryEvict with its three feature gates,
// run in this order within a round (qosmanager.RunEvictions: what an earlier task evicted counts for the later
// ones, and a pod is evicted once):
//
//   - BEMemoryEvict: when resourceUsedThresholdWithBE is enabled and the node's memory usage (the newest sample,
//     without page cache unless the collector says otherwise) reaches memoryEvictThresholdPercent of its capacity
//     (default 70), BE pods (by their koordinator.sh/qosClass label) are evicted until their memory covers
//     capacity × (usage% − lower%), where lower is memoryEvictLowerPercent or the threshold − 2. Usage is
//     compared exactly (used × 100 ≥ capacity × threshold), not in whole percents. Victims go in SortCandidates
//     order: koordinator.sh/eviction-priority (0 when absent), priority, memory usage.
//   - MemoryAllocatableEvict: when the memory requests of the batch (or mid) pods at or below
//     allocatableEvictPriorityThreshold pass memoryAllocatableEvictThresholdPercent of the node's batch-memory
//     (mid-memory) allocatable, pods of that tier labelled koordinator.sh/eviction-enabled=true are evicted down
//     to memoryAllocatableEvictLowerPercent (qosmanager.AllocatableTasks).
//   - MemoryEvict: on the same usage threshold as BEMemoryEvict, pods labelled eviction-enabled with a priority
//     up to evictEnabledPriorityThreshold, in qosmanager.SortVictims order by memory usage.
//
// A pod whose koordinator.sh/eviction-policy does not name the gate is never its victim. Evictions go through
// the evictor (Eviction API, rate limits, Koordinator's Events); after a round that evicted, the strategy waits
// 4 s so that the released memory shows before it chooses again, and pods already terminating count as
// released.
package memoryevict
