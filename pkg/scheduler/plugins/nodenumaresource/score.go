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
	"github.com/koord-dev/koord/pkg/scheduler/plugins/numahint"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// PreScore returns Skip for pods the plugin has nothing to give.
func (p *Plugin) PreScore(_ context.Context, cs fwk.CycleState, _ *corev1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if getState(cs) == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score rates the node by the free resources of its NUMA nodes once the pod is placed (of the NUMA nodes the
// pod is given, for a pod with a NUMA topology policy, as Koordinator scores it), over the resources and
// weights of the args' scoringStrategy: LeastAllocated gives 100 × the weighted share left free, MostAllocated
// 100 × the share used. Nodes where the pod needs nothing of the plugin score 0.
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
	if !ok || len(n.Zones) == 0 {
		return 0, nil
	}
	u := p.cache.Usage(node.Name, n, pod.UID)
	total, used := quantity.Amounts{}, quantity.Amounts{}
	for id, z := range n.Zones {
		if len(alloc.numa) > 0 && alloc.numa[id] == nil {
			continue
		}
		total.Add(z)
		used.Add(u.NUMA[id])
		used.Add(alloc.numa[id])
	}
	if len(alloc.numa) == 0 {
		used[corev1.ResourceCPU] += int64(alloc.cpus.Size()) * 1000
	}
	var sum, weights int64
	for _, r := range p.args.ScoringStrategy.Resources {
		name := corev1.ResourceName(r.Name)
		t := total[name]
		if t <= 0 {
			continue
		}
		share := min(max(used[name], 0), t) * fwk.MaxScore / t
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

// ScoreExtensions returns nil: scores are in [0, MaxScore].
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }
