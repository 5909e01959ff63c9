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

package runtimehooks

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// The hooks, as they appear in the metrics' hook label.
const (
	hookRunPodSandbox   = "RunPodSandbox"
	hookCreateContainer = "CreateContainer"
	hookUpdateContainer = "UpdateContainer"
)

// The results of a hook's call, as they appear in the metrics' result label.
const (
	// resultApplied: the hook gave the pod or container settings.
	resultApplied = "Applied"
	// resultUnchanged: the rules had nothing for it.
	resultUnchanged = "Unchanged"
	// resultFailed: the hook could not decide (everything); what happened next is the failure policy's.
	resultFailed = "Failed"
)

// Metrics are the hooks' Prometheus collectors. Create them with NewMetrics, register them once with Register
// and pass them to New with WithMetrics and to Run with WithConnectionMetrics.
type Metrics struct {
	// calls is koord_koordlet_runtime_hook_calls_total{hook,result}.
	calls *prometheus.CounterVec
	// duration is koord_koordlet_runtime_hook_duration_seconds{hook}.
	duration *prometheus.HistogramVec
	// connected is koord_koordlet_runtime_hook_connected.
	connected prometheus.Gauge
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "runtime_hook_calls_total",
			Help: "Calls of koordlet's runtime hooks by the container runtime (NRI), by hook (RunPodSandbox, CreateContainer, UpdateContainer) and result: Applied, Unchanged (nothing to set) or Failed (left to the failure policy and the reconcile loop).",
		}, []string{"hook", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "runtime_hook_duration_seconds",
			Help:    "Time a runtime hook took to answer the container runtime, by hook.",
			Buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2},
		}, []string{"hook"}),
		connected: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "runtime_hook_connected",
			Help: "1 while koordlet is registered with the container runtime as an NRI plugin, else 0.",
		}),
	}
	// Every hook and result is exported from the start, at 0, so that dashboards see 0 rather than no data.
	for _, hook := range []string{hookRunPodSandbox, hookCreateContainer, hookUpdateContainer} {
		for _, result := range []string{resultApplied, resultUnchanged, resultFailed} {
			m.calls.WithLabelValues(hook, result)
		}
	}
	return m
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.calls), reg.Register(m.duration), reg.Register(m.connected))
}
