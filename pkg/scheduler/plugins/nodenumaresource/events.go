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

package nodenumaresource

import (
	"context"

	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// EventsToRegister returns the events after which a pod this plugin rejected may fit: a NodeResourceTopology
// added or changed (koordlet reported a node's topology or pools), an assigned pod deleted (it frees its CPUs),
// a node added or its labels changed (bind and NUMA policies), a Reservation changed (its CPUs held or let go).
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: plugins.NodeResourceTopologyEvents, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: plugins.ReservationEvents, ActionType: fwk.Add | fwk.Update | fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}},
	}, nil
}
