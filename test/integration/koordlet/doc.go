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

// Package koordlet tests the node agent against a real kube-apiserver. The agent runs in-process, as the user
// its shipped RBAC role is bound to, on a fake node: a cgroup filesystem and a /proc in temporary directories
// whose CPU counters advance in real time at rates the test chooses. No koord-manager runs, so each test
// creates its Node, NodeMetric and NodeSLO itself, and no kubelet runs, so each test creates its pods' cgroups
// and reports their status.
package koordlet
