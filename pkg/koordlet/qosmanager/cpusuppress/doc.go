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

// Package cpusuppress is the BE CPU suppression strategy (feature gate BECPUSuppress): every round it gives the
// BE pods what the LS pods and the system leave of cpuSuppressThresholdPercent of the node's CPU,
//
//	BEAllowed = capacity × cpuSuppressThresholdPercent/100 − Σ non-BE pod usage − Σ non-BE host application usage
//	            − max(system usage, node reserved)
//
// floored at capacity × cpuSuppressMinPercent/100 when that is set. The pressure rule (Koord's;
// cpuSuppressPSIThresholdPercent, unset by default) scales BEAllowed, before the floor, by threshold / pressure
// when the largest CPU pressure of the pods that are not BE (the "some" avg10 of their cgroups' cpu.pressure,
// sampled by the collector under the PSICollector gate) is above the threshold: LS pods that wait for CPU 40 %
// of the time against a threshold of 10 leave BE a quarter of what the usage formula gives. avg10 is a 10 s
// moving average, so the rule follows pressure within seconds and lets go as it falls. Host applications are the NodeSLO's
// hostApplications, whose usage the collector samples from their cgroups and leaves out of the system usage.
// Usage is the newest sample of each series in the metric cache (one collection interval, 1 s by default), so
// the strategy follows load changes within a round or two; samples older than the Manager's MaxSampleAge are
// ignored.
//
// The cpuset policy (the default) confines the besteffort cgroup, every BE pod and every BE container to
// ceil(BEAllowed) CPUs, at least 2, growing by at most 10 % of the node's CPUs per round and shrinking at
// once. The CPUs come from the shared pool and the LSR pods' CPUs in proportion to their sizes, never from LSE
// pods or the node's reserved CPUs; within a pool they are spread over NUMA nodes with hyper-thread siblings
// kept together when the topology is known (WithTopology, ReadTopology). The cfsQuota policy sets the
// besteffort cgroup's CFS quota to BEAllowed × period, at least 2000 µs, skipping changes smaller than 1 % of
// the node and growing by at most 10 % of the node per round.
//
// The besteffort QoS cgroup's cpuset and quota are owned by this strategy. When resourceUsedThresholdWithBE is
// disabled, or the policy changes, what the other policy wrote is undone once: the quota goes back to
// unlimited, the cpuset to every CPU BE pods may use. The first round after a start undoes the policy not in
// force, so a restart needs no saved state.
//
// Metrics: koord_koordlet_be_cpu_allowed_cores (the formula's result) and koord_koordlet_be_cpu_suppress_cores
// {policy} (what the besteffort cgroup is limited to).
package cpusuppress
