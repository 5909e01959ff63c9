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

package configuration

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// Where the SLO configuration lives and the keys it has.
const (
	// ConfigNamespace is the namespace of the SLO ConfigMap.
	ConfigNamespace = "koordinator-system"
	// SLOCtrlConfigMap is the name of the SLO ConfigMap.
	SLOCtrlConfigMap = "slo-controller-config"

	// ColocationConfigKey holds a ColocationCfg.
	ColocationConfigKey = "colocation-config"
	// ResourceThresholdConfigKey holds a ResourceThresholdCfg.
	ResourceThresholdConfigKey = "resource-threshold-config"
	// ResourceQOSConfigKey holds a ResourceQOSCfg.
	ResourceQOSConfigKey = "resource-qos-config"
	// CPUBurstConfigKey holds a CPUBurstCfg.
	CPUBurstConfigKey = "cpu-burst-config"
	// SystemConfigKey holds a SystemCfg.
	SystemConfigKey = "system-config"
	// HostApplicationConfigKey holds a HostApplicationCfg.
	HostApplicationConfigKey = "host-application-config"
)

// NodeCfgProfile selects the nodes a node strategy applies to.
type NodeCfgProfile struct {
	// Name identifies the node strategy, e.g. in messages about it.
	// +optional
	Name string `json:"name,omitempty"`
	// NodeSelector selects nodes by label. An empty selector matches every node; a nil one matches none.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
}

// ColocationCfg is the value of colocation-config: the cluster strategy inline, plus node strategies.
type ColocationCfg struct {
	ColocationStrategy `json:",inline"`
	// NodeConfigs override the cluster strategy on the nodes they select; the first match wins.
	// +optional
	NodeConfigs []NodeColocationCfg `json:"nodeConfigs,omitempty"`
}

// NodeColocationCfg is a colocation strategy for the nodes its profile selects. Set fields override the
// cluster strategy.
type NodeColocationCfg struct {
	NodeCfgProfile     `json:",inline"`
	ColocationStrategy `json:",inline"`
}

// CalculatePolicy is how the resources of high-priority pods are counted when reclaiming resources for
// batch pods.
type CalculatePolicy string

const (
	// CalculateByPodUsage counts the usage of high-priority pods: batch pods reclaim requested but unused
	// resources. It is the default.
	CalculateByPodUsage CalculatePolicy = "usage"
	// CalculateByPodRequest counts the requests of high-priority pods: batch pods only get unallocated
	// resources. Memory only.
	CalculateByPodRequest CalculatePolicy = "request"
	// CalculateByPodMaxUsageRequest counts max(usage, request) of each high-priority pod: batch pods get
	// resources that are both unallocated and unused.
	CalculateByPodMaxUsageRequest CalculatePolicy = "maxUsageRequest"
)

// MidReclaimMode is how mid resources are computed.
type MidReclaimMode string

const (
	// MidReclaimModeStatic reserves a static share of the node for mid resources.
	MidReclaimModeStatic MidReclaimMode = "static"
)

// ColocationStrategy is how a node offers batch and mid resources and reports its metrics. Unset fields take
// the cluster strategy's value, then the defaults (DefaultColocationStrategy).
type ColocationStrategy struct {
	// Enable turns colocation on: batch and mid resources are computed and written to the node. When off they
	// are removed. Default false.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// MetricAggregateDurationSeconds is the window the node agent averages usage over. Default 300.
	// +optional
	MetricAggregateDurationSeconds *int64 `json:"metricAggregateDurationSeconds,omitempty"`
	// MetricReportIntervalSeconds is how often the node agent reports NodeMetric. Default 60.
	// +optional
	MetricReportIntervalSeconds *int64 `json:"metricReportIntervalSeconds,omitempty"`
	// MetricAggregatePolicy lists the windows of the percentile usages. Default 5m, 10m, 30m.
	// +optional
	MetricAggregatePolicy *slov1alpha1.AggregatePolicy `json:"metricAggregatePolicy,omitempty"`
	// MetricMemoryCollectPolicy is how memory usage is counted. Default usageWithoutPageCache.
	// +optional
	MetricMemoryCollectPolicy *slov1alpha1.NodeMemoryCollectPolicy `json:"metricMemoryCollectPolicy,omitempty"`

	// CPUReclaimThresholdPercent is the share of node CPU that may be used by high-priority pods, the system and
	// batch pods together; the rest is the safety margin. Default 60.
	// +optional
	CPUReclaimThresholdPercent *int64 `json:"cpuReclaimThresholdPercent,omitempty"`
	// CPUCalculatePolicy is usage (default) or maxUsageRequest.
	// +optional
	CPUCalculatePolicy *CalculatePolicy `json:"cpuCalculatePolicy,omitempty"`
	// MemoryReclaimThresholdPercent is the memory counterpart of CPUReclaimThresholdPercent. Default 65.
	// +optional
	MemoryReclaimThresholdPercent *int64 `json:"memoryReclaimThresholdPercent,omitempty"`
	// MemoryCalculatePolicy is usage (default), request or maxUsageRequest.
	// +optional
	MemoryCalculatePolicy *CalculatePolicy `json:"memoryCalculatePolicy,omitempty"`
	// DegradeTimeMinutes: when the node's NodeMetric is missing or older than this, its batch and mid resources
	// are removed. Default 15.
	// +optional
	DegradeTimeMinutes *int64 `json:"degradeTimeMinutes,omitempty"`
	// UpdateTimeThresholdSeconds: the node is updated at least this often while a result differs. Default 300.
	// +optional
	UpdateTimeThresholdSeconds *int64 `json:"updateTimeThresholdSeconds,omitempty"`
	// ResourceDiffThreshold: a result that differs from the node's current value by more than this fraction
	// is written at once. In (0, 1]. Default 0.1.
	// +optional
	ResourceDiffThreshold *float64 `json:"resourceDiffThreshold,omitempty"`

	// MidReclaimMode is "static" for a static share, else mid resources follow the predicted reclaimable
	// resources of prod pods.
	// +optional
	MidReclaimMode *MidReclaimMode `json:"midReclaimMode,omitempty"`
	// MidCPUThresholdPercent caps mid-cpu at this share of the node. Default 100.
	// +optional
	MidCPUThresholdPercent *int64 `json:"midCPUThresholdPercent,omitempty"`
	// MidMemoryThresholdPercent caps mid-memory at this share of the node. Default 100.
	// +optional
	MidMemoryThresholdPercent *int64 `json:"midMemoryThresholdPercent,omitempty"`
	// MidUnallocatedPercent is the share of unallocated resources added to mid resources. Default 0.
	// +optional
	MidUnallocatedPercent *int64 `json:"midUnallocatedPercent,omitempty"`
	// MidStaticCPUReservedPercent is the share of node CPU offered as mid-cpu in static mode. Default 0.
	// +optional
	MidStaticCPUReservedPercent *int64 `json:"midStaticCPUReservedPercent,omitempty"`
	// MidStaticMemoryReservedPercent is the share of node memory offered as mid-memory in static mode.
	// Default 0.
	// +optional
	MidStaticMemoryReservedPercent *int64 `json:"midStaticMemoryReservedPercent,omitempty"`

	// BatchCPUThresholdPercent, when set, caps batch-cpu at this share of node capacity.
	// +optional
	BatchCPUThresholdPercent *int64 `json:"batchCPUThresholdPercent,omitempty"`
	// BatchMemoryThresholdPercent, when set, caps batch-memory at this share of node capacity.
	// +optional
	BatchMemoryThresholdPercent *int64 `json:"batchMemoryThresholdPercent,omitempty"`

	// Extensions holds third-party colocation settings by name, as Koordinator's ColocationStrategyExtender
	// does. Koord passes them through unread.
	// +optional
	Extensions *slov1alpha1.ExtensionsMap `json:"extensions,omitempty"`
}

// ResourceThresholdCfg is the value of resource-threshold-config: when the node agent suppresses and evicts
// BE pods.
type ResourceThresholdCfg struct {
	// +optional
	ClusterStrategy *slov1alpha1.ResourceThresholdStrategy `json:"clusterStrategy,omitempty"`
	// +optional
	NodeStrategies []NodeResourceThresholdStrategy `json:"nodeStrategies,omitempty"`
}

// NodeResourceThresholdStrategy is a resource threshold strategy for the nodes its profile selects.
type NodeResourceThresholdStrategy struct {
	NodeCfgProfile                         `json:",inline"`
	*slov1alpha1.ResourceThresholdStrategy `json:",inline"`
}

// ResourceQOSCfg is the value of resource-qos-config: cgroup QoS per class.
type ResourceQOSCfg struct {
	// +optional
	ClusterStrategy *slov1alpha1.ResourceQOSStrategy `json:"clusterStrategy,omitempty"`
	// +optional
	NodeStrategies []NodeResourceQOSStrategy `json:"nodeStrategies,omitempty"`
}

// NodeResourceQOSStrategy is a resource QoS strategy for the nodes its profile selects.
type NodeResourceQOSStrategy struct {
	NodeCfgProfile                   `json:",inline"`
	*slov1alpha1.ResourceQOSStrategy `json:",inline"`
}

// CPUBurstCfg is the value of cpu-burst-config.
type CPUBurstCfg struct {
	// +optional
	ClusterStrategy *slov1alpha1.CPUBurstStrategy `json:"clusterStrategy,omitempty"`
	// +optional
	NodeStrategies []NodeCPUBurstCfg `json:"nodeStrategies,omitempty"`
}

// NodeCPUBurstCfg is a CPU burst strategy for the nodes its profile selects.
type NodeCPUBurstCfg struct {
	NodeCfgProfile                `json:",inline"`
	*slov1alpha1.CPUBurstStrategy `json:",inline"`
}

// SystemCfg is the value of system-config: node-wide kernel settings.
type SystemCfg struct {
	// +optional
	ClusterStrategy *slov1alpha1.SystemStrategy `json:"clusterStrategy,omitempty"`
	// +optional
	NodeStrategies []NodeSystemStrategy `json:"nodeStrategies,omitempty"`
}

// NodeSystemStrategy is a system strategy for the nodes its profile selects.
type NodeSystemStrategy struct {
	NodeCfgProfile              `json:",inline"`
	*slov1alpha1.SystemStrategy `json:",inline"`
}

// HostApplicationCfg is the value of host-application-config: applications outside Kubernetes that the node
// agent accounts for.
type HostApplicationCfg struct {
	// +optional
	Applications []slov1alpha1.HostApplicationSpec `json:"applications,omitempty"`
	// +optional
	NodeConfigs []NodeHostApplicationCfg `json:"nodeConfigs,omitempty"`
}

// NodeHostApplicationCfg lists the host applications of the nodes its profile selects.
type NodeHostApplicationCfg struct {
	NodeCfgProfile `json:",inline"`
	// +optional
	Applications []slov1alpha1.HostApplicationSpec `json:"applications,omitempty"`
}
