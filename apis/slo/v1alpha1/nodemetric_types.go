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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeMemoryCollectPolicy selects how the node agent counts memory usage.
// +kubebuilder:validation:Enum=usageWithoutPageCache;usageWithHotPageCache;usageWithPageCache
type NodeMemoryCollectPolicy string

const (
	// UsageWithoutPageCache counts memory usage without the page cache. It is the default.
	UsageWithoutPageCache NodeMemoryCollectPolicy = "usageWithoutPageCache"
	// UsageWithHotPageCache counts memory usage plus the recently used (hot) page cache; it needs kernel support.
	UsageWithHotPageCache NodeMemoryCollectPolicy = "usageWithHotPageCache"
	// UsageWithPageCache counts memory usage including the whole page cache.
	UsageWithPageCache NodeMemoryCollectPolicy = "usageWithPageCache"
)

// AggregationType names a statistic over a window of usage samples.
// +kubebuilder:validation:Enum=avg;p50;p90;p95;p99
type AggregationType string

const (
	// AggregationTypeAVG is the mean.
	AggregationTypeAVG AggregationType = "avg"
	// AggregationTypeP50 is the 50th percentile.
	AggregationTypeP50 AggregationType = "p50"
	// AggregationTypeP90 is the 90th percentile.
	AggregationTypeP90 AggregationType = "p90"
	// AggregationTypeP95 is the 95th percentile.
	AggregationTypeP95 AggregationType = "p95"
	// AggregationTypeP99 is the 99th percentile.
	AggregationTypeP99 AggregationType = "p99"
)

// NodeMetricSpec is the collection policy the node agent follows when it fills the NodeMetric status. The
// manager renders it from the colocation-config key of the slo-controller-config ConfigMap.
type NodeMetricSpec struct {
	// CollectPolicy is the metric collection policy.
	// +optional
	CollectPolicy *NodeMetricCollectPolicy `json:"metricCollectPolicy,omitempty"`
}

// NodeMetricCollectPolicy says how usage is sampled, aggregated and reported.
type NodeMetricCollectPolicy struct {
	// AggregateDurationSeconds is the window, in seconds, that the reported usages average over.
	// Koordinator's default is 300.
	// +kubebuilder:validation:Minimum=1
	// +optional
	AggregateDurationSeconds *int64 `json:"aggregateDurationSeconds,omitempty"`
	// ReportIntervalSeconds is how often, in seconds, the node agent updates the status. Koordinator's default
	// is 60.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ReportIntervalSeconds *int64 `json:"reportIntervalSeconds,omitempty"`
	// NodeAggregatePolicy lists the windows for which aggregated (percentile) node usages are reported.
	// +optional
	NodeAggregatePolicy *AggregatePolicy `json:"nodeAggregatePolicy,omitempty"`
	// NodeMemoryCollectPolicy is how memory usage is counted. Defaults to usageWithoutPageCache.
	// +optional
	NodeMemoryCollectPolicy *NodeMemoryCollectPolicy `json:"nodeMemoryCollectPolicy,omitempty"`
}

// AggregatePolicy lists aggregation windows.
type AggregatePolicy struct {
	// Durations are the windows, e.g. "5m", "10m", "30m" (Koordinator's defaults).
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(d, duration(d) > duration('0s'))",message="every duration must be positive and readable by Go's time.ParseDuration"
	// +kubebuilder:validation:items:Type=string
	// +kubebuilder:validation:items:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	Durations []metav1.Duration `json:"durations,omitempty"`
}

// NodeMetricInfo is the usage of the node as a whole.
type NodeMetricInfo struct {
	// NodeUsage is the total usage of the node, averaged over the aggregate duration.
	// +optional
	NodeUsage ResourceMap `json:"nodeUsage,omitempty"`
	// AggregatedNodeUsages are statistics of the node usage per window; reported only once enough samples exist.
	// +optional
	AggregatedNodeUsages []AggregatedUsage `json:"aggregatedNodeUsages,omitempty"`
	// SystemUsage is the usage of system daemons and the kernel: NodeUsage minus the usage of all pods.
	// +optional
	SystemUsage ResourceMap `json:"systemUsage,omitempty"`
	// AggregatedSystemUsages are statistics of the system usage per window; reported only once enough samples
	// exist. Deleted pods are left out of the aggregation.
	// +optional
	AggregatedSystemUsages []AggregatedUsage `json:"aggregatedSystemUsages,omitempty"`
	// NUMAUsages is the usage per NUMA node.
	// +optional
	NUMAUsages []NUMAMetricInfo `json:"numaUsages,omitempty"`
}

// NUMAMetricInfo is the usage of one NUMA node.
type NUMAMetricInfo struct {
	// NUMANodeID is the ID of the NUMA node.
	NUMANodeID int32 `json:"numaNodeID"`
	// NodeUsage is the total usage on this NUMA node.
	// +optional
	NodeUsage ResourceMap `json:"nodeUsage,omitempty"`
	// SystemUsage is the usage of system daemons and the kernel on this NUMA node.
	// +optional
	SystemUsage ResourceMap `json:"systemUsage,omitempty"`
}

// AggregatedUsage holds usage statistics over one window.
type AggregatedUsage struct {
	// Usage maps a statistic (avg, p50, p90, p95, p99) to the usage it yields.
	// +optional
	Usage map[AggregationType]ResourceMap `json:"usage,omitempty"`
	// Duration is the window the statistics cover.
	// +optional
	Duration metav1.Duration `json:"duration,omitempty"`
}

// PodMetricInfo is the usage of one pod on the node.
type PodMetricInfo struct {
	// Name is the pod's name.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace is the pod's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// PodUsage is the pod's usage, averaged over the aggregate duration.
	// +optional
	PodUsage ResourceMap `json:"podUsage,omitempty"`
	// Priority is the pod's Koordinator priority class, e.g. koord-prod or koord-batch.
	// +optional
	Priority string `json:"priority,omitempty"`
	// QoS is the pod's Koordinator QoS class, e.g. LS or BE.
	// +optional
	QoS string `json:"qos,omitempty"`
	// Extensions holds third-party data about the pod.
	// +optional
	Extensions *ExtensionsMap `json:"extensions,omitempty"`
}

// HostApplicationMetricInfo is the usage of one out-of-band application (see HostApplicationSpec).
type HostApplicationMetricInfo struct {
	// Name is the application's name, as in NodeSLO.spec.hostApplications.
	// +optional
	Name string `json:"name,omitempty"`
	// Usage is the application's usage.
	// +optional
	Usage ResourceMap `json:"usage,omitempty"`
	// Priority is the application's Koordinator priority class.
	// +optional
	Priority string `json:"priority,omitempty"`
	// QoS is the application's Koordinator QoS class.
	// +optional
	QoS string `json:"qos,omitempty"`
}

// ReclaimableMetric is a predicted amount of resources that Prod workloads leave unused and that can be
// reclaimed for lower priorities.
type ReclaimableMetric struct {
	// Resource is the predicted reclaimable quantity.
	// +optional
	Resource ResourceMap `json:"resource,omitempty"`
}

// PeakMetric is a predicted peak usage.
type PeakMetric struct {
	// Resource is the predicted peak quantity.
	// +optional
	Resource ResourceMap `json:"resource,omitempty"`
}

// NodeMetricStatus is the usage the node agent last reported.
type NodeMetricStatus struct {
	// UpdateTime is when the node agent last updated this status.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`
	// NodeMetric is the usage of the node.
	// +optional
	NodeMetric *NodeMetricInfo `json:"nodeMetric,omitempty"`
	// PodsMetric is the usage of each pod on the node.
	// +optional
	PodsMetric []PodMetricInfo `json:"podsMetric,omitempty"`
	// HostApplicationMetric is the usage of each out-of-band application on the node.
	// +optional
	HostApplicationMetric []HostApplicationMetricInfo `json:"hostApplicationMetric,omitempty"`
	// ProdReclaimableMetric is the predicted amount of resources reclaimable from Prod pods.
	// +optional
	ProdReclaimableMetric *ReclaimableMetric `json:"prodReclaimableMetric,omitempty"`
	// ProdPeakMetric is the predicted peak usage of Prod pods.
	// +optional
	ProdPeakMetric *PeakMetric `json:"prodPeakMetric,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="UpdateTime",type=date,JSONPath=`.status.updateTime`,description="When the node agent last reported"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NodeMetric is the resource usage of one node and its pods, reported by the node agent. It is cluster-scoped
// and has the node's name.
type NodeMetric struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the collection policy.
	// +optional
	Spec NodeMetricSpec `json:"spec,omitempty"`
	// Status is the reported usage.
	// +optional
	Status NodeMetricStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NodeMetricList is a list of NodeMetric.
type NodeMetricList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the NodeMetrics.
	Items []NodeMetric `json:"items"`
}
