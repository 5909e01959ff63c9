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

package sim

import (
	"math"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// agentCollector exports, at every scrape, koordlet's usage and suppression gauges of every simulated node as
// of its last round, under koordlet's names with a node label (the label a Prometheus that scrapes one koordlet
// per node adds by relabelling): the node's and each running pod's usage, and the BE CPU the suppression
// formula allows and the besteffort cgroup's limit while suppression is on. It exports nothing until a Cluster
// gives it its snapshots.
type agentCollector struct {
	snapshot atomic.Pointer[func() Snapshot]

	nodeUsage, podUsage, beAllowed, beSuppress *prometheus.Desc
	// Koordinator's names.
	nodeUsedCPU, nodeUsedMemory, beSuppressKoordinator *prometheus.Desc
}

func newAgentCollector() *agentCollector {
	name := func(n string) string {
		return prometheus.BuildFQName(koordmetrics.Namespace, koordmetrics.SubsystemKoordlet, n)
	}
	return &agentCollector{
		nodeUsage: prometheus.NewDesc(name("node_usage"),
			"The simulated node's usage at its agent's last round, by resource: cpu in cores, memory in bytes.",
			[]string{"node", "resource"}, nil),
		podUsage: prometheus.NewDesc(name("pod_usage"),
			"Each running pod's simulated usage at its node agent's last round, by resource: cpu in cores (after suppression), memory in bytes.",
			[]string{"node", "pod_uid", "pod_name", "pod_namespace", "resource"}, nil),
		beAllowed: prometheus.NewDesc(name("be_cpu_allowed_cores"),
			"CPU the BE pods of the simulated node may use by the suppression formula, in cores, at its agent's last round. Absent while suppression is off.",
			[]string{"node"}, nil),
		beSuppress: prometheus.NewDesc(name("be_cpu_suppress_cores"),
			"CPU the simulated node's BE pods are limited to, in cores, by the policy in force (cpuset: number of CPUs; cfsQuota: quota / period). Absent while suppression is off.",
			[]string{"node", "policy"}, nil),
		nodeUsedCPU: prometheus.NewDesc("koordlet_node_used_cpu_cores",
			"Koordinator's name: cpu the simulated node uses, in cores (koord_koordlet_node_usage{resource=\"cpu\"}).", []string{"node"}, nil),
		nodeUsedMemory: prometheus.NewDesc("koordlet_node_used_memory_bytes",
			"Koordinator's name: memory the simulated node uses, in bytes (koord_koordlet_node_usage{resource=\"memory\"}).", []string{"node"}, nil),
		beSuppressKoordinator: prometheus.NewDesc("koordlet_be_suppress_cpu_cores",
			"Koordinator's name: CPU the simulated node's BE pods are limited to, in cores, by policy type: cpuset or cfsQuota (koord_koordlet_be_cpu_suppress_cores).",
			[]string{"node", "type"}, nil),
	}
}

// setSource makes the collector export snapshot's nodes.
func (c *agentCollector) setSource(snapshot func() Snapshot) {
	c.snapshot.Store(&snapshot)
}

func (c *agentCollector) descs() []*prometheus.Desc {
	return []*prometheus.Desc{c.nodeUsage, c.podUsage, c.beAllowed, c.beSuppress, c.nodeUsedCPU, c.nodeUsedMemory, c.beSuppressKoordinator}
}

// Describe implements prometheus.Collector.
func (c *agentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs() {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *agentCollector) Collect(ch chan<- prometheus.Metric) {
	source := c.snapshot.Load()
	if source == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, n := range (*source)().Nodes {
		last := n.Last
		if last.Time.IsZero() {
			continue
		}
		gauge(c.nodeUsage, last.NodeCPU, n.Name, "cpu")
		gauge(c.nodeUsage, last.NodeMemory, n.Name, "memory")
		gauge(c.nodeUsedCPU, last.NodeCPU, n.Name)
		gauge(c.nodeUsedMemory, last.NodeMemory, n.Name)
		for _, p := range n.LastPods {
			gauge(c.podUsage, p.CPU, n.Name, string(p.UID), p.Name, p.Namespace, "cpu")
			gauge(c.podUsage, p.Memory, n.Name, string(p.UID), p.Name, p.Namespace, "memory")
		}
		if n.SuppressionPolicy != "" && !math.IsInf(last.BELimitCPU, 1) {
			gauge(c.beAllowed, last.BEAllowedCPU, n.Name)
			gauge(c.beSuppress, last.BELimitCPU, n.Name, string(n.SuppressionPolicy))
			gauge(c.beSuppressKoordinator, last.BELimitCPU, n.Name, string(n.SuppressionPolicy))
		}
	}
}

// MetricInfos implements koordmetrics.SelfDescribing: the gauges exist only once nodes had a round.
func (c *agentCollector) MetricInfos() ([]koordmetrics.Info, error) {
	return koordmetrics.GaugeInfos(c.descs()...)
}
