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

package koordlet

import (
	"errors"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpusuppress"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/resctrl"
	"github.com/koord-dev/koord/pkg/koordlet/runtimehooks"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// koordinatorMetrics are koordlet's metrics under Koordinator's names and labels (each with the node label
// Koordinator's koordlet gives every series), so that dashboards and alerts written for Koordinator work:
// aliases of Koord's own metrics, gathered from source at every scrape, and koordlet_start_time.
type koordinatorMetrics struct {
	aliases   prometheus.Collector
	startTime *prometheus.GaugeVec
	node      string
}

// newKoordinatorMetrics returns the metrics of node, aliasing those source gathers; cpuFull tells whether the
// kernel reports full cpu pressure (Koordinator's cpu_full_supported label).
func newKoordinatorMetrics(source prometheus.Gatherer, node string, cpuFull func() bool) (*koordinatorMetrics, error) {
	aliases, err := koordmetrics.NewAliasCollector(source, koordletAliases(node, cpuFull)...)
	if err != nil {
		return nil, err
	}
	return &koordinatorMetrics{
		aliases: aliases,
		startTime: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "koordlet_start_time",
			Help: "Koordinator's name: when koordlet started, as a Unix timestamp in seconds.",
		}, []string{"node"}),
		node: node,
	}, nil
}

// Register registers the metrics with reg, which must not be the source registry.
func (m *koordinatorMetrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.aliases), reg.Register(m.startTime))
}

// started records the start time, in Unix seconds.
func (m *koordinatorMetrics) started(unixSeconds float64) {
	m.startTime.WithLabelValues(m.node).Set(unixSeconds)
}

// koordletAliases are the aliases of koordlet's metrics on node; cpuFull tells whether the kernel reports full
// cpu pressure.
func koordletAliases(node string, cpuFull func() bool) []koordmetrics.Alias {
	nodeLabel := koordmetrics.Const("node", node)
	// Koordinator labels each PSI series with whether its resource's pressure file has a full line: always for
	// memory and io, for cpu from Linux 5.13 on.
	cpuFullSupported := koordmetrics.AliasLabel{Name: "cpu_full_supported", Value: func(l map[string]string) string {
		return strconv.FormatBool(l["psi_resource_type"] != "cpu" || cpuFull())
	}}
	psiLabels := []koordmetrics.AliasLabel{
		{Name: "psi_resource_type", From: "psi_resource_type"}, {Name: "psi_precision", From: "psi_precision"},
		{Name: "psi_degree", From: "psi_degree"}, cpuFullSupported,
	}
	podLabels := []koordmetrics.AliasLabel{
		nodeLabel, {Name: "pod_uid", From: "pod_uid"}, {Name: "pod_name", From: "pod_name"}, {Name: "pod_namespace", From: "pod_namespace"},
	}
	// Koordinator names its predictors after their types and gives each resource a unit.
	predictor := koordmetrics.AliasLabel{Name: "predictor", From: "predictor", Values: map[string]string{
		"pod": "podReclaimablePredictor", "priority": "priorityReclaimablePredictor", "min": "minPredictor",
	}}
	unit := koordmetrics.AliasLabel{Name: "unit", Value: func(l map[string]string) string {
		if l["resource"] == "cpu" {
			return "core"
		}
		return "byte"
	}}
	resource := koordmetrics.AliasLabel{Name: "resource", From: "resource"}
	return []koordmetrics.Alias{
		{
			Source: "koord_koordlet_evictions_total", Name: "koordlet_pod_eviction", Type: prometheus.CounterValue,
			Help:   "Koordinator's name: pods koordlet evicted, by reason (koord_koordlet_evictions_total).",
			Labels: []koordmetrics.AliasLabel{nodeLabel, {Name: "reason", From: "reason"}},
		},
		{
			Source: "koord_koordlet_be_cpu_suppress_cores", Name: "koordlet_be_suppress_cpu_cores", Type: prometheus.GaugeValue,
			Help:   "Koordinator's name: CPU the besteffort cgroup is limited to, in cores, by policy type: cpuset or cfsQuota (koord_koordlet_be_cpu_suppress_cores).",
			Labels: []koordmetrics.AliasLabel{nodeLabel, {Name: "type", From: "policy"}},
		},
		{
			Source: "koord_koordlet_prediction_prod_reclaimable", Name: "koordlet_node_predicted_resource_reclaimable", Type: prometheus.GaugeValue,
			Help:   "Koordinator's name: resources predicted reclaimable from the prod pods, by predictor, resource and unit (core, byte) (koord_koordlet_prediction_prod_reclaimable).",
			Labels: []koordmetrics.AliasLabel{nodeLabel, predictor, resource, unit},
		},
		{
			Source: "koord_koordlet_pod_psi", Name: "koordlet_pod_psi", Type: prometheus.GaugeValue,
			Help:   "Koordinator's name: pressure stall information of each running pod's cgroup, in percent of wall time, with cpu_full_supported (koord_koordlet_pod_psi).",
			Labels: slices.Concat(podLabels, psiLabels),
		},
		{
			Source: "koord_koordlet_prediction_prod_peak", Name: "koordlet_node_predicted_resource_peak", Type: prometheus.GaugeValue,
			Help:   "Koordinator's name: predicted peak usage of the prod pods and the system, by predictor, resource and unit (core, byte) (koord_koordlet_prediction_prod_peak).",
			Labels: []koordmetrics.AliasLabel{nodeLabel, predictor, resource, unit},
		},
	}
}

// RegisterAllMetrics registers with reg every collector an agent may register, unconnected to any node: what
// its /metrics can serve, for the documentation of the metrics (docs/metrics.md).
func RegisterAllMetrics(reg prometheus.Registerer) error {
	km, err := newKoordinatorMetrics(prometheus.NewRegistry(), "", func() bool { return false })
	if err != nil {
		return err
	}
	return errors.Join(
		qosmanager.NewMetrics().Register(reg), cpusuppress.NewMetrics().Register(reg), evictor.NewMetrics().Register(reg),
		prediction.NewMetrics().Register(reg), runtimehooks.NewMetrics().Register(reg), resctrl.NewMetrics().Register(reg),
		collector.NewMetrics().Register(reg),
		reg.Register(newUsageCollector(metriccache.New(metriccache.Options{}), func() []*corev1.Pod { return nil }, "")),
		km.Register(reg),
	)
}
