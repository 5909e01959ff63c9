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
	"time"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/estimator"
)

// nodeSummary is what Filter and Score need of one node, derived from one version of its state (NodeMetric
// and assigned pods, named by stamp) and of its node object, in one allocation.
//
// kube-scheduler calls Filter and Score for hundreds of nodes per pod, and comes back to a node only after
// the other plugins, the other nodes and the informers have moved its state out of the CPU's caches: there,
// the cost of a node is the number of places in memory its state is spread over. The summary brings the
// common path (latest usage, thresholds, allocatable) down to the node's entry and the summary itself.
type nodeSummary struct {
	// The fields Filter and Score read for every node come first, so that they share as few cache lines as
	// possible; times are Unix nanoseconds for the same reason.

	// object is the node object the thresholds and allocatable come from.
	object *corev1.Node
	// stamp names the NodeMetric and assigned pods the usage comes from.
	stamp cache.Stamp
	// validUntil is when the assigned pods' estimate changes with time alone; 0 for never.
	validUntil int64
	// expiresAt is when the NodeMetric expires; 0 when it was never updated.
	expiresAt int64
	// thresholds are the node's thresholds.
	thresholds *thresholdProfile
	// hasUsage says whether the NodeMetric reports node usage.
	hasUsage bool
	// values holds the latest usage (the node's plus what the assigned pods add), then the node's allocatable,
	// by resource index, when they fit; else big does.
	values [2 * maxSummaryResources]int64
	big    []int64

	// thresholdsKey is the usage-thresholds annotation the thresholds come from, when hasAnnotation.
	thresholdsKey string
	hasAnnotation bool
}

// maxSummaryResources is how many resources a summary holds in itself: cpu, memory and two more.
const maxSummaryResources = 4

// newNodeSummary returns an empty summary for n resources.
func newNodeSummary(n int) *nodeSummary {
	s := &nodeSummary{}
	if n > maxSummaryResources {
		s.big = make([]int64, 2*n)
	}
	return s
}

// usage returns the node's latest usage plus what the assigned pods add, for n resources.
func (s *nodeSummary) usage(n int) estimator.Vector {
	if s.big != nil {
		return s.big[:n:n]
	}
	return s.values[:n:n]
}

// allocatable returns the node's allocatable, for n resources.
func (s *nodeSummary) allocatable(n int) estimator.Vector {
	if s.big != nil {
		return s.big[n : 2*n : 2*n]
	}
	return s.values[n : 2*n : 2*n]
}

// view returns the NodeMetric view the summary was derived from.
func (s *nodeSummary) view() *cache.NodeMetricView { return s.stamp.View() }

// expired reports whether the NodeMetric is expired (or was never updated) at now.
func (s *nodeSummary) expired(now time.Time) bool { return now.UnixNano() >= s.expiresAt }

// summaryOf returns the summary of node n, whose object is node, valid at now: the last one when nothing it
// was derived from changed, else a new one. It returns nil when the node has no NodeMetric.
func (p *Plugin) summaryOf(ctx context.Context, n *cache.Node, node *corev1.Node, nodeInfo fwk.NodeInfo, now time.Time) *nodeSummary {
	stamp := n.Stamp()
	last, _ := n.Memo().(*nodeSummary)
	if last != nil && last.object == node && last.stamp == stamp && (last.validUntil == 0 || now.UnixNano() < last.validUntil) {
		return last
	}
	view := stamp.View()
	if view == nil {
		return nil
	}
	s := newNodeSummary(len(p.resources))
	s.object, s.stamp, s.hasUsage = node, stamp, view.HasUsage
	if !view.UpdateTime.IsZero() {
		s.expiresAt = view.UpdateTime.Add(p.expiration).UnixNano()
	}
	p.setThresholds(ctx, s, last, node)
	latest, validUntil := n.LatestUsageUntil(view, now)
	copy(s.usage(len(p.resources)), latest)
	if !validUntil.IsZero() {
		s.validUntil = validUntil.UnixNano()
	}
	p.allocatable(nodeInfo, s.allocatable(len(p.resources)))
	n.SetMemo(s)
	return s
}
