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
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// usageCollector exports, at every scrape, the latest usage koordlet collected: of the node, of each pod
// running on it and of each of their containers, cpu in cores and memory in bytes (without the inactive page
// cache), with Koordinator's node gauges. A pod's and container's series go with them.
type usageCollector struct {
	cache *metriccache.Cache
	pods  func() []*corev1.Pod
	node  string

	nodeDesc, podDesc, containerDesc *prometheus.Desc
	// Koordinator's names.
	nodeCPUDesc, nodeMemoryDesc *prometheus.Desc
}

func newUsageCollector(cache *metriccache.Cache, pods func() []*corev1.Pod, node string) *usageCollector {
	name := func(n string) string {
		return prometheus.BuildFQName(koordmetrics.Namespace, koordmetrics.SubsystemKoordlet, n)
	}
	return &usageCollector{
		cache: cache, pods: pods, node: node,
		nodeDesc: prometheus.NewDesc(name("node_usage"),
			"The node's latest usage as koordlet collected it, by resource: cpu in cores, memory in bytes without the inactive page cache.",
			[]string{"resource"}, nil),
		podDesc: prometheus.NewDesc(name("pod_usage"),
			"Each pod's latest usage as koordlet collected it from its cgroup, by resource: cpu in cores, memory in bytes without the inactive page cache. A pod's series go with it.",
			[]string{"pod_uid", "pod_name", "pod_namespace", "resource"}, nil),
		containerDesc: prometheus.NewDesc(name("container_usage"),
			"Each container's latest usage as koordlet collected it from its cgroup, by resource: cpu in cores, memory in bytes without the inactive page cache. A container's series go with it.",
			[]string{"pod_uid", "pod_name", "pod_namespace", "container_name", "container_id", "resource"}, nil),
		nodeCPUDesc: prometheus.NewDesc("koordlet_node_used_cpu_cores",
			"Koordinator's name: cpu the node uses, in cores (koord_koordlet_node_usage{resource=\"cpu\"}).", []string{"node"}, nil),
		nodeMemoryDesc: prometheus.NewDesc("koordlet_node_used_memory_bytes",
			"Koordinator's name: memory the node uses, in bytes (koord_koordlet_node_usage{resource=\"memory\"}).", []string{"node"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.nodeDesc, c.podDesc, c.containerDesc, c.nodeCPUDesc, c.nodeMemoryDesc} {
		ch <- d
	}
}

// usageResources are the resources the usage gauges export.
var usageResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// Collect implements prometheus.Collector.
func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range usageResources {
		_, v, ok := c.cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: r})
		if !ok {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.nodeDesc, prometheus.GaugeValue, v, string(r))
		koordinator := c.nodeCPUDesc
		if r == corev1.ResourceMemory {
			koordinator = c.nodeMemoryDesc
		}
		ch <- prometheus.MustNewConstMetric(koordinator, prometheus.GaugeValue, v, c.node)
	}
	for _, pod := range c.pods() {
		if pod.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, r := range usageResources {
			if _, v, ok := c.cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(pod.UID), Resource: r}); ok {
				ch <- prometheus.MustNewConstMetric(c.podDesc, prometheus.GaugeValue, v, string(pod.UID), pod.Name, pod.Namespace, string(r))
			}
		}
		for _, status := range pod.Status.ContainerStatuses {
			if status.ContainerID == "" {
				continue
			}
			for _, r := range usageResources {
				if _, v, ok := c.cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindContainer, ID: status.ContainerID, Resource: r}); ok {
					ch <- prometheus.MustNewConstMetric(c.containerDesc, prometheus.GaugeValue, v,
						string(pod.UID), pod.Name, pod.Namespace, status.Name, status.ContainerID, string(r))
				}
			}
		}
	}
}

// MetricInfos implements koordmetrics.SelfDescribing: the gauges exist only once usage was collected.
func (c *usageCollector) MetricInfos() ([]koordmetrics.Info, error) {
	return koordmetrics.GaugeInfos(c.nodeDesc, c.podDesc, c.containerDesc, c.nodeCPUDesc, c.nodeMemoryDesc)
}
