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

package extension

import corev1 "k8s.io/api/core/v1"

// Domain prefixes. Every prefix ends with a slash, so a key is the prefix
// followed by the name.
const (
	// DomainPrefix is the prefix of the general Koordinator keys and of
	// Koordinator device resources.
	DomainPrefix = "koordinator.sh/"
	// ResourceDomainPrefix is the prefix of the colocation extended resources
	// (batch and mid resources).
	ResourceDomainPrefix = corev1.ResourceDefaultNamespacePrefix
	// SchedulingDomainPrefix is the prefix of keys read or written by
	// koord-scheduler.
	SchedulingDomainPrefix = "scheduling.koordinator.sh/"
	// InternalSchedulingDomainPrefix is the prefix of keys koord-scheduler
	// keeps for itself; users must not set them.
	InternalSchedulingDomainPrefix = "internal.scheduling.koordinator.sh/"
	// NodeDomainPrefix is the prefix of node-level keys.
	NodeDomainPrefix = "node.koordinator.sh/"
	// PodDomainPrefix is the prefix of pod-level keys that control webhooks.
	PodDomainPrefix = "pod.koordinator.sh/"
	// QuotaDomainPrefix is the prefix of ElasticQuota keys.
	QuotaDomainPrefix = "quota.scheduling.koordinator.sh/"
	// GangDomainPrefix is the prefix of gang scheduling keys.
	GangDomainPrefix = "gang.scheduling.koordinator.sh/"
	// KubeletDomainPrefix is the prefix of keys describing the kubelet
	// configuration of a node.
	KubeletDomainPrefix = "kubelet.koordinator.sh/"
)

// Pod labels and annotations in the koordinator.sh domain.
const (
	// LabelPodQoS is the Koordinator QoS class of a pod (LSE, LSR, LS, BE or
	// SYSTEM).
	LabelPodQoS = DomainPrefix + "qosClass"
	// LabelPodPriority is the sub-priority of a pod inside its priority
	// class, an int32.
	LabelPodPriority = DomainPrefix + "priority"
	// LabelPodPriorityClass overrides the priority class derived from
	// spec.priority, so that running pods can be classified without being
	// recreated.
	LabelPodPriorityClass = DomainPrefix + "priority-class"
	// LabelPodEvictEnabled marks a pod that koord-descheduler may evict.
	LabelPodEvictEnabled = DomainPrefix + "eviction-enabled"
	// LabelCoreSchedGroupID is the core scheduling group of a pod: pods of
	// the same group may share SMT siblings.
	LabelCoreSchedGroupID = DomainPrefix + "core-sched-group-id"
	// LabelCoreSchedPolicy changes how the core scheduling group is chosen
	// ("", "none" or "exclusive").
	LabelCoreSchedPolicy = DomainPrefix + "core-sched-policy"

	// AnnotationPodEvictPolicy restricts the eviction policies that may be
	// used for a pod.
	AnnotationPodEvictPolicy = DomainPrefix + "eviction-policy"
	// AnnotationPodEvictionPriority is the pod eviction priority, an int32;
	// koordlet evicts pods with lower values first.
	AnnotationPodEvictionPriority = DomainPrefix + "eviction-priority"
	// AnnotationOOMScoreAdj is the default oom_score_adj of the processes of
	// a pod, in [-1000, 1000].
	AnnotationOOMScoreAdj = DomainPrefix + "oom-score-adj"
	// AnnotationOOMScoreAdjSpec is a JSON object mapping container names to
	// oom_score_adj values.
	AnnotationOOMScoreAdjSpec = DomainPrefix + "oom-score-adj-spec"
	// AnnotationPodCPUBurst is the pod CPU burst configuration (JSON).
	AnnotationPodCPUBurst = DomainPrefix + "cpuBurst"
	// AnnotationPodCPUQoS is the pod CPU QoS configuration (JSON).
	AnnotationPodCPUQoS = DomainPrefix + "cpuQOS"
	// AnnotationPodMemoryQoS is the pod memory QoS configuration (JSON,
	// {"policy": "default"|"none"|"auto", ...}).
	AnnotationPodMemoryQoS = DomainPrefix + "memoryQOS"
	// AnnotationPodBlkioQoS is the pod block I/O QoS configuration (JSON).
	AnnotationPodBlkioQoS = DomainPrefix + "blkioQOS"
	// AnnotationPodNetworkQoS is the pod network bandwidth configuration
	// (JSON).
	AnnotationPodNetworkQoS = DomainPrefix + "networkQOS"
)

// Pod labels and annotations in the pod.koordinator.sh domain.
const (
	// LabelPodMutatingUpdate asks the pod webhook to mutate the pod on
	// update as well as on create ("true").
	LabelPodMutatingUpdate = PodDomainPrefix + "mutating-update"
	// AnnotationPodReplaceResources lists resource names to replace or erase
	// in the pod spec before evaluation ("a:b,c:d,e:").
	AnnotationPodReplaceResources = PodDomainPrefix + "replace-resources"
)

// Pod labels and annotations of eviction and preemption in the
// scheduling.koordinator.sh domain.
const (
	// AnnotationEvictionCost is the cost of evicting a pod, an int32: among
	// pods of equal priority the cheapest is evicted first, and the maximum
	// int32 means never.
	AnnotationEvictionCost = SchedulingDomainPrefix + "eviction-cost"
	// AnnotationSoftEviction asks the descheduler to evict a pod at its own
	// pace (JSON {"timestamp", "deleteOptions", "initiator", "reason"}).
	AnnotationSoftEviction = SchedulingDomainPrefix + "soft-eviction"
	// LabelPodPreemptionPolicy overrides the preemption policy of a pod
	// ("Never" or "PreemptLowerPriority").
	LabelPodPreemptionPolicy = SchedulingDomainPrefix + "preemption-policy"
	// LabelDisablePreemptible ("true") on a pod keeps it from being a victim of job-level (gang)
	// preemption.
	LabelDisablePreemptible = SchedulingDomainPrefix + "disable-preemptible"
)

// AggregationType is a statistic over a window of resource usage samples.
type AggregationType string

// Aggregation types. Max is deliberately missing: it is too sensitive to
// outliers.
const (
	// AVG is the mean.
	AVG AggregationType = "avg"
	// P50 is the median.
	P50 AggregationType = "p50"
	// P90 is the 90th percentile.
	P90 AggregationType = "p90"
	// P95 is the 95th percentile.
	P95 AggregationType = "p95"
	// P99 is the 99th percentile.
	P99 AggregationType = "p99"
)

// Valid reports whether t is one of the known aggregation types.
func (t AggregationType) Valid() bool {
	switch t {
	case AVG, P50, P90, P95, P99:
		return true
	}
	return false
}

// AnnotationReservePod marks the in-memory pods koord-scheduler builds from Reservations; real pods must not
// carry it.
const AnnotationReservePod = SchedulingDomainPrefix + "reserve-pod"

// AnnotationSkipUpdateResources, set to "true" on a ClusterColocationProfile, keeps the cpu and memory of the
// pods the profile matches from being rewritten into batch or mid resources.
const AnnotationSkipUpdateResources = "config.koordinator.sh/skip-update-resources"

// LabelControllerManaged, set to "true" on a ClusterColocationProfile, has koord-manager's colocationprofile
// controller re-apply the profile to matching pods that are still pending and unbound.
const LabelControllerManaged = "config.koordinator.sh/controller-managed"

// AnnotationColocationProfiles is written by koord-manager's pod webhook on every pod it applied
// ClusterColocationProfiles to: their names, comma-separated, in the order they were applied, so that `koordctl
// explain pod` can say which profile gave a pod its QoS class, priority and batch resources. It is Koord's own
// key; Koordinator records nothing of the kind. Users should not set it.
const AnnotationColocationProfiles = "koord.dev/colocation-profiles"
