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
	"k8s.io/apimachinery/pkg/runtime"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
)

// DefaultProfileName is the name of the profile of a configuration that names none.
const DefaultProfileName = "koord-descheduler"

// DefaultPort is the port of the health and metrics endpoints when the configuration sets none.
const DefaultPort = 10251

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// DeschedulerConfiguration configures koord-descheduler.
type DeschedulerConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// LeaderElection configures the election of the one replica that deschedules.
	LeaderElection componentbaseconfigv1alpha1.LeaderElectionConfiguration `json:"leaderElection"`
	// ClientConnection configures the connection to the apiserver.
	ClientConnection componentbaseconfigv1alpha1.ClientConnectionConfiguration `json:"clientConnection"`
	// DebuggingConfiguration enables profiling endpoints.
	componentbaseconfigv1alpha1.DebuggingConfiguration `json:",inline"`

	// HealthzBindAddress is the address the health endpoints listen on.
	HealthzBindAddress *string `json:"healthzBindAddress,omitempty"`
	// MetricsBindAddress is the address the metrics endpoint listens on.
	MetricsBindAddress *string `json:"metricsBindAddress,omitempty"`

	// DeschedulingInterval is the time between two descheduling rounds. 0 runs one round and stops.
	DeschedulingInterval metav1.Duration `json:"deschedulingInterval,omitempty"`
	// DryRun makes every plugin decide without migrating any pod.
	DryRun bool `json:"dryRun,omitempty"`

	// Profiles are the descheduling profiles; every profile runs each round.
	Profiles []DeschedulerProfile `json:"profiles,omitempty"`

	// NodeSelector restricts descheduling to the nodes it selects.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
	// MaxNoOfPodsToEvictPerNode bounds the pods a round may migrate from one node.
	MaxNoOfPodsToEvictPerNode *uint `json:"maxNoOfPodsToEvictPerNode,omitempty"`
	// MaxNoOfPodsToEvictPerNamespace bounds the pods a round may migrate from one namespace.
	MaxNoOfPodsToEvictPerNamespace *uint `json:"maxNoOfPodsToEvictPerNamespace,omitempty"`
	// MaxNoOfPodsToEvictTotal bounds the pods a round may migrate.
	MaxNoOfPodsToEvictTotal *uint `json:"maxNoOfPodsToEvictTotal,omitempty"`
}

// DeschedulerProfile is one set of plugins and their arguments.
type DeschedulerProfile struct {
	// Name identifies the profile in logs, events and metrics.
	Name string `json:"name,omitempty"`
	// PluginConfig holds the arguments of the profile's plugins.
	PluginConfig []PluginConfig `json:"pluginConfig,omitempty"`
	// Plugins are enabled and disabled per extension point, merged over the defaults.
	Plugins *Plugins `json:"plugins,omitempty"`
	// NodeSelector restricts the profile to the nodes it selects.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
}

// Plugins lists the plugins of a profile per extension point.
type Plugins struct {
	// Deschedule plugins pick pods to migrate node by node.
	Deschedule PluginSet `json:"deschedule,omitempty"`
	// Balance plugins pick pods to migrate looking at all nodes together (LowNodeLoad).
	Balance PluginSet `json:"balance,omitempty"`
	// Evict plugins carry out migrations (MigrationController).
	Evict PluginSet `json:"evict,omitempty"`
	// Filter plugins decide whether a pod may be migrated at all (MigrationController).
	Filter PluginSet `json:"filter,omitempty"`
}

// PluginSet enables and disables plugins at one extension point. Disabling "*" drops every default.
type PluginSet struct {
	// Enabled are added after the defaults that are not disabled.
	Enabled []Plugin `json:"enabled,omitempty"`
	// Disabled are removed from the defaults.
	Disabled []Plugin `json:"disabled,omitempty"`
}

// Plugin names a plugin.
type Plugin struct {
	// Name is the plugin's name.
	Name string `json:"name,omitempty"`
}

// PluginConfig holds the arguments of one plugin.
type PluginConfig struct {
	// Name is the plugin's name.
	Name string `json:"name"`
	// Args are the plugin's arguments; Load decodes them into the plugin's Args kind.
	Args runtime.RawExtension `json:"args,omitempty"`
}

// PriorityThreshold is a pod priority, by value or by PriorityClass name; pods at or above it are not migrated.
type PriorityThreshold struct {
	// Value is the priority.
	Value *int32 `json:"value,omitempty"`
	// Name is the name of a PriorityClass whose value is the priority.
	Name string `json:"name,omitempty"`
}

// Namespaces includes or excludes namespaces; at most one of the two lists may be set.
type Namespaces struct {
	// Include lists the only namespaces that count.
	Include []string `json:"include,omitempty"`
	// Exclude lists namespaces that do not count.
	Exclude []string `json:"exclude,omitempty"`
}

// Percentage is a percentage, 0 to 100.
type Percentage float64

// ResourceThresholds are percentages of a node's allocatable per resource.
type ResourceThresholds map[corev1.ResourceName]Percentage
