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

package qosmanager

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are the Manager's Prometheus collectors. Create them with NewMetrics, register them once with
// Register and pass them to New with WithMetrics; a Manager without them keeps private, unregistered ones.
type Metrics struct {
	// errors is koord_koordlet_qos_strategy_errors_total{strategy}.
	errors *prometheus.CounterVec
	// duration is koord_koordlet_qos_strategy_duration_seconds{strategy}.
	duration *prometheus.HistogramVec
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "qos_strategy_errors_total",
			Help: "Rounds of a QoS strategy that returned an error (or panicked), by strategy.",
		}, []string{"strategy"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "qos_strategy_duration_seconds",
			Help:    "Time one round of a QoS strategy took, by strategy.",
			Buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1},
		}, []string{"strategy"}),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.errors), reg.Register(m.duration))
}
