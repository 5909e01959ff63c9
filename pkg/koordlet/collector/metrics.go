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

package collector

import (
	"errors"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Labels of the PSI metrics, Koordinator's names and values.
const (
	labelPodUID       = "pod_uid"
	labelPodName      = "pod_name"
	labelPodNamespace = "pod_namespace"
	// labelPSIResource is cpu, mem or io.
	labelPSIResource = "psi_resource_type"
	// labelPSIPrecision is the averaging window; only avg10 is exported.
	labelPSIPrecision = "psi_precision"
	// labelPSIDegree is some or full.
	labelPSIDegree = "psi_degree"

	precisionAvg10 = "avg10"
	degreeSome     = "some"
	degreeFull     = "full"
)

// Metrics are the collector's Prometheus collectors. Create them with NewMetrics, register them once with
// Register and pass them to New with WithMetrics. They are set only while the collector samples pressure stall
// information (WithPSI).
type Metrics struct {
	// nodePSI is koord_koordlet_node_psi{psi_resource_type,psi_precision,psi_degree}.
	nodePSI *prometheus.GaugeVec
	// podPSI is koord_koordlet_pod_psi{pod_uid,pod_name,pod_namespace,psi_resource_type,psi_precision,psi_degree}.
	podPSI *prometheus.GaugeVec
	// cpuFull is set once a cpu pressure file had a full line (Linux 5.13 and later).
	cpuFull atomic.Bool
}

// CPUFullSupported reports whether the kernel reports full cpu pressure: whether a cpu pressure file read so far
// had a full line; false for nil Metrics (PSI not collected). Koordinator labels its PSI metrics with it
// (cpu_full_supported).
func (m *Metrics) CPUFullSupported() bool {
	return m != nil && m.cpuFull.Load()
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		nodePSI: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "node_psi",
			Help: "Pressure stall information of the node (/proc/pressure), in percent of wall time: the kernel's " +
				"average over psi_precision (avg10: the last 10 seconds) of the time in which some (psi_degree=some) " +
				"or all (full) non-idle tasks stalled on psi_resource_type (cpu, mem, io). Full cpu needs Linux " +
				"5.13. Absent unless PSI collection is on.",
		}, []string{labelPSIResource, labelPSIPrecision, labelPSIDegree}),
		podPSI: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "pod_psi",
			Help: "Pressure stall information of each running pod's cgroup, in percent of wall time: the " +
				"kernel's average over psi_precision (avg10: the last 10 seconds) of the time in which some " +
				"(psi_degree=some) or all (full) of the pod's non-idle tasks stalled on psi_resource_type (cpu, " +
				"mem, io). Full cpu needs Linux 5.13. A pod's series go when it finishes or leaves the node. " +
				"Absent unless PSI collection is on.",
		}, []string{labelPodUID, labelPodName, labelPodNamespace, labelPSIResource, labelPSIPrecision, labelPSIDegree}),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.nodePSI), reg.Register(m.podPSI))
}

// WithMetrics sets the collectors the collector records into.
func WithMetrics(m *Metrics) Option {
	return func(c *Collector) { c.metrics = m }
}
