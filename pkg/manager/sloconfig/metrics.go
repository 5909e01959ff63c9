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

package sloconfig

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are the loader's collectors. Create them with NewMetrics, register them once with Register and pass
// them in LoaderOptions.Metrics; a Loader without them keeps private, unregistered ones.
type Metrics struct {
	// configValid is koord_manager_slo_config_valid: 1 while the latest version of the ConfigMap is in force (or
	// the ConfigMap is missing and the defaults are), 0 while the latest version was rejected and an older one
	// is in force. It starts at 1, so replicas that are not the leader, which load nothing, raise no alarm.
	configValid prometheus.Gauge
	// configRejected is koord_manager_slo_config_rejected_total: versions of the ConfigMap that were rejected.
	configRejected prometheus.Counter
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	m := &Metrics{
		configValid: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "slo_config_valid",
			Help: "1 when the latest version of the slo-controller-config ConfigMap parsed, validated and is in force; " +
				"0 when it was rejected and the last good version stays in force.",
		}),
		configRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "slo_config_rejected_total",
			Help: "Versions of the slo-controller-config ConfigMap that did not parse or validate and were not applied.",
		}),
	}
	m.configValid.Set(1)
	return m
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.configValid), reg.Register(m.configRejected))
}
