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

// Package cgroupreconcile is the reconciler of per-class cgroup settings (feature gate CgroupReconcile). Koord
// has no runtime hook, so this loop is the one path that applies what Koordinator's BatchResource and
// CPUSetAllocator hooks do; it re-derives everything from the pods every round, which also repairs drift and
// makes a restart need no saved state.
//
// BatchResource (gate BatchResource): a BE pod's cgroup and its containers' get
//   - cpu.shares (cpu.weight on v2) = batch-cpu request (milli) × 1024 / 1000, at least 2;
//   - CFS quota = batch-cpu limit (milli) × period / 1000, unlimited when a container has no limit;
//   - memory limit = batch-memory limit, unlimited when a container has no limit;
//
// the pod's values being the sums of its containers'. A knob no container's batch resources mention is left as
// kubelet set it. On cgroup v1 a BE pod's quota is capped at the besteffort cgroup's, which cpusuppress may
// lower. The CPU normalization ratio of Koordinator is not applied.
//
// CPUSetAllocator (gate CPUSetAllocator): the containers of LSE and LSR pods get the cpuset the scheduler wrote
// in their scheduling.koordinator.sh/resource-status, those of LS pods the shared pool: the node's CPUs minus
// the LSE and LSR pods' and the node's reserved CPUs. The besteffort cgroup's cpuset and quota, and BE
// containers' cpusets, are owned by cpusuppress and not touched here.
package cgroupreconcile
