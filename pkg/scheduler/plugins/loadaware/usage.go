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

package loadaware

import (
	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// maxInlineResources is how many resources vectors can hold without allocating during Filter and Score.
const maxInlineResources = 8

// usageBase says which reported usage a node's estimated usage starts from.
type usageBase int

const (
	// latestUsage is the node's latest usage; the filter and the score use it unless told otherwise.
	latestUsage usageBase = iota
	// prodUsage is the usage of the node's koord-prod pods, plus the system usage when the args ask for it.
	prodUsage
	// aggregatedUsage is a statistic of the node's usage over a window, which the caller adds itself.
	aggregatedUsage
)

// addEstimatedUsage adds to used the estimated usage of node n, summarized by sum: the reported usage base,
// what the pods assigned to n add while their usage is not reported (see cache.Node.AssignedUsage; on
// prodUsage, the usage of the koord-prod pods, cache.Node.ProdUsage), and ps's estimate.
func (p *Plugin) addEstimatedUsage(used quantity.Vector, n *cache.Node, sum *nodeSummary, base usageBase, ps *podState) {
	view := sum.view
	switch base {
	case latestUsage:
		used.Add(sum.usage(len(used)))
	case prodUsage:
		used.Add(n.ProdUsage(view))
		if p.args.ProdUsageIncludeSys && view.SystemUsage != nil {
			used.Add(view.SystemUsage)
		}
	case aggregatedUsage:
		used.Add(n.AssignedUsage(view))
	}
	used.Add(ps.Estimate)
}

// allocatable returns the allocatable of resources on a node in the plugin's units, from the values the
// scheduler keeps per node.
func (p *Plugin) allocatable(nodeInfo fwk.NodeInfo, into quantity.Vector) {
	r := nodeInfo.GetAllocatable()
	for i, name := range p.resources {
		switch name {
		case corev1.ResourceCPU:
			into[i] = r.GetMilliCPU()
		case corev1.ResourceMemory:
			into[i] = r.GetMemory()
		case corev1.ResourceEphemeralStorage:
			into[i] = r.GetEphemeralStorage()
		case corev1.ResourcePods:
			into[i] = int64(r.GetAllowedPodNumber())
		default:
			into[i] = r.GetScalarResources()[name]
		}
	}
}

// vectors returns n zeroed vectors for the plugin's resources, backed by buf when they fit.
func (p *Plugin) vectors(buf *[2 * maxInlineResources]int64) (a, b quantity.Vector) {
	n := len(p.resources)
	if n <= maxInlineResources {
		return buf[:n:n], buf[n : 2*n : 2*n]
	}
	return make(quantity.Vector, n), make(quantity.Vector, n)
}
