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

// Package metriccache is the node agent's in-memory store of usage samples: one fixed-size ring per series
// (node, system, pod or container, times a resource) that answers the average and percentiles over a window.
//
// Memory is bounded: a series holds at most the capacity Options gives its kind (PSISamples for the pressure
// stall information series of pods, host applications and containers), allocated once when the series is
// created (12 bytes a sample: a float32 value and an int64 Unix-nanosecond time), and the newest sample
// overwrites the oldest after that. Series of pods and containers that are gone are dropped with Retain,
// so the footprint follows the number of live pods, not their history.
//
// Percentiles use the nearest-rank definition: over the n samples of the window sorted ascending, the p-th
// percentile is the sample of 1-based rank ceil(p/100 × n). It is always one of the samples, never an
// interpolation; with one sample every percentile is that sample.
//
// A Cache is safe for concurrent use: the collector appends while the reporter and the QoS strategies read.
package metriccache
