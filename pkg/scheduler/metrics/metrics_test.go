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

package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestRegister: the metrics are served under koord_scheduler_ from the registry they are registered with.
func TestRegister(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := m.Register(prometheus.NewRegistry()); err != nil {
		t.Errorf("registering in a second registry: %v", err)
	}
	m.GangTimeouts.Inc()
	m.LoadAwareRejections.WithLabelValues("cpu").Inc()
	m.ReservationTransitions.WithLabelValues("Available").Add(2)
	want := `
# HELP koord_scheduler_gang_timeouts_total Gang members marked timed out after waiting for their gang longer than its waiting time.
# TYPE koord_scheduler_gang_timeouts_total counter
koord_scheduler_gang_timeouts_total 1
# HELP koord_scheduler_load_aware_rejections_total Nodes rejected by LoadAwareScheduling, by the resource over its usage threshold, or "expired" for a stale NodeMetric.
# TYPE koord_scheduler_load_aware_rejections_total counter
koord_scheduler_load_aware_rejections_total{reason="cpu"} 1
# HELP koord_scheduler_reservation_transitions_total Reservations entering a phase: Available (placed), Succeeded (used up) or Failed (expired, node gone).
# TYPE koord_scheduler_reservation_transitions_total counter
koord_scheduler_reservation_transitions_total{phase="Available"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "koord_scheduler_gang_timeouts_total", "koord_scheduler_load_aware_rejections_total", "koord_scheduler_reservation_transitions_total"); err != nil {
		t.Error(err)
	}
	if err := m.Register(reg); err == nil {
		t.Error("registering twice in one registry succeeded")
	}
}
