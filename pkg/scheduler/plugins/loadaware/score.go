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
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Score prefers nodes whose estimated usage (see addEstimatedUsage) leaves most of their allocatable free:
// the weighted mean over resources of (allocatable - used) × 100 / allocatable, where a resource used beyond
// its allocatable, or without allocatable, scores 0, and the least free resource weighs
// dominantResourceWeight more. Nodes without a NodeMetric, without usage in it or with an expired one score
// 0. It returns Error only for a NodeInfo without a node.
//
// koord-prod pods are scored on the usage of koord-prod pods when scoreAccordingProdUsage is set; others on
// the aggregated statistic when aggregated.scoreAggregationType is set, else on the latest usage.
func (p *Plugin) Score(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	n := p.nodes.ForObject(node)
	if n == nil {
		return 0, nil
	}
	ps := p.podStateOf(ctx, cycle, pod)
	now := ps.now
	sum := p.summaryOf(ctx, n, node, nodeInfo, now)
	if sum == nil || !sum.hasUsage || sum.expired {
		return 0, nil
	}

	var buf [2 * maxInlineResources]int64
	used, _ := p.vectors(&buf)
	base := latestUsage
	switch a := p.args.Aggregated; {
	case p.args.ScoreAccordingProdUsage && ps.Prod:
		base = prodUsage
	case a != nil && a.ScoreAggregationType != "":
		if u, ok := sum.view.Aggregate(a.ScoreAggregationType, a.ScoreAggregatedDuration.Duration); ok {
			used.Add(u)
			base = aggregatedUsage
		}
	}
	p.addEstimatedUsage(used, n, sum, base, ps)
	allocatable := sum.allocatable(len(p.resources))
	return p.score(used, allocatable), nil
}

// score is the weighted score of used on a node with allocatable.
func (p *Plugin) score(used, allocatable quantity.Vector) int64 {
	if p.weightSum == 0 {
		return 0
	}
	var sum int64
	minScore := int64(fwk.MaxScore)
	for i, w := range p.weights {
		s := leastUsedScore(used[i], allocatable[i])
		sum += w * s
		// The dominant (least free) resource is taken over every resource the plugin tracks, weighted or
		// not, as Koordinator's.
		minScore = min(minScore, s)
	}
	sum += p.args.DominantResourceWeight * minScore
	return sum / p.weightSum
}

// leastUsedScore scores the free share of capacity in [0, MaxScore].
func leastUsedScore(used, capacity int64) int64 {
	if capacity <= 0 || used > capacity {
		return 0
	}
	return (capacity - used) * fwk.MaxScore / capacity
}

// ScoreExtensions returns nil: scores are in [0, MaxScore] already.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }
