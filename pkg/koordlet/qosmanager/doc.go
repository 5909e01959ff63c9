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

// Package qosmanager runs koordlet's QoS strategies: every interval (1 s by default) the Manager takes one
// snapshot of what the agent knows (the node, its pods, its NodeSLO, the metric cache, the time) and hands it
// to each strategy in turn. Each strategy decides from the snapshot and applies its decision to the cgroups or
// through the Eviction API; the strategies live in the sub-packages cgroupreconcile, cpusuppress, cpuburst,
// memoryevict and cpuevict.
//
// The Manager does nothing until both the node and its NodeSLO are known. Once they are, it keeps running with
// the last ones the Inputs return, which is what keeps the last NodeSLO enforced while the apiserver is away. A
// strategy's error is counted (koord_koordlet_qos_strategy_errors_total{strategy}) and logged at most once a
// minute per distinct message, and never stops the other strategies; a panicking strategy is turned into an
// error the same way.
//
// Which strategies run is decided once, at start, from the resolved feature gates (features.Koordlet): the
// caller builds only the strategies whose gate is on and passes them to New. What a strategy does within a
// round follows the NodeSLO (e.g. resourceUsedThresholdWithBE.enable), re-read every round.
//
// This package also holds what the strategies share: NodeSLO strategy resolution with defaults and validation
// (State.ResourceThreshold, State.CPUBurst), a keeper of the last valid configuration (LastGood), fresh-sample
// lookups in the metric cache, node CPU and memory capacity helpers, and a reporter of malformed pod
// annotations.
//
// Metrics are prometheus client_golang collectors created with NewMetrics and registered by the caller with
// Metrics.Register on the registry it serves; each strategy package that exports metrics follows the same
// pattern.
package qosmanager
