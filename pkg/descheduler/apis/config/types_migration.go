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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MigrationControllerArgs are the arguments of MigrationController, which carries out PodMigrationJobs and
// decides which pods may be migrated at all.
type MigrationControllerArgs struct {
	metav1.TypeMeta `json:",inline"`

	// DryRun runs jobs through arbitration without reserving or evicting.
	DryRun bool `json:"dryRun,omitempty"`
	// MaxConcurrentReconciles is the number of jobs handled at once. Default 1.
	MaxConcurrentReconciles *int32 `json:"maxConcurrentReconciles,omitempty"`

	// EvictFailedBarePods allows migrating failed pods that no controller owns.
	EvictFailedBarePods bool `json:"evictFailedBarePods"`
	// EvictAllBarePods allows migrating pods that no controller owns.
	EvictAllBarePods bool `json:"evictAllBarePods"`
	// EvictLocalStoragePods allows migrating pods with emptyDir or hostPath volumes.
	EvictLocalStoragePods bool `json:"evictLocalStoragePods"`
	// EvictSystemCriticalPods allows migrating system-critical pods.
	EvictSystemCriticalPods bool `json:"evictSystemCriticalPods"`
	// IgnorePvcPods refuses to migrate pods with PersistentVolumeClaims.
	IgnorePvcPods bool `json:"ignorePvcPods"`
	// PriorityThreshold: pods at or above it are not migrated.
	PriorityThreshold *PriorityThreshold `json:"priorityThreshold,omitempty"`
	// LabelSelector: only pods it selects are migrated.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// Namespaces: only pods in these namespaces (or not in the excluded ones) are migrated.
	Namespaces *Namespaces `json:"namespaces,omitempty"`
	// NodeFit migrates a pod only if another node fits it.
	NodeFit bool `json:"nodeFit,omitempty"`
	// NodeSelector (a label selector string) restricts NodeFit to the nodes it selects.
	NodeSelector string `json:"nodeSelector,omitempty"`
	// SkipEvictionGates lists the filters and limits that do not apply.
	SkipEvictionGates []EvictionGate `json:"skipEvictionGates,omitempty"`

	// MaxMigratingGlobally bounds the jobs running in the cluster.
	MaxMigratingGlobally *int32 `json:"maxMigratingGlobally,omitempty"`
	// MaxMigratingPerNode bounds the jobs running for pods of one node. Default 2.
	MaxMigratingPerNode *int32 `json:"maxMigratingPerNode,omitempty"`
	// MaxMigratingPerNamespace bounds the jobs running for pods of one namespace.
	MaxMigratingPerNamespace *int32 `json:"maxMigratingPerNamespace,omitempty"`
	// MaxMigratingPerWorkload bounds the jobs running for pods of one workload, a number or a percentage of
	// its replicas. Unset: 10% for more than 10 replicas, 2 for 4 to 10, 1 below.
	MaxMigratingPerWorkload *intstr.IntOrString `json:"maxMigratingPerWorkload,omitempty"`
	// MaxUnavailablePerWorkload bounds the pods of one workload that are not ready or migrating, a number or
	// a percentage of its replicas. Unset: as MaxMigratingPerWorkload.
	MaxUnavailablePerWorkload *intstr.IntOrString `json:"maxUnavailablePerWorkload,omitempty"`
	// SkipCheckExpectedReplicas allows migrating pods of a workload whose replicas are not all there.
	SkipCheckExpectedReplicas *bool `json:"skipCheckExpectedReplicas,omitempty"`
	// ObjectLimiters bound the migrations per object kind within a time window. Default: one migration per
	// workload per 5 minutes.
	ObjectLimiters ObjectLimiterMap `json:"objectLimiters,omitempty"`

	// DefaultJobMode is the mode of jobs that set none: ReservationFirst (default) or EvictDirectly.
	DefaultJobMode string `json:"defaultJobMode,omitempty"`
	// DefaultJobTTL is the time a job that sets none may take before it fails. Default 5m.
	DefaultJobTTL *metav1.Duration `json:"defaultJobTTL,omitempty"`
	// SchedulerNames are the schedulers that understand Reservations; pods of other schedulers are evicted
	// directly. Default koord-scheduler.
	SchedulerNames []string `json:"schedulerNames,omitempty"`

	// EvictQPS is the rate of evictions, a number or a string. Default 10.
	EvictQPS *Float64OrString `json:"evictQPS,omitempty"`
	// EvictBurst is the burst of evictions. Default 1.
	EvictBurst *int32 `json:"evictBurst,omitempty"`
	// EvictionPolicy is how pods are evicted: Eviction (the eviction API, honouring PodDisruptionBudgets;
	// default), Delete, or SoftEviction (an annotation for the workload's own controller).
	EvictionPolicy string `json:"evictionPolicy,omitempty"`
	// DefaultDeleteOptions are the options of evictions and deletions.
	DefaultDeleteOptions *metav1.DeleteOptions `json:"defaultDeleteOptions,omitempty"`

	// ArbitrationArgs configure the arbitration of waiting jobs.
	ArbitrationArgs *ArbitrationArgs `json:"arbitrationArgs,omitempty"`
}

// EvictionGate names a filter or limit checked before a pod is migrated.
type EvictionGate string

// The eviction gates.
const (
	EvictionGateMaxUnavailablePerWorkload EvictionGate = "MaxUnavailablePerWorkload"
	EvictionGateMaxMigratingPerWorkload   EvictionGate = "MaxMigratingPerWorkload"
	EvictionGateMaxMigratingPerNode       EvictionGate = "MaxMigratingPerNode"
	EvictionGateMaxMigratingPerNamespace  EvictionGate = "MaxMigratingPerNamespace"
	EvictionGateMaxMigratingGlobally      EvictionGate = "MaxMigratingGlobally"
	EvictionGateExpectedReplicas          EvictionGate = "ExpectedReplicas"
	EvictionGatePVC                       EvictionGate = "PVC"
	EvictionGateBarePods                  EvictionGate = "BarePods"
	EvictionGateLocalStorage              EvictionGate = "LocalStorage"
	EvictionGateSystemCritical            EvictionGate = "SystemCritical"
	EvictionGatePriorityThreshold         EvictionGate = "PriorityThreshold"
	EvictionGateLabelSelector             EvictionGate = "LabelSelector"
	EvictionGateNamespaces                EvictionGate = "Namespaces"
	EvictionGateNodeFit                   EvictionGate = "NodeFit"
)

// EvictionGates are all the gates, in the order they are checked.
var EvictionGates = []EvictionGate{
	EvictionGateNamespaces, EvictionGateLabelSelector, EvictionGatePriorityThreshold, EvictionGateSystemCritical,
	EvictionGateBarePods, EvictionGateLocalStorage, EvictionGatePVC, EvictionGateNodeFit,
	EvictionGateMaxMigratingGlobally, EvictionGateMaxMigratingPerNode, EvictionGateMaxMigratingPerNamespace,
	EvictionGateMaxMigratingPerWorkload, EvictionGateMaxUnavailablePerWorkload, EvictionGateExpectedReplicas,
}

// The eviction policies.
const (
	EvictionPolicyEviction     = "Eviction"
	EvictionPolicyDelete       = "Delete"
	EvictionPolicySoftEviction = "SoftEviction"
)

// MigrationLimitObjectType is a kind of object a limiter counts migrations of.
type MigrationLimitObjectType string

// MigrationLimitObjectWorkload counts migrations per workload (the pods' controller).
const MigrationLimitObjectWorkload MigrationLimitObjectType = "workload"

// ObjectLimiterMap holds a limiter per object kind.
type ObjectLimiterMap map[MigrationLimitObjectType]MigrationObjectLimiter

// MigrationObjectLimiter bounds the migrations of one object within a time window.
type MigrationObjectLimiter struct {
	// Duration is the window.
	Duration metav1.Duration `json:"duration,omitempty"`
	// MaxMigrating is the number of migrations allowed in the window, a number or a percentage of the
	// workload's replicas. Unset: as MaxMigratingPerWorkload.
	MaxMigrating *intstr.IntOrString `json:"maxMigrating,omitempty"`
	// Burst is accepted for compatibility; the window allows MaxMigrating at once.
	Burst int `json:"burst,omitempty"`
}

// ArbitrationArgs configure the arbitration of waiting jobs.
type ArbitrationArgs struct {
	// Enabled turns arbitration on: jobs wait until arbitration lets them run, most important first.
	Enabled bool `json:"enabled,omitempty"`
	// Interval is the time between arbitration rounds. Default 500ms.
	Interval *metav1.Duration `json:"interval,omitempty"`
}
