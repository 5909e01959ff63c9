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

package webhook

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are the webhook server's collectors: of LimitInFlight and the Installer. Create them with
// NewMetrics, register them once with Register and pass them to both; nil gives each private, unregistered
// ones.
type Metrics struct {
	// rejectedForLoad is koord_manager_webhook_overload_rejections_total.
	rejectedForLoad prometheus.Counter
	// certificateExpiry is koord_manager_webhook_certificate_expiration_timestamp_seconds.
	certificateExpiry prometheus.Gauge
	// syncErrors is koord_manager_webhook_registration_sync_errors_total.
	syncErrors prometheus.Counter
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		rejectedForLoad: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "webhook_overload_rejections_total",
			Help: "Admission requests answered with 429 because the in-flight limit was reached until the request's deadline.",
		}),
		certificateExpiry: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "webhook_certificate_expiration_timestamp_seconds",
			Help: "When the webhook serving certificate expires, as a Unix timestamp.",
		}),
		syncErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "webhook_registration_sync_errors_total",
			Help: "Failed attempts to ensure the webhook certificate and configurations.",
		}),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.rejectedForLoad), reg.Register(m.certificateExpiry), reg.Register(m.syncErrors))
}

// orNew returns m, or private metrics when m is nil.
func (m *Metrics) orNew() *Metrics {
	if m == nil {
		return NewMetrics()
	}
	return m
}
