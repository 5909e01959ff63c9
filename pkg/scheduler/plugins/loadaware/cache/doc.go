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

// Package cache holds LoadAwareScheduling's state per node (Nodes): the node's NodeMetric, converted into
// resource vectors once per version, and the pods assigned to the node (the assign cache), whose usage the
// NodeMetric may not reflect yet, with the usage they add memoized. The plugin decides; this package
// remembers.
//
// # Memos
//
// Filter and Score run for every node in every scheduling cycle, so everything they would otherwise recompute
// per node and cycle is kept until one of its inputs changes. Each memo, what invalidates it, and the
// benchmark that shows it pays (run them with make bench; figures in README.md):
//
//	memo                        where                       invalidated by                                   benchmark
//	NodeMetricView              Node.view (this package)     a newer NodeMetric version or its deletion       BenchmarkFilterScore
//	                                                         (through plugins.Feed; a new entry per version)  (assigned=0/cycle=new: no quantity
//	                                                                                                          parsing per node and cycle)
//	assigned usage, all pods    Node.memos[0] (this package) a change of the node's pods (generation) or a    BenchmarkFilterScore assigned=10, 100
//	and koord-prod usage        Node.memos[1]                new view (estimation deadlines are compared with
//	                                                         the view's update time, so time alone changes
//	                                                         nothing)
//	node summary (usage,        Node.memo, set by the plugin Invalidate, pushed by this package when the   BenchmarkFilterScoreCycle cache=cold
//	allocatable, thresholds,    (loadaware/summary.go)       node's NodeMetric or pods change; another node   (one 64-byte line per node)
//	expiry)                                                  object (the scheduler's pointer); validUntil (the
//	                                                         NodeMetric's expiry)
//	node thresholds             in the node summary          the usage-thresholds annotation's value changing BenchmarkFilterScoreCycle (no JSON
//	                            (loadaware/thresholds.go)                                                     parsing per node and cycle)
//	lookup by node object       Nodes.byObject               rebuilt once the misses since the last rebuild   BenchmarkFilterScoreCycle cache=cold
//	                                                         reach a quarter of the objects it holds          (no string hashing per node)
//	incoming pod's state        Plugin.current and the       a new cycle or pod                               BenchmarkFilterScore cycle=same
//	(estimate, prod, DaemonSet) CycleState (loadaware/
//	                            estimate.go)
//	pod signature               Plugin.signed (sign.go)      the next SignPod                                 BenchmarkEstimate (the estimate is
//	                                                                                                          computed once per pod)
package cache
