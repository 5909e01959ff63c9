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

// Package evictor owns koordlet's evictions: every pod the QoS strategies evict goes through Evictor.Evict,
// which asks the apiserver through the policy/v1 Eviction subresource (so PodDisruptionBudgets apply) and
// records a Warning Event on the pod carrying the caller's reason and numbers. The Events are Koordinator's:
// reason evictPodSuccess when the apiserver accepted the eviction, evictPodFail when it refused or failed it,
// and the message "evict Pod:<namespace>/<name>, reason: <reason>, message: <numbers>".
//
// Three safety limits sit in front of the API call, checked in this order, none of which spends anything when
// an earlier one refuses:
//   - a per-pod cool-down (default 1 min): a pod evicted within it is not asked for again, since its graceful
//     termination may still be running;
//   - a global budget (default 20 evictions per rolling minute) that caps an eviction storm caused by a bad
//     metric or threshold;
//   - a token bucket (default 1 eviction/s, burst 3).
//
// A refused eviction is not an error: Evict returns false and counts the cause. Prometheus metrics are
// koord_koordlet_evictions_total{reason} and koord_koordlet_evictions_rejected_total{cause}, on the registry
// given to Metrics.Register.
package evictor
