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

package evictor

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Causes of koord_koordlet_evictions_rejected_total: why Evict did not evict.
const (
	// CauseCoolDown: the pod was evicted less than the cool-down ago.
	CauseCoolDown = "CoolDown"
	// CauseBudgetExhausted: the global budget of evictions per window is used up.
	CauseBudgetExhausted = "BudgetExhausted"
	// CauseRateLimited: the token bucket is empty.
	CauseRateLimited = "RateLimited"
	// CausePodGone: the apiserver no longer has the pod (or has a new pod of that name).
	CausePodGone = "PodGone"
	// CauseDisallowed: the apiserver refused the eviction with 429, e.g. a PodDisruptionBudget.
	CauseDisallowed = "Disallowed"
	// CauseError: any other API error.
	CauseError = "Error"
)

// Metrics are the evictor's Prometheus collectors. Create them with NewMetrics, register them once with
// Register and pass them to New with WithMetrics; an Evictor without them keeps private, unregistered ones.
type Metrics struct {
	// evictions is koord_koordlet_evictions_total{reason}.
	evictions *prometheus.CounterVec
	// rejected is koord_koordlet_evictions_rejected_total{cause}.
	rejected *prometheus.CounterVec
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	m := &Metrics{
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "evictions_total",
			Help: "Pods koordlet evicted through the Eviction API, by the reason of the eviction (e.g. EvictPodByNodeMemoryUsage; in the message of the evictPodSuccess Event).",
		}, []string{"reason"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "evictions_rejected_total",
			Help: "Evictions koordlet asked for but did not carry out, by cause: CoolDown, BudgetExhausted, " +
				"RateLimited, PodGone, Disallowed (HTTP 429 from the apiserver, e.g. a PodDisruptionBudget) or Error.",
		}, []string{"cause"}),
	}
	// Every cause is exported from the start, at 0, so that dashboards and alerts see 0 rather than no data.
	for _, c := range []string{CauseCoolDown, CauseBudgetExhausted, CauseRateLimited, CausePodGone, CauseDisallowed, CauseError} {
		m.rejected.WithLabelValues(c)
	}
	return m
}

// Declare exports the evictions of each reason at 0 until the first, so that dashboards see 0 rather than no
// data: the strategies that evict declare their reasons.
func (m *Metrics) Declare(reasons ...string) {
	for _, r := range reasons {
		m.evictions.WithLabelValues(r)
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.evictions), reg.Register(m.rejected))
}
