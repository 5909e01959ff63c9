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

// Package scheduler compares the scheduling throughput of koord-scheduler with upstream kube-scheduler v1.37.2
// (no out-of-tree plugins, default profile) on identical inputs against one real kube-apiserver. koord-scheduler
// runs three times: "koord", the shipped profile without ElasticQuota, Coscheduling and Reservation (LoadAware,
// NodeNUMAResource, DeviceShare and the batch-resource scoring), "koord-numa", kube-scheduler's default profile
// plus NodeNUMAResource alone (what fine-grained CPU orchestration costs), and "koord-jobs", the whole shipped
// profile. Per measurement, N nodes with NodeResourceTopologies (2 sockets × 8 cores × 2 threads) and fresh
// NodeMetrics of moderate usage, 20 ElasticQuotas, 100 Reservations and M pending pods (in gangs of 8, spread
// over the quotas, the first 100 owning the Reservations, one in ten of the others an LSR pod of 2 CPUs) are
// created, then the scheduler under test is started in-process and timed until every pod is bound; then the
// LSR pods' resource-status is checked (CPUs given by the profiles with NodeNUMAResource, never twice on a
// node). Client QPS and burst are raised to 5000, as scheduler_perf does.
//
// It is a benchmark so that only `go test -bench` runs it:
//
//	go test -run='^$' -bench=BenchmarkSchedulerThroughput -benchtime=1x ./test/perf/scheduler/ -args -nodes=1000 -pods=5000 -runs=5
//
// Each run times every scheduler, in reversed order from one run to the next. The benchmark prints, per run,
// pods/s and the process's CPU time per pod of each scheduler, and reports the medians and the ratios of the
// pods/s to upstream's as metrics. -only=<names> (comma-separated) measures some, e.g. one to profile it.
package scheduler
