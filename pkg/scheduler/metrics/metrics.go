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

// Package metrics holds the Prometheus metrics of Koord's scheduler plugins. koord-scheduler registers them in
// kube-scheduler's legacy registry (see scheduler.Plugins), so its /metrics endpoint serves them next to
// kube-scheduler's own (scheduler_plugin_execution_duration_seconds, scheduler_plugin_evaluation_total, ...).
// Every label takes a bounded set of values.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are the plugins' collectors. Create them with NewMetrics, register them once with Register and hand
// them to each plugin's factory; a plugin given none keeps private, unregistered ones.
type Metrics struct {
	// LoadAwareRejections counts the nodes LoadAwareScheduling's Filter rejected, by resource over its
	// threshold (one count per resource) or "expired" for a stale NodeMetric.
	LoadAwareRejections *prometheus.CounterVec
	// QuotaRejections counts the pods ElasticQuota's PreFilter rejected because their quota had no room.
	QuotaRejections prometheus.Counter
	// QuotaRevokedPods counts the pods evicted because their quota used more than its runtime quota for longer
	// than delayEvictTime.
	QuotaRevokedPods prometheus.Counter
	// QuotaForgottenPods counts the pods ElasticQuota still charged to a quota after the scheduler's pod
	// informer had lost them (deleted or ended without the deletion reaching the quota's accounting), and
	// forgot.
	QuotaForgottenPods prometheus.Counter
	// GangTimeouts counts the gang members marked timed out.
	GangTimeouts prometheus.Counter
	// ReservationTransitions counts Reservations entering a phase (Available, Succeeded, Failed).
	ReservationTransitions *prometheus.CounterVec
	// QuotaResources is each quota's runtime, used and request per resource, as ElasticQuota's status writer
	// last computed them. The quota label takes the quotas' names, as many as there are quotas.
	QuotaResources *prometheus.GaugeVec
	// ControllerWrites counts the API writes of the controllers inside koord-scheduler, which only the leading
	// replica runs: PodGroup status and timeout marks (podgroup), ElasticQuota status and built-in quotas
	// (elasticquota), evictions of over-used quotas (revoker), Reservation status, reserve pods and
	// garbage collection (reservation).
	ControllerWrites *prometheus.CounterVec
	// GangPreemptions counts job-level (gang) preemption attempts by result: preempted, ineligible
	// (preemption policy Never, members unlike the trigger), ongoing (victims of an earlier one still
	// terminating), not_helpful (some member fits nowhere even with every lower-priority pod gone), error.
	GangPreemptions *prometheus.CounterVec
	// GangPreemptionVictims counts the pods preempted for gangs.
	GangPreemptionVictims prometheus.Counter
	// Leading is 1 once this replica leads and runs those controllers, 0 while it stands by.
	Leading prometheus.Gauge
	// QuotaStatus is QuotaResources again under Koordinator's name and labels,
	// scheduler_elastic_quota_status{name,resource,tree,is_parent,parent,field}, with the fields Koord knows:
	// runtime, request, allocated (used), non-preemptible-used, min, max and guaranteed.
	QuotaStatus *prometheus.GaugeVec

	// state exports the Reservation and gang gauges at scrape time; see ObserveReservations, ObserveGangs.
	state *state
}

// Controllers that count their writes in ControllerWrites.
const (
	ControllerPodGroup     = "podgroup"
	ControllerElasticQuota = "elasticquota"
	ControllerRevoker      = "revoker"
	ControllerReservation  = "reservation"
	// ControllerNetworkTopology writes the ClusterNetworkTopology's status (Coscheduling).
	ControllerNetworkTopology = "networktopology"
)

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	opts := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemScheduler, Name: name, Help: help}
	}
	return &Metrics{
		LoadAwareRejections: prometheus.NewCounterVec(opts("load_aware_rejections_total",
			"Nodes rejected by LoadAwareScheduling, by the resource over its usage threshold, or \"expired\" for a stale NodeMetric."),
			[]string{"reason"}),
		QuotaRejections: prometheus.NewCounter(opts("elastic_quota_rejections_total",
			"Scheduling attempts rejected because the pod's quota (or an ancestor) had no room for it.")),
		QuotaRevokedPods: prometheus.NewCounter(opts("elastic_quota_revoked_pods_total",
			"Pods evicted because their quota used more than its runtime quota for longer than delayEvictTime.")),
		QuotaForgottenPods: prometheus.NewCounter(opts("elastic_quota_forgotten_pods_total",
			"Pods still charged to an ElasticQuota after the scheduler's pod informer had lost them, which the quota accounting then forgot; should stay 0.")),
		GangTimeouts: prometheus.NewCounter(opts("gang_timeouts_total",
			"Gang members marked timed out after waiting for their gang longer than its waiting time.")),
		QuotaResources: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemScheduler, Name: "elastic_quota_resource",
			Help: "An ElasticQuota's runtime quota, used and request (type) of a resource, in Koord's units (cpu in millicores, other resources in their base unit).",
		}, []string{"quota", "resource", "type"}),
		ReservationTransitions: prometheus.NewCounterVec(opts("reservation_transitions_total",
			"Reservations entering a phase: Available (placed), Succeeded (used up) or Failed (expired, node gone)."),
			[]string{"phase"}),
		ControllerWrites: prometheus.NewCounterVec(opts("controller_writes_total",
			"API writes of the controllers inside koord-scheduler, which only the leading replica runs, by controller (podgroup, elasticquota, revoker, reservation)."),
			[]string{"controller"}),
		GangPreemptions: prometheus.NewCounterVec(opts("gang_preemptions_total",
			"Job-level (gang) preemption attempts by result: preempted, ineligible, ongoing, not_helpful, error."),
			[]string{"result"}),
		GangPreemptionVictims: prometheus.NewCounter(opts("gang_preemption_victims_total",
			"Pods preempted to make room for gangs.")),
		Leading: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemScheduler, Name: "leading",
			Help: "1 once this koord-scheduler replica leads (schedules and runs the plugins' controllers), 0 while it stands by.",
		}),
		QuotaStatus: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "scheduler_elastic_quota_status",
			Help: "Koordinator's name: an ElasticQuota's figures by field (runtime, request, allocated, non-preemptible-used, min, max, guaranteed) and resource (cpu in millicores, other resources in their base unit), with its tree, parent and whether it is a parent.",
		}, []string{"name", "resource", "tree", "is_parent", "parent", "field"}),
		state: newState(),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(
		reg.Register(m.LoadAwareRejections), reg.Register(m.QuotaRejections), reg.Register(m.QuotaRevokedPods),
		reg.Register(m.QuotaForgottenPods), reg.Register(m.GangTimeouts), reg.Register(m.ReservationTransitions), reg.Register(m.QuotaResources),
		reg.Register(m.ControllerWrites), reg.Register(m.Leading), reg.Register(m.GangPreemptions),
		reg.Register(m.GangPreemptionVictims), reg.Register(m.QuotaStatus), reg.Register(m.state),
	)
}
