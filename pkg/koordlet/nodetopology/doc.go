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

// Package nodetopology reads the node's CPU and NUMA topology (sysfs) and kubelet's CPU manager state, and
// reports them, with the shared CPU pools, as the node's NodeResourceTopology (topology.node.k8s.io/v1alpha1)
// in Koordinator's form: NUMA zones "node-<id>" of type Node with their cpu and memory, and the
// node.koordinator.sh/cpu-topology, cpu-shared-pools, be-cpu-shared-pools, pod-cpu-allocs and
// kubelet.koordinator.sh/cpu-manager-policy annotations, which koord-scheduler's NodeNUMAResource plugin reads.
package nodetopology
