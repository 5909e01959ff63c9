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

// Package collector samples the node's resource usage once per interval
// (default 1 s) into the metric cache: node CPU and memory from /proc, pod
// and container CPU and memory from their cgroups, and the system's share
// (node minus pods). It keeps only the last counter of each cgroup and node,
// and drops the state and series of pods and containers that are gone, so
// its memory stays flat however many pods come and go.
//
// Units and definitions, per series (see metriccache for the keys):
//   - cpu, in cores. Node: Δbusy/Δtotal ticks of the aggregate line of
//     <procRoot>/stat times the online CPUs (busy = user+nice+system+irq+
//     softirq, total adds idle, iowait and steal), which needs no
//     assumption about USER_HZ and no wall clock. Pods and containers:
//     Δ cgroup CPU time / Δ wall time between two rounds, from the injected
//     clock. The first round after a counter is seen, or after it went
//     backwards (a recreated cgroup), only primes it.
//   - memory, in bytes, without page cache. Node: MemTotal − MemAvailable.
//     Pods and containers: the cgroup working set (usage − inactive file).
//   - memory-with-page-cache, in bytes, for the node, the system and pods
//     (not containers). Node: MemTotal − MemFree. Pods: the cgroup usage.
//   - hostapp, one per host application of the NodeSLO (WithHostApps), in
//     the units of a pod, from the application's cgroup (HostAppDir:
//     Koordinator's placement); an application whose cgroup does not exist
//     is skipped quietly.
//   - psi-{cpu,memory,io}-{some,full}-avg10 (metriccache.ResourcePSI*), with
//     WithPSI, for the node, pods and host applications (not containers):
//     the kernel's pressure stall information, the share of the last 10 s
//     in which some or all non-idle tasks stalled on the resource, in
//     percent, as read in the round. Node: <procRoot>/pressure/<resource>;
//     pods and host applications: their cgroup's <resource>.pressure
//     (cgroup.Manager.Pressure: on cgroup v1 the hybrid mount's or the
//     cpuacct hierarchy's). The full cpu series exist from Linux 5.13 on. A
//     resource the kernel has no pressure for is not sampled (the node's:
//     logged once, never read again; a cgroup's: read again after
//     PSIRetryRounds rounds). WithMetrics also exports the node's and pods'
//     values as Prometheus gauges.
//   - system: node − Σ pods − Σ host applications sampled in the same round,
//     per resource, floored at 0, as Koordinator counts it. A pod seen for
//     the first time has no CPU rate yet, so for that one round its CPU
//     counts as system.
//
// Pods come from the PodLister. Succeeded and Failed pods are not sampled,
// nor are containers without an ID yet or known to have terminated; a pod or
// container whose cgroup does not exist (not started yet, or already gone)
// is skipped quietly. The series of a pod and its containers stay as long as
// the lister lists the pod, whatever its phase, and are dropped in the first
// round that does not.
package collector
