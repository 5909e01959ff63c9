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

package deviceshare

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/util/quantity"
)

// PreScore returns Skip for pods that ask for no device.
func (p *Plugin) PreScore(_ context.Context, cs fwk.CycleState, _ *corev1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if getState(cs) == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score rates the node by the free resources of its healthy devices of the types the pod asks for, once one
// device's share of the request is placed (Koordinator's scoreNode), over the scoringStrategy's resources and
// weights: LeastAllocated gives 100 × the weighted share left free, MostAllocated 100 × the share used.
func (p *Plugin) Score(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	s := getState(cs)
	if s == nil {
		return 0, nil
	}
	n, ok := p.cache.Node(ni.Node().Name)
	if !ok {
		return 0, nil
	}
	u := p.cache.Usage(ni.Node().Name, pod.UID)
	total, free, need := quantity.Amounts{}, quantity.Amounts{}, quantity.Amounts{}
	for t, tr := range s.req.types {
		for i := range n.Devices[t] {
			d := &n.Devices[t][i]
			if !d.Healthy {
				continue
			}
			total.Add(d.Total)
			free.Add(freeOf(d, u.Used[t][d.Minor]))
		}
		if len(n.Devices[t]) > 0 {
			need.Add(needOn(t, tr.per, &n.Devices[t][0]))
		}
	}
	return p.rules.score(total, free, need), nil
}

// ScoreExtensions returns nil: scores are in [0, MaxScore].
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }
