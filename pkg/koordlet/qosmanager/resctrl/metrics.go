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

package resctrl

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are the strategy's Prometheus collectors. Create them with NewMetrics, register them once with
// Register and pass them to New with WithMetrics.
type Metrics struct {
	// cacheWays is koord_koordlet_resctrl_cache_ways{class}.
	cacheWays *prometheus.GaugeVec
	// bandwidth is koord_koordlet_resctrl_memory_bandwidth_percent{class}.
	bandwidth *prometheus.GaugeVec
	// threads is koord_koordlet_resctrl_threads_assigned_total{class}.
	threads *prometheus.CounterVec
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		cacheWays: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "resctrl_cache_ways",
			Help: "Last-level cache ways the resctrl group of a QoS class (LSR, LS, BE) may fill, by " +
				"catRangeStartPercent and catRangeEndPercent. Absent while the class's resctrl QoS is off.",
		}, []string{"class"}),
		bandwidth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "resctrl_memory_bandwidth_percent",
			Help: "Memory bandwidth the resctrl group of a QoS class (LSR, LS, BE) is limited to, in percent: " +
				"mbaPercent, rounded up to the kernel's granularity where it takes percents. Absent while the " +
				"class's resctrl QoS is off.",
		}, []string{"class"}),
		threads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "resctrl_threads_assigned_total",
			Help: "Threads of pods moved into the resctrl group of their QoS class (LSR, LS, BE).",
		}, []string{"class"}),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.cacheWays), reg.Register(m.bandwidth), reg.Register(m.threads))
}
