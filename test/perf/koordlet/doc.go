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

// Package koordlet measures the footprint of the koordlet binary: BenchmarkKoordletFootprint runs cmd/koordlet
// against a real kube-apiserver and a fake cgroup tree and /proc of 50 pods × 3 containers with pod churn, and
// reports the agent's CPU and RSS as the kernel counts them. Run it with
//
//	go test ./test/perf/koordlet -run '^$' -bench . -benchtime 1x [-koordlet.duration 60s]
//
// The benchmarks are in package koordlet_test; this file only documents the package.
package koordlet
