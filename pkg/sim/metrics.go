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

package sim

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Results of koord_sim_reports_total.
const (
	// ResultSuccess: the NodeMetric status was written.
	ResultSuccess = "success"
	// ResultError: the write failed.
	ResultError = "error"
	// ResultNoNodeMetric: the node has no NodeMetric yet (koord-manager creates it); retried at the next round.
	ResultNoNodeMetric = "noNodeMetric"
)

// Metrics are the simulated agents' Prometheus collectors. Create them with NewMetrics, register them once with
// Register and pass them in Options.Metrics; a Cluster without them keeps private, unregistered ones.
type Metrics struct {
	// nodes is koord_sim_nodes.
	nodes prometheus.Gauge
	// reports is koord_sim_reports_total{result}.
	reports *prometheus.CounterVec
	// reportDuration is koord_sim_report_duration_seconds.
	reportDuration prometheus.Histogram
	// lag is koord_sim_round_lag_seconds.
	lag prometheus.Histogram
	// suppressed is koord_sim_be_suppressed_moments_total.
	suppressed prometheus.Counter
	// breaches is koord_sim_ls_threshold_breaches_total.
	breaches prometheus.Counter
	// invalid is koord_sim_invalid_annotations_total.
	invalid prometheus.Counter
	// evictor holds koord_koordlet_evictions_total and koord_koordlet_evictions_rejected_total of the simulated
	// agents' evictions.
	evictor *evictor.Metrics
	// agent holds koordlet's usage and suppression gauges of every simulated node (koord_koordlet_node_usage,
	// pod_usage, be_cpu_allowed_cores, be_cpu_suppress_cores and their Koordinator names), with a node label,
	// of the last Cluster created with these Metrics.
	agent *agentCollector
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		nodes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemSim, Name: "nodes",
			Help: "Nodes whose agent is simulated.",
		}),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemSim, Name: "reports_total",
			Help: "NodeMetric reports of the simulated agents, by result: success, error, or noNodeMetric (not " +
				"created by koord-manager yet).",
		}, []string{"result"}),
		reportDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemSim, Name: "report_duration_seconds",
			Help:    "Wall-clock time one NodeMetric report took: building the status and writing it.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5},
		}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemSim, Name: "round_lag_seconds",
			Help: "Simulated seconds a node's round started after it was due; large values mean the agents " +
				"cannot keep up with the speed and node count.",
			Buckets: []float64{0.1, 1, 5, 10, 30, 60, 300, 1800},
		}),
		suppressed: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemSim, Name: "be_suppressed_moments_total",
			Help: "Sampled moments (one per collection interval per node) at which BE pods' CPU was suppressed.",
		}),
		breaches: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemSim, Name: "ls_threshold_breaches_total",
			Help: "Sampled moments (one per collection interval per node) at which the non-BE pods' CPU usage " +
				"exceeded cpuSuppressThresholdPercent of the node's capacity.",
		}),
		invalid: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemSim, Name: "invalid_annotations_total",
			Help: "Distinct malformed sim.koord.dev/usage annotation values seen on pods; the pods use their default " +
				"usage.",
		}),
		evictor: evictor.NewMetrics(),
		agent:   newAgentCollector(),
	}
}

// Register registers the collectors with reg, including the evictor's.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(
		reg.Register(m.nodes), reg.Register(m.reports), reg.Register(m.reportDuration), reg.Register(m.lag),
		reg.Register(m.suppressed), reg.Register(m.breaches), reg.Register(m.invalid), m.evictor.Register(reg),
		reg.Register(m.agent),
	)
}
