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

// Package cluster is the end-to-end test of the whole colocation loop on a local cluster made of real parts
// (pkg/koordctl/cluster): etcd, kube-apiserver, koord-manager with its webhooks, koord-scheduler, KWOK with three
// fake nodes and the simulated node agents of pkg/sim, at real-time speed. TestMain starts one cluster for every
// test of the package and stops it at the end; it shortens the slo-controller-config so that the loop turns in
// seconds (reports every 5 s averaged over 10 s, degradeTimeMinutes 1).
//
// The tests check, in order: every node's NodeMetric is reported and keeps being updated; koord-manager writes
// batch-cpu and batch-memory equal to the spec formula applied to what the simulated agent reported; a pod
// matched by a ClusterColocationProfile is rewritten to batch resources and runs on them; load-aware scheduling
// keeps pods off a node made hot; and a node whose agent stops reporting loses its batch resources after the
// degrade time.
//
// The binaries come from $KOORD_BIN_DIR, else the repository's bin/ (`make bin` builds etcd, kube-apiserver and
// kwok; koord-manager and koord-scheduler are built into a temporary directory when bin/ lacks them). The tests
// are in package cluster_test; this file only documents the package.
package cluster
