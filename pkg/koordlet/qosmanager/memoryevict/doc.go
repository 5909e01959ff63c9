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

// Package memoryevict is the BE memory eviction strategy (feature gate BEMemoryEvict). When
// resourceUsedThresholdWithBE is enabled and the node's memory usage (the newest sample, without page cache
// unless the collector says otherwise) reaches memoryEvictThresholdPercent of its capacity (default 70), it
// evicts BE pods until their memory covers capacity × (usage% − lower%), where lower is
// memoryEvictLowerPercent or the threshold − 2. Usage is compared exactly (used × 100 ≥ capacity × threshold),
// not in whole percents.
//
// Victims are the BE pods, those with a koordinator.sh/eviction-priority annotation first (lowest value first),
// then by priority ascending and memory usage descending. Evictions go through the evictor (Eviction API, rate
// limits, Events with the numbers); after a round that evicted, the strategy waits 4 s so that the released
// memory shows before it chooses again, and pods already terminating count as released.
package memoryevict
