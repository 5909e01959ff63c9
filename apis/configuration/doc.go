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

// Package configuration holds the schemas of the keys of the slo-controller-config ConfigMap
// (koordinator-system/slo-controller-config), as Koordinator defines them: a cluster-wide strategy plus node
// strategies selected by node labels. koord-manager parses them, fills in defaults, validates them and renders
// each node's NodeMetric spec, NodeSLO and batch/mid resources from them.
// +kubebuilder:object:generate=true
package configuration
