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

// Package v1alpha1 contains the topology.node.k8s.io/v1alpha1 API of the Kubernetes community
// (k8stopologyawareschedwg/noderesourcetopology-api) that Koordinator uses: NodeResourceTopology, the per-node
// object in which koordlet reports the node's NUMA zones and, in Koordinator's annotations, its CPU topology,
// shared CPU pools and kubelet CPU manager state. Group, version, kind and JSON field names follow the community
// API, so objects written by either project read the same.
// +kubebuilder:object:generate=true
// +groupName=topology.node.k8s.io
// +groupGoName=Topology
package v1alpha1
