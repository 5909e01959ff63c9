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

package scheduler

// The permissions koord-scheduler needs beyond kube-scheduler's, and only those. `make generate` turns these
// markers into config/rbac/koord-scheduler/role.yaml. koord-scheduler's service account is bound to that role
// and to kube-scheduler's built-in ClusterRoles system:kube-scheduler and system:volume-scheduler.

// LoadAwareScheduling reads NodeMetrics, and so does kube-scheduler itself, to deliver their events to the
// plugin's queueing hints.
// +kubebuilder:rbac:groups=slo.koordinator.sh,resources=nodemetrics,verbs=get;list;watch

// Leader election on the koord-scheduler Lease in koordinator-system (system:kube-scheduler allows only the
// kube-scheduler Lease).
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=create;get;update,namespace=koordinator-system

// ElasticQuota reads quotas (as does kube-scheduler, for the plugin's events), creates the built-in root,
// system and default quotas when missing, writes their status and runtime annotations, and evicts the pods of
// quotas that use more than their runtime quota for too long. Preemption's verbs (pods delete, pods/status
// patch) are kube-scheduler's own.
// +kubebuilder:rbac:groups=scheduling.sigs.k8s.io,resources=elasticquotas,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=scheduling.sigs.k8s.io,resources=elasticquotas/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create

// Coscheduling reads PodGroups (as does kube-scheduler, for the plugin's events), writes their status, and
// marks the pods of a gang that timed out (an annotation; kube-scheduler's role may only patch pod status).
// +kubebuilder:rbac:groups=scheduling.sigs.k8s.io,resources=podgroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.sigs.k8s.io,resources=podgroups/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=patch
// With awareNetworkTopology it reads ClusterNetworkTopologies and writes the status of the one named default.
// +kubebuilder:rbac:groups=scheduling.koordinator.sh,resources=clusternetworktopologies,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.koordinator.sh,resources=clusternetworktopologies/status,verbs=update

// NodeNUMAResource reads the nodes' NodeResourceTopologies (koordlet writes them) and writes the pods'
// resource-status annotation (a pod patch, above), and that of Reservations that hold CPUs.
// +kubebuilder:rbac:groups=topology.node.k8s.io,resources=noderesourcetopologies,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.koordinator.sh,resources=reservations,verbs=patch

// DeviceShare reads the nodes' Devices (koordlet writes them) and writes the pods' device-allocated annotation
// (a pod patch, above).
// +kubebuilder:rbac:groups=scheduling.koordinator.sh,resources=devices,verbs=get;list;watch

// Reservation places Reservations through reserve pods it creates (and deletes once placed; their annotation
// records the allocation), writes Reservations' status, and deletes those past their GC time.
// +kubebuilder:rbac:groups=scheduling.koordinator.sh,resources=reservations,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=scheduling.koordinator.sh,resources=reservations/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=create;patch
