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

package migration

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are MigrationController's Prometheus metrics.
type Metrics struct {
	// Jobs counts the jobs that reached a phase, by phase and reason.
	Jobs *prometheus.CounterVec
	// Current is the number of jobs in each phase, as of the last arbitration round.
	Current *prometheus.GaugeVec
	// Evictions counts the evictions, by policy and result.
	Evictions *prometheus.CounterVec
	// PodsEvicted counts them again under Koordinator's name and labels:
	// descheduler_pods_evicted{result,strategy,namespace,node}.
	PodsEvicted *prometheus.CounterVec
}

// NewMetrics creates them, unregistered.
func NewMetrics() *Metrics {
	m := &Metrics{
		Jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemDescheduler, Name: "pod_migration_jobs_total",
			Help: "PodMigrationJobs that reached a phase, by phase and reason.",
		}, []string{"phase", "reason"}),
		Current: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemDescheduler, Name: "pod_migration_jobs",
			Help: "PodMigrationJobs by phase, as of the last arbitration round.",
		}, []string{"phase"}),
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemDescheduler, Name: "pod_migration_evictions_total",
			Help: "Evictions of pods by PodMigrationJobs, by eviction policy and result (success, error, too_many_requests).",
		}, []string{"policy", "result"}),
		PodsEvicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "descheduler_pods_evicted",
			Help: "Koordinator's name: evictions of pods by PodMigrationJobs, by result (success, error), strategy (the plugin that asked, e.g. LowNodeLoad), namespace and node.",
		}, []string{"result", "strategy", "namespace", "node"}),
	}
	// Every eviction policy and result is exported from the start, at 0, so that dashboards see 0 rather than
	// no data.
	for _, policy := range []string{config.EvictionPolicyEviction, config.EvictionPolicyDelete, config.EvictionPolicySoftEviction} {
		for _, result := range []string{"success", "error", "too_many_requests"} {
			m.Evictions.WithLabelValues(policy, result)
		}
	}
	return m
}

// Register registers them with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.Jobs), reg.Register(m.Current), reg.Register(m.Evictions), reg.Register(m.PodsEvicted))
}
