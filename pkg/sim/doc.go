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

// Package sim simulates koordlet on fake (KWOK) nodes, so that a local cluster, the demo and the end-to-end
// tests run the whole colocation loop without real machines: each simulated agent reports its node's
// NodeMetric through koordlet's own reporter, from a usage model instead of cgroups, and applies the node-side
// rules that shape usage (BE CPU suppression and BE memory eviction), so that what koord-manager and
// koord-scheduler see responds to what they decide.
//
// # Usage model
//
// Each pod's CPU and memory follow a Profile, declared by the pod annotation sim.koord.dev/usage
// (AnnotationUsage; JSON, one optional profile per resource):
//
//	{"cpu": {"type": "constant", "value": "500m"}}
//	{"cpu": {"type": "diurnal", "base": "1", "amplitude": "800m", "period": "24h", "peak": "14h"}}
//	{"memory": {"type": "bursty", "base": "200Mi", "burst": "2Gi", "probability": 0.1, "duration": "5m"}}
//
// A diurnal profile is base + amplitude × cos(2π (t − peak) / period), floored at zero, with t counted from the
// Unix epoch, so with the default 24h period peak is the time of day, in UTC, of the maximum. A bursty profile
// cuts time into buckets of duration; a bucket is a burst when a hash of the pod UID, the resource and the
// bucket number falls below probability, so every reader, every report and every process sees the same
// bursts. A resource the annotation leaves out uses a constant DefaultCPUFraction (50 %) of the pod's CPU
// request and DefaultMemoryFraction (70 %) of its memory request; BE pods count their batch-cpu and
// batch-memory, koord-mid pods their mid-cpu and mid-memory. Usage never exceeds the pod's limits (the sum of its containers'; BE pods: their batch
// limits). A malformed annotation is rejected as a whole with an error naming each wrong field (e.g.
// "cpu.amplitude: Required value"), reported once as a Warning Event on the pod, and the default is used.
//
// A node's usage is the sum of its running pods' usage plus a constant system usage (5 % of the CPU capacity
// and 1Gi by default, Options.System); the system series is that constant, as koordlet's node − Σ pods would
// be. A pod has samples from when the agent first saw it Running (or, in the agent's first round, from the
// agent's start) until it was evicted or seen terminating, terminated or gone; it stays in the model for
// Options.Retention so that the windows that saw it keep its usage. The model has no page cache: memory with
// page cache equals memory.
//
// # Node-side rules
//
// CPU suppression (gate BECPUSuppress, and resourceUsedThresholdWithBE enabled in the node's NodeSLO): at every
// moment the BE pods get at most what cpusuppress.BEAllowed leaves them from the other pods' usage, the system
// usage and the node's reservation; under the cpuset policy that is max(ceil(BEAllowed), 2) whole CPUs, under
// cfsQuota BEAllowed itself (at least the minimum quota), as the real strategy applies it (its per-round growth
// limit is not modelled). When the BE pods ask for more, each is scaled down in proportion, and the moment
// counts as suppressed.
//
// Memory eviction (gates BEMemoryEvict, MemoryAllocatableEvict and MemoryEvict, and the NodeSLO enabling it):
// every round, koordlet's memoryevict strategy itself runs on the model (node memory against memoryEvictThresholdPercent, victims in its order)
// and evicts through koordlet's evictor (Eviction API, rate limits, Events); an evicted pod's usage stops at
// once, without waiting for the pod to go.
//
// LS threshold breaches: a moment at which the non-BE pods' CPU usage exceeds cpuSuppressThresholdPercent
// (65 by default) of the node's capacity, whether suppression is on or not. The demo reports them.
//
// Moments are the multiples of the collection interval; every moment from when the node is first seen is
// counted once, whatever the round interval (the pretended Options.History is not counted). The NodeSLO and pod set in force at a round apply to the whole window a report covers: a
// threshold change shows in the aggregates at once, as if it had always been in force.
//
// # Peak prediction
//
// Each node runs koordlet's peak prediction (package prediction, Options.Prediction; Koordinator's defaults) on
// simulated time, from the same Source as its reports: every round trains the training intervals that ended
// since the last one, drops the models of pods gone for the expiration, and every report carries the
// prediction as prodReclaimableMetric and prodPeakMetric, from which koord-manager offers mid resources. A
// pod's cold start counts from when the agent first saw it run, in simulated time. The models live in memory:
// no checkpoints.
//
// # Topology
//
// With the NodeTopologyReport gate, each node also reports its NodeResourceTopology, as koordlet would
// (nodetopology.Build), from a synthetic CPU topology: the node annotation sim.koord.dev/cpu-topology
// (AnnotationCPUTopology, "<sockets>x<cores per socket>x<threads per core>") or one socket of 2 threads per
// core; the shared pools follow the LSE and LSR pods' resource-status. It is written with each NodeMetric report,
// when it changed.
//
// # Devices
//
// With the Accelerators or RDMADevices gate, a node annotated sim.koord.dev/devices (AnnotationDevices,
// "gpu=<count>x<memory>,rdma=<count>") reports those GPUs and RDMA NICs as its Device object, as koordlet's
// devices reporter does, with each NodeMetric report, when they changed.
//
// # Time
//
// Clock is simulated time: a start and a Speed (1 is real time, 60 a simulated minute per second) over a base
// clock, implementing k8s.io/utils/clock's interfaces, so the reporter, the evictor and the eviction strategy
// all run on it. What a report contains is simulated: the usage, and its aggregation windows
// (aggregateDurationSeconds, the 5m/10m/30m percentiles). When it is written is wall time, as the components
// that read it judge it with their own clock:
//
//   - NodeMetric updateTime is the base (wall) clock's time of the report, so koord-manager's
//     degradeTimeMinutes and the load-aware scheduler's nodeMetricExpirationSeconds see a fresh report at any
//     speed.
//   - A node reports every reportIntervalSeconds of the base clock, i.e. every reportIntervalSeconds × Speed of
//     simulated time. The load-aware scheduler counts a pod at its estimate until a report stamped at least
//     reportIntervalSeconds after the pod's placement, comparing wall-clock times; with reports every interval
//     of simulated time a pod would stay at its estimate for Speed reports (at speed 720 and 300 s, for 5
//     minutes of wall time, two and a half simulated days), and nodes would look fuller than they are.
//
// The first report of a node and its rounds (Options.WarmUp, Options.RoundInterval) are in simulated time.
// A report the scheduler trusts for a pod thus comes at least Speed × reportIntervalSeconds of simulated time
// after the placement: when that is at least aggregateDurationSeconds (e.g. 1 s at speed 720 with Koordinator's
// 300 s window), the node's average holds the pod's usage in full; when it is shorter, the average holds part of
// it, as a real koordlet's report does reportIntervalSeconds after a placement.
//
// # Statistics without samples
//
// A Source answers what koordlet's metric cache answers, analytically from the model: the samples of a window
// are the model's values at the multiples of the collection interval in it (thinned to at most MaxPoints
// samples by widening the step to a multiple of the interval), rounded to single precision as the cache stores
// them, with the cache's average and nearest-rank percentiles. Nothing is stored per sample, so a node costs
// its pods' models; the values one report needs are computed once per window step and released after it.
//
// # Many nodes
//
// Cluster runs the agents of every node matching Options.NodeSelector (label type=kwok by default), following
// nodes as they appear, change labels and go. It uses one informer per kind for all nodes (Nodes, Pods bound to
// a node, NodeSLOs, NodeMetrics) with a per-node view that satisfies reporter.Inputs and qosmanager.Inputs.
// One scheduling loop keeps the nodes in a heap ordered by when their next round is due (every RoundInterval,
// sooner when a report is due or the node's NodeMetric appears) and hands due nodes to Options.Workers workers;
// a round counts the moments since the last one, runs the eviction rule, and reports every
// reportIntervalSeconds of the NodeMetric's spec (60 by default) of wall time (see Time), so a cluster of N
// nodes writes N / reportIntervalSeconds NodeMetric statuses a second whatever the speed. The client's QPS and
// burst bound the write rate (NewClusterForConfig). Snapshot returns per-node and total counters (suppressed moments,
// evictions, LS threshold breaches, reports) and each node's last state for reports such as the demo's.
//
// Metrics are prometheus client_golang collectors (koord_sim_*, plus the evictor's koord_koordlet_evictions_*)
// created with NewMetrics and registered by the caller with Metrics.Register.
package sim
