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

// Package check checks the invariants of a cluster running Koord: properties that must hold whatever crashed,
// restarted or was written wrong. It backs `koordctl check` and the reliability suite, and reads the cluster
// through the apiserver only, so it runs against any cluster.
//
// A Checker keeps a picture of the cluster (nodes, pods, NodeMetrics, Reservations, PodMigrationJobs,
// ElasticQuotas, PodGroups, the SLO ConfigMap, koordlet's eviction Events) fed by informers, and a short history
// of what it saw change: when each pod was bound and where, the batch and mid allocatable of each node over the
// last minutes, the members each gang ever had bound. Evaluate runs every invariant on it. A state that is
// allowed to hold for a while (a node whose NodeMetric just changed, a quota the revoke controller has not
// caught up with) is a finding first, and a violation only when it lasts longer than the invariant's settle
// time; a violation is counted once, with the time it was first seen.
//
// The invariants (Invariants lists them, with their names):
//   - pods fit their nodes: the requests of a node's active pods are within its allocatable, for every resource
//     whose allocatable does not move (cpu, memory, pods, devices, ...); a pod's binding never changes;
//   - batch and mid capacity at bind: a pod requesting batch or mid resources was bound while its node offered
//     enough of them for it and the pods already there (against the most the node offered in the minute before);
//   - batch resources follow the formula: no node offers more batch or mid resources than koord-manager's formula
//     gives from its NodeMetric, pods and colocation strategy, beyond what koord-manager's own update rule
//     (resourceDiffThreshold, updateTimeThresholdSeconds) leaves in place;
//   - gangs are all or nothing: no gang has fewer than its minimum members bound past its waiting time;
//   - quotas stay within their runtime: an ElasticQuota's used is within its runtime once the revoke controller
//     had its delay (only when the revoke controller runs: Options.QuotaRevokeDelay);
//   - LS pods are not evicted: koordlet evicts no LSE, LSR or LS pod unless it is labelled
//     koordinator.sh/eviction-enabled, and koord-descheduler evicts none without a Reservation scheduled for its
//     replacement;
//   - migrations end: every PodMigrationJob ends by its ttl, and a finished one leaves no Reservation holding
//     resources;
//   - Reservations serve their owners: a pod allocated from a Reservation is one of its owners.
package check
