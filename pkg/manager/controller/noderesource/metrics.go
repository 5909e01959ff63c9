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

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/manager/controller/noderesource/calculator"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Label values of the resource label: amounts of cpu are in cores, of memory in bytes.
const (
	resourceCPU    = "cpu"
	resourceMemory = "memory"
)

// Units of Koordinator's extended resource gauge: cpu as an integer of millicores, memory in bytes.
const (
	unitInteger = "integer"
	unitByte    = "byte"
)

// Skip reasons of koord_manager_noderesource_node_update_skips_total.
const (
	// skipUnchanged: the node already has the computed values.
	skipUnchanged = "Unchanged"
	// skipThrottled: the values differ by less than resourceDiffThreshold and the last update is recent.
	skipThrottled = "Throttled"
	// skipAwaitingCache: the informer cache does not show the reconciler's own last write to the node yet; the
	// reconcile is tried again shortly instead of computing from the stale node and writing it a second time.
	skipAwaitingCache = "AwaitingCache"
)

// Metrics are the controller's Prometheus collectors. Create them with NewMetrics, register them once with
// Register and pass them in Options.Metrics; a Reconciler without them keeps private, unregistered ones. The
// per-node gauges carry the node name, so that a node's numbers can be explained; a node's series are deleted
// with the node.
type Metrics struct {
	// batchAllocatable is koord_manager_noderesource_batch_allocatable{node,resource}.
	batchAllocatable *prometheus.GaugeVec
	// midAllocatable is koord_manager_noderesource_mid_allocatable{node,resource}.
	midAllocatable *prometheus.GaugeVec
	// input is koord_manager_noderesource_input{node,resource,input}.
	input *prometheus.GaugeVec
	// updates is koord_manager_noderesource_node_updates_total{reason}.
	updates *prometheus.CounterVec
	// skips is koord_manager_noderesource_node_update_skips_total{reason}.
	skips *prometheus.CounterVec
	// degrades is koord_manager_noderesource_degrades_total{reason}.
	degrades *prometheus.CounterVec
	// extendedAllocatable is batchAllocatable and midAllocatable again under Koordinator's name, labels and
	// units: slo_controller_node_extended_resource_allocatable_internal{node,resource,unit}.
	extendedAllocatable *prometheus.GaugeVec
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		batchAllocatable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "noderesource_batch_allocatable",
			Help: "Batch resource last computed for a node (cpu in cores, memory in bytes); 0 while it is removed.",
		}, []string{"node", "resource"}),
		midAllocatable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "noderesource_mid_allocatable",
			Help: "Mid resource last computed for a node (cpu in cores, memory in bytes); 0 while it is removed.",
		}, []string{"node", "resource"}),
		input: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "noderesource_input",
			Help: "Inputs of a node's last batch and mid calculation, by input: capacity, safety_margin, node_reserved, " +
				"system_used, hp_request, hp_used, hp_max_used_request, batch_threshold_cap, prod_reclaimable, node_unused, " +
				"unallocated, mid_threshold_cap (cpu in cores, memory in bytes) and reclaim_ratio (a fraction); inputs that " +
				"were not known are absent.",
		}, []string{"node", "resource", "input"}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "noderesource_node_updates_total",
			Help: "Writes of batch and mid resources to nodes, by the reason the write was due: ResourceAdded, " +
				"ResourceRemoved, CapacityMismatch, DiffExceeded, Expired, NoLastUpdate or ExplanationOutdated.",
		}, []string{"reason"}),
		skips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "noderesource_node_update_skips_total",
			Help: "Calculations that wrote nothing: Unchanged (the node already has the values), Throttled (a " +
				"difference below resourceDiffThreshold within updateTimeThresholdSeconds) or AwaitingCache (the " +
				"cache does not show the controller's own last write to the node yet; tried again shortly).",
		}, []string{"reason"}),
		degrades: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemManager, Name: "noderesource_degrades_total",
			Help: "Calculations that removed batch and mid resources because their inputs were missing or stale, " +
				"by reason: NodeMetricMissing, NodeMetricNoUpdateTime, NodeMetricStale or NodeUsageMissing. A disabled " +
				"colocation is not counted.",
		}, []string{"reason"}),
		extendedAllocatable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "slo_controller_node_extended_resource_allocatable_internal",
			Help: "Koordinator's name: batch and mid resources last computed for a node, by resource " +
				"(kubernetes.io/batch-cpu and mid-cpu in millicores, unit integer; kubernetes.io/batch-memory and " +
				"mid-memory in bytes, unit byte); 0 while they are removed.",
		}, []string{"node", "resource", "unit"}),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.batchAllocatable, m.midAllocatable, m.input, m.updates, m.skips, m.degrades, m.extendedAllocatable} {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}

// observe records the result of a node's calculation.
func (m *Metrics) observe(node string, r *calculator.Result) {
	m.batchAllocatable.WithLabelValues(node, resourceCPU).Set(cores(r.Batch.CPU))
	m.batchAllocatable.WithLabelValues(node, resourceMemory).Set(float64(r.Batch.Memory))
	m.midAllocatable.WithLabelValues(node, resourceCPU).Set(cores(r.Mid.CPU))
	m.midAllocatable.WithLabelValues(node, resourceMemory).Set(float64(r.Mid.Memory))
	for _, v := range []struct {
		resource    string
		unit        string
		milliOrByte int64
	}{
		{string(extension.BatchCPU), unitInteger, r.Batch.CPU}, {string(extension.BatchMemory), unitByte, r.Batch.Memory},
		{string(extension.MidCPU), unitInteger, r.Mid.CPU}, {string(extension.MidMemory), unitByte, r.Mid.Memory},
	} {
		m.extendedAllocatable.WithLabelValues(node, v.resource, v.unit).Set(float64(v.milliOrByte))
	}

	midPredicted := r.MidPredicted && r.Mid.Reset == ""
	for _, res := range []struct {
		name  string
		in    *calculator.Terms
		scale func(int64) float64
	}{{resourceCPU, &r.CPU, cores}, {resourceMemory, &r.Memory, asFloat}} {
		for _, input := range []struct {
			name  string
			value int64
			known bool
		}{
			{"capacity", res.in.Capacity, true},
			{"safety_margin", res.in.SafetyMargin, true},
			{"node_reserved", res.in.NodeReserved, true},
			{"system_used", res.in.SystemUsed, r.UsageKnown},
			{"hp_request", res.in.HPRequest, r.UsageKnown},
			{"hp_used", res.in.HPUsed, r.UsageKnown},
			{"hp_max_used_request", res.in.HPMaxUsedReq, r.UsageKnown},
			{"batch_threshold_cap", res.in.ThresholdCap, res.in.HasThresholdCap},
			{"prod_reclaimable", res.in.ProdReclaimable, midPredicted},
			{"node_unused", res.in.NodeUnused, midPredicted},
			{"unallocated", res.in.Unallocated, midPredicted},
			{"mid_threshold_cap", res.in.MidThresholdCap, true},
		} {
			if input.known {
				m.input.WithLabelValues(node, res.name, input.name).Set(res.scale(input.value))
			} else {
				m.input.DeleteLabelValues(node, res.name, input.name)
			}
		}
		m.input.WithLabelValues(node, res.name, "reclaim_ratio").Set(float64(res.in.ReclaimPercent) / 100)
	}

	if r.Batch.Reset != "" && r.Batch.Reset != calculator.ResetColocationDisabled {
		m.degrades.WithLabelValues(string(r.Batch.Reset)).Inc()
	}
}

// forget deletes the series of a node that is gone.
func (m *Metrics) forget(node string) {
	labels := prometheus.Labels{"node": node}
	m.batchAllocatable.DeletePartialMatch(labels)
	m.midAllocatable.DeletePartialMatch(labels)
	m.input.DeletePartialMatch(labels)
	m.extendedAllocatable.DeletePartialMatch(labels)
}

// cores converts milli-cores into cores.
func cores(milli int64) float64 {
	return float64(milli) / 1000
}

// asFloat converts bytes into a float.
func asFloat(v int64) float64 {
	return float64(v)
}
