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

package config

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LowNodeLoadArgs are the arguments of LowNodeLoad, which moves pods from nodes whose usage (from NodeMetric)
// is above the high thresholds to nodes below the low thresholds.
type LowNodeLoadArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Paused stops the plugin. Default false.
	Paused *bool `json:"paused,omitempty"`
	// DryRun decides and logs without migrating. Default false.
	DryRun *bool `json:"dryRun,omitempty"`
	// NumberOfNodes is the number of cool nodes there must be beyond which the plugin acts. Default 0.
	NumberOfNodes *int32 `json:"numberOfNodes,omitempty"`
	// NodeMetricExpirationSeconds is the age past which a NodeMetric is not trusted; its node is left out.
	// Default 180.
	NodeMetricExpirationSeconds *int64 `json:"nodeMetricExpirationSeconds,omitempty"`
	// EvictableNamespaces limits the namespaces whose pods may be migrated (their usage counts anyway).
	EvictableNamespaces *Namespaces `json:"evictableNamespaces,omitempty"`
	// NodeSelector limits the nodes the plugin looks at.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
	// PodSelectors limit the pods that may be migrated: a pod must match one of them.
	PodSelectors []LowNodeLoadPodSelector `json:"podSelectors,omitempty"`
	// NodeFit migrates a pod only if some cool node fits it (affinity, taints, requests) and stays under its
	// high thresholds with the pod's usage added. Default true.
	NodeFit *bool `json:"nodeFit,omitempty"`
	// UseDeviationThresholds reads the thresholds as deviations from the mean usage of the pool's nodes:
	// low = mean − low, high = mean + high.
	UseDeviationThresholds *bool `json:"useDeviationThresholds,omitempty"`
	// HighThresholds are the usage percentages above which a node is hot.
	HighThresholds ResourceThresholds `json:"highThresholds,omitempty"`
	// LowThresholds are the usage percentages below which (all of them) a node is cool.
	LowThresholds ResourceThresholds `json:"lowThresholds,omitempty"`
	// ProdHighThresholds are the same for the usage of Prod pods alone.
	ProdHighThresholds ResourceThresholds `json:"prodHighThresholds,omitempty"`
	// ProdLowThresholds are the same for the usage of Prod pods alone.
	ProdLowThresholds ResourceThresholds `json:"prodLowThresholds,omitempty"`
	// ResourceWeights weigh resources when nodes and pods are ordered by usage. Default cpu 1, memory 1, and 1
	// for every resource with a threshold.
	ResourceWeights map[corev1.ResourceName]int64 `json:"resourceWeights,omitempty"`
	// AnomalyCondition is how many rounds in a row a node must be hot before pods move off it.
	AnomalyCondition *LoadAnomalyCondition `json:"anomalyCondition,omitempty"`
	// DetectorCacheTimeout is how long a node's hot/normal counter is kept without being looked at. Default 5m.
	DetectorCacheTimeout *metav1.Duration `json:"detectorCacheTimeout,omitempty"`
	// NodePools give groups of nodes their own thresholds. The arguments' own thresholds form a first pool
	// (DefaultNodePoolName); each pool works on the nodes it selects that no earlier pool found hot.
	NodePools []LowNodeLoadNodePool `json:"nodePools,omitempty"`
}

// LowNodeLoadNodePool is a group of nodes with its own thresholds; unset fields take the arguments' values.
type LowNodeLoadNodePool struct {
	// Name identifies the pool in logs and events.
	Name string `json:"name,omitempty"`
	// NodeSelector selects the pool's nodes; none selects every node.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
	// UseDeviationThresholds as in LowNodeLoadArgs.
	UseDeviationThresholds bool `json:"useDeviationThresholds,omitempty"`
	// HighThresholds as in LowNodeLoadArgs.
	HighThresholds ResourceThresholds `json:"highThresholds,omitempty"`
	// LowThresholds as in LowNodeLoadArgs.
	LowThresholds ResourceThresholds `json:"lowThresholds,omitempty"`
	// ProdHighThresholds as in LowNodeLoadArgs.
	ProdHighThresholds ResourceThresholds `json:"prodHighThresholds,omitempty"`
	// ProdLowThresholds as in LowNodeLoadArgs.
	ProdLowThresholds ResourceThresholds `json:"prodLowThresholds,omitempty"`
	// ResourceWeights as in LowNodeLoadArgs.
	ResourceWeights map[corev1.ResourceName]int64 `json:"resourceWeights,omitempty"`
	// AnomalyCondition as in LowNodeLoadArgs.
	AnomalyCondition *LoadAnomalyCondition `json:"anomalyCondition,omitempty"`
}

// LowNodeLoadPodSelector selects pods that may be migrated.
type LowNodeLoadPodSelector struct {
	// Name identifies the selector.
	Name string `json:"name,omitempty"`
	// Selector is a label query over pods.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// LoadAnomalyCondition says when a hot node counts as anomalous and when it is normal again.
type LoadAnomalyCondition struct {
	// Timeout is how long an anomalous state lasts without new evidence. Default 1m.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// ConsecutiveAbnormalities is the number of hot rounds in a row after which the node is anomalous.
	// Default 5.
	ConsecutiveAbnormalities uint32 `json:"consecutiveAbnormalities,omitempty"`
	// ConsecutiveNormalities is the number of normal rounds in a row after which it is normal again. Default 3.
	ConsecutiveNormalities uint32 `json:"consecutiveNormalities,omitempty"`
}
