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

// Package metrics holds the Prometheus metrics of Koord's scheduler plugins. They are registered in
// kube-scheduler's legacy registry, so koord-scheduler serves them on its /metrics endpoint next to
// kube-scheduler's own (scheduler_plugin_execution_duration_seconds, scheduler_plugin_evaluation_total, ...).
// Every label takes a bounded set of values.
package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const subsystem = "koord_scheduler"

var (
	// LoadAwareRejections counts the nodes LoadAwareScheduling's Filter rejected, by resource over its
	// threshold (one count per resource) or "expired" for a stale NodeMetric.
	LoadAwareRejections = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "load_aware_rejections_total",
		Help:           "Nodes rejected by LoadAwareScheduling, by the resource over its usage threshold, or \"expired\" for a stale NodeMetric.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})

	// QuotaRejections counts the pods ElasticQuota's PreFilter rejected because their quota had no room.
	QuotaRejections = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "elastic_quota_rejections_total",
		Help:           "Scheduling attempts rejected because the pod's quota (or an ancestor) had no room for it.",
		StabilityLevel: metrics.ALPHA,
	})

	// QuotaRevokedPods counts the pods evicted because their quota used more than its runtime quota for
	// longer than delayEvictTime.
	QuotaRevokedPods = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "elastic_quota_revoked_pods_total",
		Help:           "Pods evicted because their quota used more than its runtime quota for longer than delayEvictTime.",
		StabilityLevel: metrics.ALPHA,
	})

	// GangTimeouts counts the gang members marked timed out.
	GangTimeouts = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "gang_timeouts_total",
		Help:           "Gang members marked timed out after waiting for their gang longer than its waiting time.",
		StabilityLevel: metrics.ALPHA,
	})

	// ReservationTransitions counts Reservations entering a phase (Available, Succeeded, Failed).
	ReservationTransitions = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "reservation_transitions_total",
		Help:           "Reservations entering a phase: Available (placed), Succeeded (used up) or Failed (expired, node gone).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"phase"})
)

var registerOnce sync.Once

// Register registers the metrics in kube-scheduler's legacy registry; more calls do nothing.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(LoadAwareRejections, QuotaRejections, QuotaRevokedPods, GangTimeouts, ReservationTransitions)
	})
}
