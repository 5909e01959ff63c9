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

package noderesource

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/koord-dev/koord/pkg/manager/controller/noderesource/calculator"
)

// countSeries returns how many series of m carry the label node=name.
func countSeries(t *testing.T, m *Metrics, name string) int {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "node" && l.GetValue() == name {
					n++
				}
			}
		}
	}
	return n
}

func TestMetricsObserve(t *testing.T) {
	computed := calculator.Result{
		Batch: calculator.Tier{CPU: 25000, Memory: 33e9},
		Mid:   calculator.Tier{CPU: 20000, Memory: 40e9},
		CPU: calculator.Terms{
			Capacity: 100000, ReclaimPercent: 65, SafetyMargin: 35000, SystemUsed: 7000,
			HPRequest: 40000, HPUsed: 33000, HPMaxUsedReq: 42000, MidThresholdCap: 100000,
			ThresholdCap: 80000, HasThresholdCap: true,
			ProdReclaimable: 20000, NodeUnused: 50000, Unallocated: 53000,
		},
		Memory: calculator.Terms{
			Capacity: 120e9, ReclaimPercent: 65, SafetyMargin: 42e9, SystemUsed: 12e9,
			HPRequest: 60e9, HPUsed: 33e9, HPMaxUsedReq: 60e9, MidThresholdCap: 120e9,
			ProdReclaimable: 40e9, NodeUnused: 65e9, Unallocated: 48e9,
		},
		UsageKnown: true, MidPredicted: true,
	}
	m := NewMetrics()
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	m.observe("n1", &computed)

	const want = `
# HELP koord_manager_noderesource_batch_allocatable Batch resource last computed for a node (cpu in cores, memory in bytes); 0 while it is removed.
# TYPE koord_manager_noderesource_batch_allocatable gauge
koord_manager_noderesource_batch_allocatable{node="n1",resource="cpu"} 25
koord_manager_noderesource_batch_allocatable{node="n1",resource="memory"} 3.3e+10
# HELP koord_manager_noderesource_mid_allocatable Mid resource last computed for a node (cpu in cores, memory in bytes); 0 while it is removed.
# TYPE koord_manager_noderesource_mid_allocatable gauge
koord_manager_noderesource_mid_allocatable{node="n1",resource="cpu"} 20
koord_manager_noderesource_mid_allocatable{node="n1",resource="memory"} 4e+10
# HELP koord_manager_noderesource_input Inputs of a node's last batch and mid calculation, by input: capacity, safety_margin, node_reserved, system_used, hp_request, hp_used, hp_max_used_request, batch_threshold_cap, prod_reclaimable, node_unused, unallocated, mid_threshold_cap (cpu in cores, memory in bytes) and reclaim_ratio (a fraction); inputs that were not known are absent.
# TYPE koord_manager_noderesource_input gauge
koord_manager_noderesource_input{input="batch_threshold_cap",node="n1",resource="cpu"} 80
koord_manager_noderesource_input{input="capacity",node="n1",resource="cpu"} 100
koord_manager_noderesource_input{input="capacity",node="n1",resource="memory"} 1.2e+11
koord_manager_noderesource_input{input="hp_max_used_request",node="n1",resource="cpu"} 42
koord_manager_noderesource_input{input="hp_max_used_request",node="n1",resource="memory"} 6e+10
koord_manager_noderesource_input{input="hp_request",node="n1",resource="cpu"} 40
koord_manager_noderesource_input{input="hp_request",node="n1",resource="memory"} 6e+10
koord_manager_noderesource_input{input="hp_used",node="n1",resource="cpu"} 33
koord_manager_noderesource_input{input="hp_used",node="n1",resource="memory"} 3.3e+10
koord_manager_noderesource_input{input="mid_threshold_cap",node="n1",resource="cpu"} 100
koord_manager_noderesource_input{input="mid_threshold_cap",node="n1",resource="memory"} 1.2e+11
koord_manager_noderesource_input{input="node_reserved",node="n1",resource="cpu"} 0
koord_manager_noderesource_input{input="node_reserved",node="n1",resource="memory"} 0
koord_manager_noderesource_input{input="node_unused",node="n1",resource="cpu"} 50
koord_manager_noderesource_input{input="node_unused",node="n1",resource="memory"} 6.5e+10
koord_manager_noderesource_input{input="prod_reclaimable",node="n1",resource="cpu"} 20
koord_manager_noderesource_input{input="prod_reclaimable",node="n1",resource="memory"} 4e+10
koord_manager_noderesource_input{input="reclaim_ratio",node="n1",resource="cpu"} 0.65
koord_manager_noderesource_input{input="reclaim_ratio",node="n1",resource="memory"} 0.65
koord_manager_noderesource_input{input="safety_margin",node="n1",resource="cpu"} 35
koord_manager_noderesource_input{input="safety_margin",node="n1",resource="memory"} 4.2e+10
koord_manager_noderesource_input{input="system_used",node="n1",resource="cpu"} 7
koord_manager_noderesource_input{input="system_used",node="n1",resource="memory"} 1.2e+10
koord_manager_noderesource_input{input="unallocated",node="n1",resource="cpu"} 53
koord_manager_noderesource_input{input="unallocated",node="n1",resource="memory"} 4.8e+10
# HELP slo_controller_node_extended_resource_allocatable_internal Koordinator's name: batch and mid resources last computed for a node, by resource (kubernetes.io/batch-cpu and mid-cpu in millicores, unit integer; kubernetes.io/batch-memory and mid-memory in bytes, unit byte); 0 while they are removed.
# TYPE slo_controller_node_extended_resource_allocatable_internal gauge
slo_controller_node_extended_resource_allocatable_internal{node="n1",resource="kubernetes.io/batch-cpu",unit="integer"} 25000
slo_controller_node_extended_resource_allocatable_internal{node="n1",resource="kubernetes.io/batch-memory",unit="byte"} 3.3e+10
slo_controller_node_extended_resource_allocatable_internal{node="n1",resource="kubernetes.io/mid-cpu",unit="integer"} 20000
slo_controller_node_extended_resource_allocatable_internal{node="n1",resource="kubernetes.io/mid-memory",unit="byte"} 4e+10
`
	names := []string{
		"koord_manager_noderesource_batch_allocatable", "koord_manager_noderesource_mid_allocatable",
		"koord_manager_noderesource_input", "koord_manager_noderesource_degrades_total",
		"slo_controller_node_extended_resource_allocatable_internal",
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}

	// The NodeMetric goes missing: usage inputs disappear, the resources drop to 0.
	degraded := computed
	degraded.Batch = calculator.Tier{Reset: calculator.ResetNodeMetricMissing}
	degraded.Mid = calculator.Tier{Reset: calculator.ResetNodeMetricMissing}
	degraded.UsageKnown, degraded.MidPredicted = false, false
	degraded.CPU.HasThresholdCap = false
	m.observe("n1", &degraded)
	// capacity, safety_margin, node_reserved, mid_threshold_cap and reclaim_ratio per resource.
	if got := testutil.CollectAndCount(m.input); got != 10 {
		t.Errorf("input series after degrading = %d, want 10", got)
	}
	if got := testutil.ToFloat64(m.batchAllocatable.WithLabelValues("n1", "cpu")); got != 0 {
		t.Errorf("batch cpu after degrading = %v, want 0", got)
	}
	if got := testutil.ToFloat64(m.degrades.WithLabelValues(string(calculator.ResetNodeMetricMissing))); got != 1 {
		t.Errorf("degrades{NodeMetricMissing} = %v, want 1", got)
	}

	// Turning colocation off is not a degrade.
	disabled := degraded
	disabled.Batch.Reset, disabled.Mid.Reset = calculator.ResetColocationDisabled, calculator.ResetColocationDisabled
	m.observe("n1", &disabled)
	if got := testutil.CollectAndCount(m.degrades); got != 1 {
		t.Errorf("degrades series = %d, want 1 (NodeMetricMissing)", got)
	}

	// Another node keeps its series when n1 is forgotten.
	m.observe("n2", &computed)
	m.forget("n1")
	if got := countSeries(t, m, "n1"); got != 0 {
		t.Errorf("series of n1 after forget = %d, want 0", got)
	}
	// 4 allocatable series, 25 inputs (12 per resource and the cpu threshold cap) and Koordinator's 4.
	if got := countSeries(t, m, "n2"); got != 4+25+4 {
		t.Errorf("series of n2 = %d, want 33", got)
	}
}

func TestReconcileCountsUpdatesAndSkips(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	e := newEnv(t, newFixture(), interceptor.Funcs{})
	e.reconcile(t, ctx)
	e.reconcile(t, ctx)
	m := e.reconciler.metrics
	for _, c := range []struct {
		counter *prometheus.CounterVec
		label   string
		want    float64
	}{
		{m.updates, string(calculator.UpdateResourceAdded), 1},
		{m.skips, skipUnchanged, 1},
		{m.skips, skipThrottled, 0},
	} {
		if got := testutil.ToFloat64(c.counter.WithLabelValues(c.label)); got != c.want {
			t.Errorf("counter{reason=%q} = %v, want %v", c.label, got, c.want)
		}
	}
}

func TestRegister(t *testing.T) {
	m := NewMetrics()
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	// Registering again in the same registry must fail as already registered.
	if err := m.Register(reg); !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		t.Errorf("registering again = %v, want AlreadyRegisteredError", err)
	}
}
