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

// ElasticQuotaArgs configures the ElasticQuota plugin. Defaults are applied to the versioned type before
// conversion, so every field here holds its effective value.
type ElasticQuotaArgs struct {
	metav1.TypeMeta

	// DelayEvictTime is how long a quota must stay over its runtime quota before the revoke controller evicts
	// its pods.
	DelayEvictTime metav1.Duration
	// RevokePodInterval is how often the revoke controller checks the quotas.
	RevokePodInterval metav1.Duration
	// DefaultQuotaGroupMax is the max of koordinator-default-quota when no ElasticQuota object gives one.
	DefaultQuotaGroupMax corev1.ResourceList
	// SystemQuotaGroupMax is the max of koordinator-system-quota when no ElasticQuota object gives one.
	SystemQuotaGroupMax corev1.ResourceList
	// QuotaGroupNamespace is the namespace of the built-in quotas (root, system, default).
	QuotaGroupNamespace string
	// MonitorAllQuotas runs the revoke controller, which evicts pods of quotas that stay over their runtime
	// quota for DelayEvictTime.
	MonitorAllQuotas bool
	// EnableCheckParentQuota also checks every ancestor of a pod's quota at admission.
	EnableCheckParentQuota bool
	// EnableRuntimeQuota admits pods against the runtime quota; when false, against max.
	EnableRuntimeQuota bool
	// EnableMinQuotaScale scales the children's min down proportionally when their sum exceeds what their
	// parent has.
	EnableMinQuotaScale bool
	// DisableDefaultQuotaPreemption keeps pods of koordinator-default-quota from being preempted.
	DisableDefaultQuotaPreemption bool
	// EnableQueueHint makes the plugin's events requeue only the pods they may help; when false, every
	// registered event requeues every pod the plugin rejected.
	EnableQueueHint bool
	// QuotaSnapshotUpdateInterval is accepted for compatibility with Koordinator; Koord recomputes runtime
	// quotas when their inputs change and has no periodic snapshot.
	QuotaSnapshotUpdateInterval metav1.Duration
	// HookPlugins are Koordinator's quota hook plugins. Koord has none, so the list must be empty.
	HookPlugins []HookPluginConf
}

// HookPluginConf names a quota hook plugin and the factory that builds it.
type HookPluginConf struct {
	// Key identifies the hook plugin.
	Key string
	// FactoryKey names the factory of the hook plugin.
	FactoryKey string
	// FactoryArgs are the factory's arguments.
	FactoryArgs string
}
