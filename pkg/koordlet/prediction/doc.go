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

// Package prediction is the node agent's peak prediction (Koordinator's node prediction,
// pkg/koordlet/prediction): it learns the usage of each pod and of the node from the usage Source, and predicts
// what the prod pods reserve and will not use, which koordlet reports as the NodeMetric's
// prodReclaimableMetric (and the peak it expects as prodPeakMetric), and from which koord-manager offers the
// mid tier (kubernetes.io/mid-cpu, mid-memory).
//
// # Models
//
// A model is a pair of histograms, CPU in cores and memory in bytes, whose samples decay exponentially: a sample
// one half-life old (12h for CPU, 24h for memory by default) weighs half as much as a new one. The buckets are
// Koordinator's: 5 % wider each, from 0.025 cores to 1024 and from 5 MiB to 2 TiB. A percentile is the end of
// the bucket at which the cumulative weight reaches it.
//
// Every training interval (1m) a round adds one sample to each model, the P90 of the last interval's usage:
// one model per pod (by UID), one per priority class (the sum over its pods, 0 when it has none), one for the
// node, and one for the system (the node's minus every pod's, floored at 0). A round whose window holds no
// node usage (the agent just started) trains nothing. Rounds are the multiples of the interval, each trained
// once whatever the pace of the calls (TrainUntil), so that a simulated node trains on its simulated time.
//
// The model of a pod that left the node is dropped once it has gone ModelExpiration (30m) without a sample;
// the node's models and those of the pods it has are kept however long they go without one. Memory is thus
// bounded by the pods seen within the expiration; a model stores only the buckets between its lowest and
// highest sample (a few hundred bytes for a steady pod, at most about 3 KB).
//
// # Prediction
//
// Compute is Koordinator's prod reclaimable predictor, two predictors of which the smaller reclaimable (and the
// larger peak) is reported:
//
//   - pod: each prod pod (class koord-prod or none, not terminating or terminated) reclaims its request minus
//     its peak, its p95 CPU and p98 memory plus the safety margin (10 %). A pod younger than the cold start
//     (ColdStartDuration, 24h; by creation time, or the time WithPodStart gives) or without a model reclaims
//     nothing, and its request counts in the peak. The sum is capped by the allocatable left above the peaks.
//   - priority: the prod pods' requests minus the peak of the prod tier (the koord-prod and no-class models) and
//     the system, each its p95 CPU and p98 memory, summed, plus the safety margin; capped likewise.
//
// Without the system or prod-tier models (before the first round with usage) there is no prediction: koordlet
// then reports an empty prodReclaimableMetric, which koord-manager counts as nothing reclaimable.
//
// # Checkpoints
//
// With a Store (koordlet's --prediction-checkpoint-filepath), the models are written to a directory, one file
// per model named by its ID, in Koordinator's JSON format plus the exact bucket weights: every minute the models
// that changed and were last written at least CheckpointInterval (10m) ago, at most CheckpointMaxPerStep (12),
// and every changed model when the agent stops. A file is written under a temporary name, synced and renamed,
// so that a crash leaves a whole checkpoint. At start, Restore reads them back: the node's and those of pods
// still on the node become the models, as they were (a restart needs no new history); a corrupt file is logged,
// removed, and its model starts afresh; an unusable directory turns checkpoints off with a log line. A
// simulated node keeps its models in memory.
package prediction
