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

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAliasCollector: every series of a source is exported under the alias's name with its labels renamed,
// mapped and computed; metrics without an alias are not.
func TestAliasCollector(t *testing.T) {
	source := prometheus.NewPedanticRegistry()
	evictions := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "koord_koordlet_evictions_total", Help: "h"}, []string{"reason"})
	peak := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "koord_koordlet_prediction_prod_peak", Help: "h"}, []string{"predictor", "resource"})
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "koord_other", Help: "h"})
	source.MustRegister(evictions, peak, other)
	evictions.WithLabelValues("EvictPodByNodeMemoryUsage").Add(2)
	peak.WithLabelValues("min", "cpu").Set(3.5)
	peak.WithLabelValues("pod", "memory").Set(1e9)
	other.Set(1)

	c, err := NewAliasCollector(source,
		Alias{Source: "koord_koordlet_evictions_total", Name: "koordlet_pod_eviction", Help: "evictions", Type: prometheus.CounterValue,
			Labels: []AliasLabel{Const("node", "n1"), {Name: "reason", From: "reason"}}},
		Alias{Source: "koord_koordlet_prediction_prod_peak", Name: "koordlet_node_predicted_resource_peak", Help: "peak", Type: prometheus.GaugeValue,
			Labels: []AliasLabel{
				Const("node", "n1"),
				{Name: "predictor", From: "predictor", Values: map[string]string{"min": "minPredictor"}},
				{Name: "resource", From: "resource"},
				{Name: "unit", Value: func(l map[string]string) string {
					if l["resource"] == "cpu" {
						return "core"
					}
					return "byte"
				}},
			}},
	)
	if err != nil {
		t.Fatal(err)
	}
	aliases := prometheus.NewPedanticRegistry()
	aliases.MustRegister(c)
	want := `
# HELP koordlet_node_predicted_resource_peak peak
# TYPE koordlet_node_predicted_resource_peak gauge
koordlet_node_predicted_resource_peak{node="n1",predictor="minPredictor",resource="cpu",unit="core"} 3.5
koordlet_node_predicted_resource_peak{node="n1",predictor="pod",resource="memory",unit="byte"} 1e+09
# HELP koordlet_pod_eviction evictions
# TYPE koordlet_pod_eviction counter
koordlet_pod_eviction{node="n1",reason="EvictPodByNodeMemoryUsage"} 2
`
	if err := testutil.GatherAndCompare(aliases, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	infos, err := Describe(func(r prometheus.Registerer) error { return r.Register(c) })
	if err != nil {
		t.Fatal(err)
	}
	wantInfos := []Info{
		{Name: "koordlet_node_predicted_resource_peak", Type: "gauge", Labels: []string{"node", "predictor", "resource", "unit"}, Help: "peak"},
		{Name: "koordlet_pod_eviction", Type: "counter", Labels: []string{"node", "reason"}, Help: "evictions"},
	}
	if diff := cmp.Diff(wantInfos, infos); diff != "" {
		t.Errorf("Describe (-want,+got):\n%s", diff)
	}
}

// TestAliasCollectorErrors: aliases that cannot work are refused when the collector is built, and a source of
// another type than declared gives an invalid metric rather than a wrong value.
func TestAliasCollectorErrors(t *testing.T) {
	source := prometheus.NewPedanticRegistry()
	for name, aliases := range map[string][]Alias{
		"two aliases of one source": {
			{Source: "a", Name: "x", Type: prometheus.GaugeValue}, {Source: "a", Name: "y", Type: prometheus.GaugeValue},
		},
		"a label without a source": {{Source: "a", Name: "x", Type: prometheus.GaugeValue, Labels: []AliasLabel{{Name: "node"}}}},
		"a histogram":              {{Source: "a", Name: "x", Type: prometheus.UntypedValue}},
	} {
		if _, err := NewAliasCollector(source, aliases...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}

	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g", Help: "h"})
	source.MustRegister(g)
	c, err := NewAliasCollector(source, Alias{Source: "g", Name: "x", Help: "h", Type: prometheus.CounterValue})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "the source is a GAUGE") {
		t.Errorf("Gather error = %v, want one naming the source's type", err)
	}
}
