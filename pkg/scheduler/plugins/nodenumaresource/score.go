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

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/numahint"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation"
)

// PreScore returns Skip for pods the plugin has nothing to give.
func (p *Plugin) PreScore(_ context.Context, cs fwk.CycleState, _ *corev1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if getState(cs) == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score rates the node with the pod placed, over the resources and weights of the args' scoringStrategy:
// LeastAllocated gives 100 × the weighted share left free, MostAllocated 100 × the share used. As Koordinator
// scores it:
//   - a pod given resources on NUMA nodes (a NUMA topology policy) is rated on those NUMA nodes: their
//     allocatable against what the pods there hold (their NUMA resources) and the pod's share;
//   - any other pod on the whole node: its allocatable against the requests of its pods and the pod's, with the
//     CPUs bound to pods counted in place of their cpu requests when the pod binds CPUs.
//
// Nodes where the pod needs nothing of the plugin, or that cannot give it what it needs, score 0.
func (p *Plugin) Score(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	s := getState(cs)
	if s == nil {
		return 0, nil
	}
	node := ni.Node()
	alloc, err := p.allocationOn(pod, s.req, node, reservation.Matched(cs, ni), numahint.Get(cs))
	if err != nil || alloc == nil {
		return 0, nil
	}
	n, ok := p.cache.Node(node.Name)
	if !ok {
		return 0, nil
	}
	u := p.cache.Usage(node.Name, n, pod.UID)
	var sum, weights int64
	for _, r := range p.args.ScoringStrategy.Resources {
		name := corev1.ResourceName(r.Name)
		var total, used int64
		if len(alloc.numa) > 0 {
			total, used = onNUMANodes(n, u, alloc, name)
		} else {
			total, used = onNode(ni, u, alloc, s.req, name)
		}
		if total <= 0 {
			continue
		}
		share := min(max(used, 0), total) * fwk.MaxScore / total
		if p.args.ScoringStrategy.Type == config.LeastAllocated {
			share = fwk.MaxScore - share
		}
		sum += share * r.Weight
		weights += r.Weight
	}
	if weights == 0 {
		return 0, nil
	}
	return sum / weights, nil
}

// onNUMANodes returns the allocatable of resource name on the NUMA nodes alloc holds resources on, and what
// the pods there hold of it with alloc.
func onNUMANodes(n *cache.Node, u cache.Usage, alloc *allocation, name corev1.ResourceName) (total, used int64) {
	for id, amounts := range alloc.numa {
		total += n.Zones[id][name]
		used += u.NUMA[id][name] + amounts[name]
	}
	return total, used
}

// onNode returns the node's allocatable of resource name, and the requests of its pods and req's; when the pod
// binds CPUs, the CPUs bound to pods (alloc's too) stand for the cpu requests.
func onNode(ni fwk.NodeInfo, u cache.Usage, alloc *allocation, req *request, name corev1.ResourceName) (total, used int64) {
	allocatable, requested := ni.GetAllocatable(), ni.GetRequested()
	switch name {
	case corev1.ResourceCPU:
		if !alloc.cpus.IsEmpty() {
			return allocatable.GetMilliCPU(), int64(u.CPUs.Size()+alloc.cpus.Size()) * 1000
		}
		return allocatable.GetMilliCPU(), requested.GetMilliCPU() + req.amounts[name]
	case corev1.ResourceMemory:
		return allocatable.GetMemory(), requested.GetMemory() + req.amounts[name]
	case corev1.ResourceEphemeralStorage:
		return allocatable.GetEphemeralStorage(), requested.GetEphemeralStorage()
	default:
		// The plugin reads no other request of the pod: as Koordinator skips the extended resources a pod does
		// not request, the resource is left out.
		return 0, 0
	}
}

// ScoreExtensions returns nil: scores are in [0, MaxScore].
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }
