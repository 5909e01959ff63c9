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
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// nodeSummary is what Filter and Score need of one node, derived from one version of its state (NodeMetric
// and assigned pods) and of its node object, in one allocation.
//
// kube-scheduler calls Filter and Score for hundreds of nodes per pod, and comes back to a node only after
// the other plugins, the other nodes and the informers have moved its state out of the CPU's caches: there,
// the cost of a node is the number of places in memory its state is spread over. On the common path (latest
// usage, up to two resources) Filter and Score read the node's entry and the first 64 bytes of its summary,
// which hold everything they need and sit in one cache line (the summary is 128 bytes, a size the allocator
// aligns to 128).
//
// A summary does not check whether the node's state changed: the cache marks it stale when it does (it is
// the node's memo, see cache.Node.SetMemo), and the time-bound part of it (expiry) ends at validUntil.
type nodeSummary struct {
	// The fields Filter and Score read for every node, 64 bytes.

	// stale is set once the node's NodeMetric or pods changed after the summary was derived.
	stale atomic.Bool
	// hasUsage says whether the NodeMetric reports node usage; expired whether it had expired (or was never
	// updated) when the summary was derived.
	hasUsage, expired bool
	// object is the node object the thresholds and allocatable come from.
	object *corev1.Node
	// validUntil, in Unix nanoseconds, is when the summary ends with time alone, as the NodeMetric expires; 0
	// for never.
	validUntil int64
	// thresholds are the node's thresholds.
	thresholds *thresholdProfile
	// values holds the latest usage (the node's plus what the assigned pods add) then the allocatable of
	// cpu and memory, when the plugin works on no other resource; else big holds them for all resources.
	values [2 * inlineSummaryResources]int64

	// The rest: read on the other paths only.

	big []int64
	// view is the NodeMetric the summary was derived from.
	view *cache.NodeMetricView
	// thresholdsKey is the usage-thresholds annotation the thresholds come from, when hasAnnotation.
	thresholdsKey string
	hasAnnotation bool
}

// inlineSummaryResources is how many resources a summary holds in its first cache line.
const inlineSummaryResources = 2

// Invalidate marks the summary stale; the cache calls it when the node's state changes.
func (s *nodeSummary) Invalidate() { s.stale.Store(true) }

// validAt reports whether the summary describes node's object and state at now.
func (s *nodeSummary) validAt(node *corev1.Node, now time.Time) bool {
	return s.object == node && !s.stale.Load() && (s.validUntil == 0 || now.UnixNano() < s.validUntil)
}

// usage returns the node's latest usage plus what the assigned pods add, for n resources.
func (s *nodeSummary) usage(n int) quantity.Vector {
	if s.big != nil {
		return s.big[:n:n]
	}
	return s.values[:n:n]
}

// allocatable returns the node's allocatable, for n resources.
func (s *nodeSummary) allocatable(n int) quantity.Vector {
	if s.big != nil {
		return s.big[n : 2*n : 2*n]
	}
	return s.values[inlineSummaryResources : inlineSummaryResources+n : inlineSummaryResources+n]
}

// summaryOf returns the summary of node n, whose object is node, valid at now: the last one when it still is,
// else a new one. It returns nil when the node has no NodeMetric.
func (p *Plugin) summaryOf(ctx context.Context, n *cache.Node, node *corev1.Node, nodeInfo fwk.NodeInfo, now time.Time) *nodeSummary {
	last, _ := n.Memo().(*nodeSummary)
	if last != nil && last.validAt(node, now) {
		return last
	}
	// The stamp is read first: a change after it marks the new summary stale below, or finds it as the
	// node's memo and marks it stale itself.
	stamp := n.Stamp()
	view := stamp.View()
	if view == nil {
		return nil
	}
	s := &nodeSummary{object: node, hasUsage: view.HasUsage, view: view}
	if len(p.resources) > inlineSummaryResources {
		s.big = make([]int64, 2*len(p.resources))
	}
	p.setThresholds(ctx, s, last, node)
	copy(s.usage(len(p.resources)), n.LatestUsage(view))
	p.allocatable(nodeInfo, s.allocatable(len(p.resources)))
	var until time.Time
	if view.UpdateTime.IsZero() {
		s.expired = true
	} else if expiresAt := view.UpdateTime.Add(p.expiration); !now.Before(expiresAt) {
		s.expired = true
	} else {
		until = expiresAt
	}
	if !until.IsZero() {
		s.validUntil = until.UnixNano()
	}
	n.SetMemo(s)
	if n.Stamp() != stamp {
		s.Invalidate()
	}
	return s
}
