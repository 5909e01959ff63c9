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
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/cache"
)

// Filter rejects a node when the pod would push its usage over a threshold.
//
// It returns Success for DaemonSet pods, for nodes without a NodeMetric or without usage in it, and for nodes
// whose NodeMetric expired when expired metrics are allowed (or not filtered). It returns Unschedulable, with
// one reason per resource over its threshold such as "node cpu usage 78 percent > threshold 65 percent", when the
// estimated usage (see addEstimatedUsage) in percent of the node's allocatable exceeds a threshold, and
// Unschedulable with the metric's age when the NodeMetric expired.
//
// The thresholds come from the node's usage-thresholds annotation or the args. koord-prod pods are checked
// against the prod thresholds, when there are any, on the usage of koord-prod pods; other pods against the
// aggregated thresholds on the chosen statistic, when there are any, else against the usage thresholds.
func (p *Plugin) Filter(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	ps := p.podStateOf(ctx, cycle, pod)
	if ps.DaemonSet {
		return nil
	}
	n := p.nodes.ForObject(node)
	if n == nil {
		return nil
	}
	now := ps.now
	sum := p.summaryOf(ctx, n, node, nodeInfo, now)
	if sum == nil {
		return nil
	}
	if sum.expired {
		if p.args.FilterExpiredNodeMetrics && !p.args.EnableScheduleWhenNodeMetricsExpired {
			p.rejectionsExpired.Inc()
			return fwk.NewStatus(fwk.Unschedulable, p.expiredReason(sum.view, now))
		}
		return nil
	}
	if !sum.hasUsage {
		return nil
	}

	th := sum.thresholds
	var buf [2 * maxInlineResources]int64
	used, _ := p.vectors(&buf)
	var (
		thresholds []int64
		what       = "%s usage"
	)
	switch {
	case th.prod != nil && ps.Prod:
		thresholds, what = th.prod, "prod %s usage"
		p.addEstimatedUsage(used, n, sum, prodUsage, ps)
	case th.aggregated != nil:
		a := th.aggregated
		thresholds = a.usage
		base := latestUsage
		if u, ok := sum.view.Aggregate(a.typ, a.window); ok {
			used.Add(u)
			base, what = aggregatedUsage, "%s "+string(a.typ)+" usage"
			if a.window > 0 {
				what += " over " + a.window.String()
			}
		}
		// Otherwise statistics have not started yet (they need enough samples): the latest usage stands in.
		p.addEstimatedUsage(used, n, sum, base, ps)
	default:
		thresholds = th.usage
		p.addEstimatedUsage(used, n, sum, latestUsage, ps)
	}
	allocatable := sum.allocatable(len(p.resources))

	var reasons []string
	for i, name := range p.resources {
		threshold := thresholds[i]
		if threshold == 0 || allocatable[i] == 0 {
			continue
		}
		percent := int64(math.Round(float64(used[i]) * 100 / float64(allocatable[i])))
		if percent > threshold {
			// "percent", not "%": kube-scheduler passes the message to its FailedScheduling Event as a format
			// string, where a "%" would come out as "%!>(MISSING)".
			reasons = append(reasons, fmt.Sprintf("node "+what+" %d percent > threshold %d percent", name, percent, threshold))
			p.rejections[i].Inc()
		}
	}
	if len(reasons) > 0 {
		if v := klog.FromContext(ctx).V(5); v.Enabled() {
			v.Info("Rejected node over usage threshold", "pod", klog.KObj(pod), "node", klog.KObj(node), "reasons", reasons)
		}
		return fwk.NewStatus(fwk.Unschedulable, reasons...)
	}
	return nil
}

// expiredReason says how old an expired NodeMetric is.
func (p *Plugin) expiredReason(view *cache.NodeMetricView, now time.Time) string {
	if view.UpdateTime.IsZero() {
		return "node metric was never updated"
	}
	return fmt.Sprintf("node metric expired: updated %s ago, expiration %s", now.Sub(view.UpdateTime).Truncate(time.Second), p.expiration)
}
