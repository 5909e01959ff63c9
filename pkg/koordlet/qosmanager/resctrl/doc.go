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

// Package resctrl is the node's last-level cache and memory bandwidth strategy (Koordinator's RdtResctrl),
// driven by the resctrlQOS of each class of the NodeSLO's resourceQOSStrategy, merged over
// configuration.DefaultResourceQOSStrategy: off; LSR and LS 0–100 % of the cache, BE 0–30 %; mbaPercent 100.
//
// Each class has a resctrl group, a directory under /sys/fs/resctrl named as Koordinator names it: LSR (LSR and
// LSE pods), LS and BE. SYSTEM pods and pods of no class are left in the root group. For a class whose resctrl
// QoS is enabled, every round:
//
//   - the group is created if it does not exist;
//   - its schemata gets, for every cache domain of the root schemata, the cache ways
//     [⌈ways × catRangeStartPercent/100⌉, ⌈ways × catRangeEndPercent/100⌉) of the root mask info/L3/cbm_mask
//     (11 ways: 0–100 % is 0x7ff, 0–30 % is 0xf, 10–50 % is 0x3c), and, for every MB domain, mbaPercent rounded
//     up to info/MB/bandwidth_gran (10 when absent) and at least info/MB/min_bandwidth. On AMD, whose root MB
//     value is 2048, 100 % is 2048 (unlimited) and p % is p % of 160 (1/8 GB/s), as Koordinator computes it.
//     With code/data prioritisation the L3CODE and L3DATA lines get the same mask. The file is written only when
//     a value differs (compared as numbers, so the kernel's zero padding does not count);
//   - the threads of the class's pods that the group does not list yet are written to its tasks file, one per
//     write. A pod's threads are those in its cgroup and in each cgroup directly under it (its containers and
//     its sandbox), read from tasks in the cpu hierarchy on cgroup v1 and cgroup.threads on v2. Threads that
//     exit meanwhile are skipped; threads a pod starts later inherit the group.
//
// For a class whose resctrl QoS is off, or with no NodeSLO strategy, the group's schemata is set back to the
// full mask and the most bandwidth (100, or 2048 on AMD) when the group exists, so the class is no longer
// limited; groups are not created for it, and not removed (as in Koordinator, which keeps them), and no threads
// are moved. The first round after a restart does this too, so no state needs saving.
//
// A node without resctrl (no schemata at the root: not mounted, or not supported) is said once and the strategy
// does nothing, with no error; it notices when resctrl appears. A feature the root lacks (no L3 line or no
// info/L3, an MB line with info/MB missing or in MB/s units) is said once and left alone. A malformed cbm_mask,
// schemata, info file or threads file is an error naming the file. An invalid configuration (a range outside
// 0–100 or with start not below end) is an error naming the NodeSLO field, and the last valid one is used.
//
// Metrics: koord_koordlet_resctrl_cache_ways{class}, koord_koordlet_resctrl_memory_bandwidth_percent{class} and
// koord_koordlet_resctrl_threads_assigned_total{class}.
package resctrl
