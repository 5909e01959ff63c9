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

// Package v1alpha1 contains the slo.koordinator.sh/v1alpha1 API: NodeMetric, which the node agent fills with
// the resource usage of a node and its pods, and NodeSLO, which tells the node agent which QoS strategies to
// apply on that node. Both are cluster-scoped and named after their node. The group, version, kinds, JSON field
// names, enum values and defaults are wire-compatible with Koordinator.
//
// The strategy types (ResourceThresholdStrategy, ResourceQOSStrategy, CPUBurstStrategy, SystemStrategy,
// HostApplicationSpec) are also the payloads of the slo-controller-config ConfigMap keys, so they use pointer
// fields wherever "unset" has to be told apart from a zero value.
//
// +kubebuilder:object:generate=true
// +groupName=slo.koordinator.sh
package v1alpha1
