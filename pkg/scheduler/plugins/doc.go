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

// Package plugins holds what every Koord scheduler plugin under it shares, so that each plugin package is only
// its rules:
//
//   - Factory turns a plugin constructor taking typed args into kube-scheduler's plugin factory: the args'
//     type is checked and the args are validated once, under pluginConfig[<name>].args. Options (WithClock,
//     WithMetrics, WithFeatures) are what every factory takes.
//   - Handlers and KubeInformers wire a plugin's informer handlers, with tombstones of deleted objects
//     unwrapped; crdinformers.Shared.Sync starts the shared informers of Koord's CRDs and waits for the
//     plugin's handlers.
//   - ObjectOf and PodOf get the object of an event; NodesOf the two nodes of a node event.
//   - NodeMetricEvents, ElasticQuotaEvents, PodGroupEvents, ReservationEvents, NodeResourceTopologyEvents and
//     DeviceEvents are the event resources of Koord's CRDs as kube-scheduler's queue names them.
//   - extension.IsReservePod (apis/extension) tells the Reservation plugin's reserve pods apart, for the plugins
//     that treat them differently.
//   - Feed is the one rule for queueing hints that feed a plugin's state; read its doc before writing a hint.
//   - Every runs a plugin's periodic work on the clock of its Options.
//   - Subpackage numahint lets plugins agree on the NUMA nodes a pod gets within a cycle (NodeNUMAResource
//     chooses, DeviceShare's devices must fit there).
//
// Each plugin package has the same layout: plugin.go (Name, the plugin type, its factory and the var _ block
// of the extension points it implements), informers.go (what it watches and how events reach its state),
// events.go (EventsToRegister and the queueing hints), one file per extension point or concern, a README,
// and its state in the subpackage cache.
package plugins
