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

// Package reporter fills the status of the node's NodeMetric from usage aggregates, following the collection
// policy koord-manager writes in its spec. It reads usage through the small Source interface, which the node
// agent's metric cache satisfies and which a simulated node can implement from a usage model.
//
// What a report holds (Koordinator's NodeMetric reporting):
//   - nodeMetric.nodeUsage and nodeMetric.systemUsage: the average over the last aggregateDurationSeconds
//     (default 300) of the node and system series; a resource without samples is left out, so no samples at
//     all give empty maps, which koord-manager treats as missing usage.
//   - nodeMetric.aggregatedNodeUsages and aggregatedSystemUsages: for each window of
//     nodeAggregatePolicy.durations (default 5m, 10m, 30m) the avg, p50, p90, p95 and p99. A window is left
//     out unless both CPU and memory samples span at least half of it (cold start): a reader takes a missing
//     resource as zero usage, so a window never carries one resource without the other.
//   - podsMetric: every pod given that has both CPU and memory samples in the aggregate window, sorted by
//     namespace and name, with its Koordinator priority class and QoS class.
//   - hostApplicationMetric: every host application of the NodeSLO (WithHostApps) with both CPU and memory
//     samples in the aggregate window, sorted by name, with its priority and QoS class from the NodeSLO. The
//     collector leaves their usage out of systemUsage, as Koordinator's koordlet does; koord-manager counts
//     those above koord-batch (and above koord-mid for mid) as system usage again.
//   - prodReclaimableMetric and prodPeakMetric: the Predictor's prediction (package prediction) for the pods
//     reported in podsMetric. Without a Predictor, or while it has no prediction, prodReclaimableMetric is
//     present and empty and prodPeakMetric left out, as Koordinator reports them when its prediction fails;
//     koord-manager counts an empty prodReclaimableMetric as nothing reclaimable.
//   - updateTime: the time of the report.
//
// Memory is counted per nodeMemoryCollectPolicy: usageWithoutPageCache (the default) reads the memory series,
// usageWithPageCache the memory-with-page-cache series; usageWithHotPageCache needs cold-page collection, which
// this agent does not do, and falls back to usageWithoutPageCache (logged once). CPU is reported in milli-cores,
// memory in bytes.
package reporter
