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

package lownodeload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"

	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Event reasons.
const (
	// ReasonOverutilized is recorded on a hot node whose pods LowNodeLoad moves.
	ReasonOverutilized = "Overutilized"
	// ReasonMigrating is recorded on each pod LowNodeLoad hands to the evictor.
	ReasonMigrating = "LowNodeLoadMigrating"
)

func (pl *Plugin) balancePool(ctx context.Context, p pool, all []*corev1.Node, processed sets.Set[string], now time.Time) {
	logger := logr.FromContextOrDiscard(ctx)
	nodes := selectNodes(p, all, processed)
	if len(nodes) == 0 {
		logger.V(4).Info("No nodes in the pool")
		return
	}
	t := newPoolThresholds(p.LowNodeLoadNodePool)
	usages := pl.usages(ctx, nodes, t.resources, now)
	thresholds := thresholdsOf(usages, t, p.UseDeviationThresholds)
	c := classify(usages, thresholds)

	hot := pl.anomalous(c.high, pl.nodeDetectors, p, now)
	prodHot := pl.anomalous(c.prodHigh, pl.prodDetectors, p, now)
	pl.recordClasses(p.Name, len(nodes)-len(usages), c, len(hot), len(prodHot))
	logger.V(2).Info("Nodes classified", "nodes", len(nodes), "unknown", len(nodes)-len(usages),
		"low", len(c.low), "high", len(c.high), "anomalous", len(hot), "prodLow", len(c.prodLow),
		"prodHigh", len(c.prodHigh), "prodAnomalous", len(prodHot), "bothLow", len(c.bothLow),
		"thresholds", thresholdSummary(t))

	if len(c.high) == 0 && len(c.prodHigh) == 0 {
		logger.V(4).Info("No node is above its high thresholds")
		return
	}
	if len(hot) == 0 && len(prodHot) == 0 {
		logger.V(4).Info("Hot nodes have not been hot for enough rounds yet", "consecutiveAbnormalities", p.AnomalyCondition.ConsecutiveAbnormalities)
		return
	}
	lows := len(c.low) + len(c.prodLow) + len(c.bothLow)
	if lows == 0 {
		logger.V(2).Info("Hot nodes but no node under the low thresholds to move pods to; consider raising lowThresholds")
		return
	}
	for _, n := range c.low {
		pl.nodeDetectors.reset(n.node.Name)
	}
	for _, n := range c.bothLow {
		pl.nodeDetectors.reset(n.node.Name)
	}
	for _, n := range c.prodLow {
		pl.prodDetectors.reset(n.node.Name)
	}
	if lows <= int(*pl.args.NumberOfNodes) {
		logger.V(2).Info("Not more cool nodes than numberOfNodes", "cool", lows, "numberOfNodes", *pl.args.NumberOfNodes)
		return
	}
	if lows == len(usages) {
		return
	}

	sortNodesByUsage(hot, p.ResourceWeights, false)
	sortNodesByUsage(prodHot, p.ResourceWeights, true)
	pl.move(ctx, p, t, hot, prodHot, c)

	// Koordinator counts a round in which pods moved off a hot node as a normal one.
	for _, n := range hot {
		pl.nodeDetectors.mark(n.node.Name, false, p.AnomalyCondition, now)
	}
	for _, n := range prodHot {
		pl.prodDetectors.mark(n.node.Name, false, p.AnomalyCondition, now)
	}
	for _, n := range c.high {
		processed.Insert(n.node.Name)
	}
}

// anomalous marks the hot nodes in their detectors and returns those that are anomalous.
func (pl *Plugin) anomalous(nodes []nodeInfo, ds *detectors, p pool, now time.Time) []nodeInfo {
	var out []nodeInfo
	for _, n := range nodes {
		if ds.mark(n.node.Name, true, p.AnomalyCondition, now) {
			out = append(out, n)
		}
	}
	return out
}

func (pl *Plugin) recordClasses(pool string, unknown int, c classes, anomalous, prodAnomalous int) {
	for class, n := range map[string]int{
		"low": len(c.low), "high": len(c.high), "anomalous": anomalous, "prod_low": len(c.prodLow),
		"prod_high": len(c.prodHigh), "prod_anomalous": prodAnomalous, "both_low": len(c.bothLow), "unknown": unknown,
	} {
		pl.metrics.Nodes.WithLabelValues(pool, class).Set(float64(n))
	}
}

// room is the usage the nodes can take before reaching their high thresholds, summed over them.
func room(nodes []nodeInfo, resources []corev1.ResourceName, prod bool) quantity.Amounts {
	out := quantity.Amounts{}
	for _, r := range resources {
		out[r] = 0
	}
	for _, n := range nodes {
		for _, r := range resources {
			if prod {
				out[r] += n.thresholds.prodHigh[r] - n.prodUsage[r]
			} else {
				out[r] += n.thresholds.high[r] - n.usage[r]
			}
		}
	}
	return out
}

// move moves pods off the hot nodes, then off the Prod-hot nodes, as Koordinator does: node usage goes to the
// low and both-low nodes within their room; Prod usage to the Prod-low nodes and what room the both-low nodes
// have left.
func (pl *Plugin) move(ctx context.Context, p pool, t poolThresholds, hot, prodHot []nodeInfo, c classes) {
	bothRoom := room(c.bothLow, t.resources, false)
	nodeRoom := room(c.low, t.resources, false)
	for r, v := range bothRoom {
		nodeRoom[r] += v
	}
	targets := append(append([]nodeInfo{}, c.low...), c.bothLow...)
	pl.balance(ctx, p, hot, targets, nodeRoom, false)

	prodRoom := room(c.prodLow, t.resources, true)
	prodBothRoom := room(c.bothLow, t.resources, true)
	for r := range prodRoom {
		// What the both-low nodes have left after the round above, in node usage, bounds their Prod room too.
		prodRoom[r] += min(prodBothRoom[r], bothRoom[r], nodeRoom[r])
	}
	prodTargets := append(append([]nodeInfo{}, c.prodLow...), c.bothLow...)
	pl.balance(ctx, p, prodHot, prodTargets, prodRoom, true)
}

// balance moves pods off sources to targets while the sources are hot and the room lasts.
func (pl *Plugin) balance(ctx context.Context, p pool, sources, targets []nodeInfo, avail quantity.Amounts, prod bool) {
	logger := logr.FromContextOrDiscard(ctx)
	if len(sources) == 0 {
		return
	}
	if len(targets) == 0 {
		logger.V(2).Info("No cool nodes to move pods to", "prod", prod, "hotNodes", len(sources))
		return
	}
	for _, src := range sources {
		pods := src.pods
		if prod {
			pods = src.prodPods
		}
		var removable []*corev1.Pod
		for _, pod := range pods {
			if pl.podFilter(pod) {
				removable = append(removable, pod)
			}
		}
		if len(removable) == 0 {
			logger.V(2).Info("No pod on the hot node may move", "node", src.node.Name, "prod", prod, "pods", len(pods))
			continue
		}
		usage, thresholds := src.usage, src.thresholds.high
		if prod {
			usage, thresholds = src.prodUsage, src.thresholds.prodHigh
		}
		excess, weights := quantity.Amounts{}, map[corev1.ResourceName]int64{}
		for _, r := range over(usage, thresholds) {
			excess[r] = usage[r] - thresholds[r]
			weights[r] = p.ResourceWeights[r]
		}
		sortPods(removable, src.podUsage, excess, weights)
		pl.evictFrom(ctx, p, src, removable, targets, avail, prod)
	}
}

// evictFrom hands pods of one hot node to the evictor, most suitable first, until the node is no longer hot
// or the room on the targets is used up. With nodeFit, a pod moves only if a target fits it and stays under
// its high thresholds with the pod's usage added; that target's usage then counts the pod.
func (pl *Plugin) evictFrom(ctx context.Context, p pool, src nodeInfo, pods []*corev1.Pod, targets []nodeInfo, avail quantity.Amounts, prod bool) {
	logger := logr.FromContextOrDiscard(ctx).WithValues("node", src.node.Name, "prod", prod)
	moved := 0
	reason := overutilizedReason(src, prod)
	for _, pod := range pods {
		if !pl.keepGoing(src, avail, prod) {
			break
		}
		key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
		podUsage, known := src.podUsage[key]
		if *pl.args.NodeFit {
			if !known {
				logger.V(4).Info("Pod stays: its usage is not reported", "pod", key)
				continue
			}
			target := pl.fitTarget(ctx, pod, podUsage, targets, prod)
			if target == nil {
				logger.V(4).Info("Pod stays: no cool node fits it under its high thresholds", "pod", key)
				continue
			}
		}
		if !pl.handle.Evictor().PreEvictionFilter(pod) {
			logger.V(4).Info("Pod stays: refused by the evictor", "pod", key)
			continue
		}
		if *pl.args.DryRun {
			logger.Info("Would migrate pod (dry run)", "pod", key, "reason", reason)
			pl.metrics.Migrations.WithLabelValues(p.Name, "dry_run").Inc()
		} else {
			opts := evictions.EvictOptions{Reason: reason, StrategyName: Name}
			if err := pl.handle.Evictor().Evict(ctx, pod, opts); err != nil {
				logger.Info("Pod not migrated", "pod", key, "err", err.Error())
				pl.metrics.Migrations.WithLabelValues(p.Name, "failed").Inc()
				continue
			}
			logger.Info("Migrating pod", "pod", key, "reason", reason)
			pl.metrics.Migrations.WithLabelValues(p.Name, "requested").Inc()
			pl.handle.EventRecorder().Eventf(pod, src.node, corev1.EventTypeNormal, ReasonMigrating, "Descheduling",
				"Migrating off node %s (pool %s): %s", src.node.Name, p.Name, reason)
		}
		moved++
		for r := range avail {
			v := podUsage[r]
			if r == corev1.ResourcePods {
				v = 1
			}
			avail[r] -= v
			src.usage[r] -= v
			if prod {
				src.prodUsage[r] -= v
			}
		}
	}
	if moved > 0 && !*pl.args.DryRun {
		pl.handle.EventRecorder().Eventf(src.node, nil, corev1.EventTypeNormal, ReasonOverutilized, "Descheduling",
			"%s; migrating %d pods to %d cool nodes of pool %s (room left: %s)", reason, moved, len(targets), p.Name, amountsString(avail))
	}
}

// keepGoing tells whether pods should still move off src: it is still hot and every resource has room left
// on the targets. A node no longer hot is normal again.
func (pl *Plugin) keepGoing(src nodeInfo, avail quantity.Amounts, prod bool) bool {
	usage, thresholds, ds := src.usage, src.thresholds.high, pl.nodeDetectors
	if prod {
		usage, thresholds, ds = src.prodUsage, src.thresholds.prodHigh, pl.prodDetectors
	}
	if len(over(usage, thresholds)) == 0 {
		ds.reset(src.node.Name)
		return false
	}
	for _, v := range avail {
		if v < 1 {
			return false
		}
	}
	return true
}

// fitTarget returns the first target the pod fits (its affinity, tolerations, requests; upstream descheduler's
// NodeFit) that stays under its high thresholds with the pod's usage added, and adds the usage to it.
func (pl *Plugin) fitTarget(ctx context.Context, pod *corev1.Pod, podUsage quantity.Amounts, targets []nodeInfo, prod bool) *nodeInfo {
	for i := range targets {
		t := &targets[i]
		usage, thresholds := t.usage, t.thresholds.high
		if prod {
			usage, thresholds = t.prodUsage, t.thresholds.prodHigh
		}
		fits := true
		for r, th := range thresholds {
			if u, ok := usage[r]; ok && u+podUsage[r] > th {
				fits = false
				break
			}
		}
		if !fits {
			continue
		}
		// After the thresholds: NodeFit sums the requests of the target's pods.
		if err := nodeutil.NodeFit(ctx, pl.handle.GetPodsAssignedToNodeFunc(), pod, t.node); err != nil {
			logr.FromContextOrDiscard(ctx).V(5).Info("Pod does not fit a cool node", "pod", klog.KObj(pod), "node", t.node.Name, "reason", err.Error())
			continue
		}
		for r := range thresholds {
			if _, ok := usage[r]; ok {
				usage[r] += podUsage[r]
			}
		}
		return t
	}
	return nil
}

// overutilizedReason says which resources are above their thresholds, with the numbers, in Koordinator's words.
func overutilizedReason(n nodeInfo, prod bool) string {
	usage, thresholds, kind := n.usage, n.thresholds.high, "node"
	if prod {
		usage, thresholds, kind = n.prodUsage, n.thresholds.prodHigh, "prod"
	}
	resources := over(usage, thresholds)
	pct := usagePercent(usage, n.allocatable, resources)
	limit := usagePercent(thresholds, n.allocatable, resources)
	parts := make([]string, 0, len(resources))
	for _, r := range resources {
		parts = append(parts, fmt.Sprintf("%s %s usage(%.2f%%)>threshold(%.2f%%)", kind, r, pct[r], limit[r]))
	}
	return "node is overutilized, " + strings.Join(parts, ", ")
}

func amountsString(a quantity.Amounts) string {
	parts := make([]string, 0, len(a))
	for _, r := range a.Names() {
		v := a[r]
		switch r {
		case corev1.ResourceCPU:
			parts = append(parts, fmt.Sprintf("cpu %dm", v))
		case corev1.ResourceMemory:
			parts = append(parts, fmt.Sprintf("memory %dMi", v>>20))
		default:
			parts = append(parts, fmt.Sprintf("%s %d", r, v))
		}
	}
	return strings.Join(parts, ", ")
}

func thresholdSummary(t poolThresholds) string {
	parts := make([]string, 0, len(t.resources))
	for _, r := range t.resources {
		parts = append(parts, fmt.Sprintf("%s %g%%-%g%% (prod %g%%-%g%%)", r, float64(t.low[r]), float64(t.high[r]), float64(t.prodLow[r]), float64(t.prodHigh[r])))
	}
	return strings.Join(parts, ", ")
}
