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

// Package v1alpha2 is the topology.node.k8s.io/v1alpha2 version of NodeResourceTopology, the community API's
// storage version. It exists so that Koord's CRD serves both versions, as the community's and Koordinator's
// CRDs do, and clusters that already store v1alpha2 objects keep them; Koord's components use v1alpha1. The
// versions differ only in topologyPolicies (optional here, deprecated) and the top-level attributes.
// +kubebuilder:object:generate=true
// +groupName=topology.node.k8s.io
package v1alpha2
