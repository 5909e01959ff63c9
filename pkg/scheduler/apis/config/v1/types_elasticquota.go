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

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ElasticQuotaArgs configures the ElasticQuota plugin. See SetDefaults_ElasticQuotaArgs for the defaults.
type ElasticQuotaArgs struct {
	metav1.TypeMeta `json:",inline"`

	// DelayEvictTime is how long a quota must stay over its runtime quota before its pods are evicted.
	// Defaults to 120s.
	DelayEvictTime *metav1.Duration `json:"delayEvictTime,omitempty"`
	// RevokePodInterval is how often quotas are checked for over-use. Defaults to 1s.
	RevokePodInterval *metav1.Duration `json:"revokePodInterval,omitempty"`
	// DefaultQuotaGroupMax is the max of koordinator-default-quota. Defaults to MaxInt64/5 cpu and memory.
	DefaultQuotaGroupMax corev1.ResourceList `json:"defaultQuotaGroupMax,omitempty"`
	// SystemQuotaGroupMax is the max of koordinator-system-quota. Defaults to MaxInt64/5 cpu and memory.
	SystemQuotaGroupMax corev1.ResourceList `json:"systemQuotaGroupMax,omitempty"`
	// QuotaGroupNamespace is the namespace of the built-in quotas. Defaults to koordinator-system.
	QuotaGroupNamespace string `json:"quotaGroupNamespace,omitempty"`
	// MonitorAllQuotas evicts pods of quotas that stay over their runtime quota. Defaults to false.
	MonitorAllQuotas *bool `json:"monitorAllQuotas,omitempty"`
	// EnableCheckParentQuota also checks the ancestors of a pod's quota at admission. Defaults to false.
	EnableCheckParentQuota *bool `json:"enableCheckParentQuota,omitempty"`
	// EnableRuntimeQuota admits pods against the runtime quota rather than max. Defaults to true.
	EnableRuntimeQuota *bool `json:"enableRuntimeQuota,omitempty"`
	// EnableMinQuotaScale scales children's min down when their sum exceeds their parent's share. Defaults
	// to true.
	EnableMinQuotaScale *bool `json:"enableMinQuotaScale,omitempty"`
	// DisableDefaultQuotaPreemption keeps pods of koordinator-default-quota from being preempted. Defaults to
	// true.
	DisableDefaultQuotaPreemption *bool `json:"disableDefaultQuotaPreemption,omitempty"`
	// EnableQueueHint requeues rejected pods only on events that may help them. Defaults to false.
	EnableQueueHint *bool `json:"enableQueueHint,omitempty"`
	// QuotaSnapshotUpdateInterval is accepted for compatibility with Koordinator and not used. Defaults to
	// 120s.
	QuotaSnapshotUpdateInterval *metav1.Duration `json:"quotaSnapshotUpdateInterval,omitempty"`
	// HookPlugins are Koordinator's quota hook plugins; Koord has none, so the list must be empty.
	HookPlugins []HookPluginConf `json:"hookPlugins,omitempty"`
}

// HookPluginConf names a quota hook plugin and the factory that builds it.
type HookPluginConf struct {
	// Key identifies the hook plugin.
	Key string `json:"key"`
	// FactoryKey names the factory of the hook plugin.
	FactoryKey string `json:"factoryKey"`
	// FactoryArgs are the factory's arguments.
	FactoryArgs string `json:"factoryArgs,omitempty"`
}
