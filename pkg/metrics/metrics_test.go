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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

func TestDescribe(t *testing.T) {
	register := func(r prometheus.Registerer) error {
		r.MustRegister(
			prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "x", Name: "b_total", Help: `Counts "b".`}),
			prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: "x", Name: "a", Help: "A gauge."}, []string{"node", "resource"}),
			prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "x", Name: "d_seconds", Help: "Durations."}),
			prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: "x", Name: "c", Help: "A plain gauge."}),
		)
		return r.Register(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "x", Name: "e_total", Help: "By reason."}, []string{"reason"}))
	}
	got, err := Describe(register)
	if err != nil {
		t.Fatal(err)
	}
	want := []Info{
		{Name: "koord_x_a", Type: "gauge", Labels: []string{"node", "resource"}, Help: "A gauge."},
		{Name: "koord_x_b_total", Type: "counter", Help: `Counts "b".`},
		{Name: "koord_x_c", Type: "gauge", Help: "A plain gauge."},
		{Name: "koord_x_d_seconds", Type: "histogram", Help: "Durations."},
		{Name: "koord_x_e_total", Type: "counter", Labels: []string{"reason"}, Help: "By reason."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Describe (-want,+got):\n%s", diff)
	}
}
