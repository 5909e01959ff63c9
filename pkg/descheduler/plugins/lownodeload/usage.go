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
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// nodeUsage is what one round knows of a node: its allocatable, its pods and their usage from its NodeMetric.
type nodeUsage struct {
	node        *corev1.Node
	allocatable quantity.Amounts
	pods        []*corev1.Pod
	prodPods    []*corev1.Pod
	// usage is the node's usage (system plus pods, as Koordinator counts it) and prodUsage the Prod pods'.
	usage, prodUsage quantity.Amounts
	// podUsage is the reported usage of each pod.
	podUsage map[types.NamespacedName]quantity.Amounts
}

// nodeThresholds are a node's thresholds as amounts.
type nodeThresholds struct {
	low, high, prodLow, prodHigh quantity.Amounts
}

// nodeInfo is a node with its usage and thresholds.
type nodeInfo struct {
	*nodeUsage
	thresholds nodeThresholds
}

// allocatableOf returns a node's allocatable: the raw allocatable Koordinator's resource amplification records,
// when the node has it, else status.allocatable.
func allocatableOf(node *corev1.Node) (corev1.ResourceList, error) {
	raw, ok := node.Annotations[extension.AnnotationNodeRawAllocatable]
	if !ok {
		return node.Status.Allocatable, nil
	}
	var list corev1.ResourceList
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return node.Status.Allocatable, fmt.Errorf("annotation %s of node %s is not a resource list: %w", extension.AnnotationNodeRawAllocatable, node.Name, err)
	}
	return list, nil
}

// usageOf computes a node's usage from its NodeMetric over resources, Koordinator's way: the system usage plus
// the usage of every pod the NodeMetric reports; Prod usage is the usage of the Prod pods among pods (the pods
// bound to the node).
func usageOf(node *corev1.Node, pods []*corev1.Pod, metric *slov1alpha1.NodeMetric, resources []corev1.ResourceName) *nodeUsage {
	u := &nodeUsage{
		node:      node,
		pods:      pods,
		usage:     quantity.Amounts{},
		prodUsage: quantity.Amounts{},
		podUsage:  make(map[types.NamespacedName]quantity.Amounts, len(metric.Status.PodsMetric)),
	}
	prod := map[types.NamespacedName]bool{}
	for _, p := range pods {
		if extension.GetPodPriorityClassWithDefault(p) == extension.PriorityProd {
			u.prodPods = append(u.prodPods, p)
			prod[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = true
		}
	}
	for _, r := range resources {
		u.usage[r] = quantity.ValueIn(metric.Status.NodeMetric.SystemUsage.ResourceList, r)
		u.prodUsage[r] = 0
	}
	for i := range metric.Status.PodsMetric {
		pm := &metric.Status.PodsMetric[i]
		key := types.NamespacedName{Namespace: pm.Namespace, Name: pm.Name}
		pu := make(quantity.Amounts, len(resources))
		for _, r := range resources {
			v := quantity.ValueIn(pm.PodUsage.ResourceList, r)
			pu[r] = v
			u.usage[r] += v
			if prod[key] {
				u.prodUsage[r] += v
			}
		}
		u.podUsage[key] = pu
	}
	u.usage[corev1.ResourcePods] = int64(len(pods))
	u.prodUsage[corev1.ResourcePods] = int64(len(u.prodPods))
	return u
}

// metricExpired tells whether a NodeMetric is too old to act on.
func metricExpired(metric *slov1alpha1.NodeMetric, expiration time.Duration, now time.Time) bool {
	if metric.Status.NodeMetric == nil || metric.Status.UpdateTime == nil {
		return true
	}
	return expiration > 0 && now.Sub(metric.Status.UpdateTime.Time) >= expiration
}

// poolThresholds are a pool's thresholds with every resource any of them names filled in, as Koordinator does:
// a resource without a low threshold gets 100% (0 when they are deviations) as low and high threshold, so that
// it never makes a node hot.
type poolThresholds struct {
	low, high, prodLow, prodHigh config.ResourceThresholds
	resources                    []corev1.ResourceName
}

func newPoolThresholds(pool *config.LowNodeLoadNodePool) poolThresholds {
	t := poolThresholds{
		low: copyThresholds(pool.LowThresholds), high: copyThresholds(pool.HighThresholds),
		prodLow: copyThresholds(pool.ProdLowThresholds), prodHigh: copyThresholds(pool.ProdHighThresholds),
	}
	fill := config.Percentage(100)
	if pool.UseDeviationThresholds {
		fill = 0
	}
	seen := map[corev1.ResourceName]bool{}
	var names []corev1.ResourceName
	for _, m := range []config.ResourceThresholds{pool.LowThresholds, pool.HighThresholds, pool.ProdLowThresholds, pool.ProdHighThresholds, {corev1.ResourceMemory: 0}} {
		for _, r := range sortedResources(m) {
			if !seen[r] {
				seen[r] = true
				names = append(names, r)
			}
		}
	}
	for _, r := range names {
		if _, ok := t.low[r]; !ok {
			t.low[r], t.high[r] = fill, fill
		}
		if _, ok := t.prodLow[r]; !ok {
			t.prodLow[r], t.prodHigh[r] = fill, fill
		}
		// A high threshold without its low one was overwritten above; one with a low one but no high one is
		// treated as 100% (0 with deviations), as the missing low is.
		if _, ok := t.high[r]; !ok {
			t.high[r] = fill
		}
		if _, ok := t.prodHigh[r]; !ok {
			t.prodHigh[r] = fill
		}
	}
	t.resources = sortedResources(t.low)
	return t
}

func copyThresholds(m config.ResourceThresholds) config.ResourceThresholds {
	out := make(config.ResourceThresholds, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// thresholdsOf turns a pool's percentages into amounts of each node's allocatable. With deviations, each
// threshold is the mean usage percentage of the pool's nodes minus (low) or plus (high) the threshold, clamped to
// 0–100; a resource whose low deviation is 0 never makes a node hot or cool: both thresholds are the whole
// allocatable.
func thresholdsOf(usages []*nodeUsage, t poolThresholds, deviation bool) map[string]nodeThresholds {
	var mean, prodMean map[corev1.ResourceName]float64
	if deviation {
		mean, prodMean = meanUsagePercent(usages)
	}
	out := make(map[string]nodeThresholds, len(usages))
	for _, u := range usages {
		nt := nodeThresholds{low: quantity.Amounts{}, high: quantity.Amounts{}, prodLow: quantity.Amounts{}, prodHigh: quantity.Amounts{}}
		for _, r := range t.resources {
			alloc := u.allocatable[r]
			if !deviation {
				nt.low[r], nt.high[r] = percentOf(alloc, float64(t.low[r])), percentOf(alloc, float64(t.high[r]))
				nt.prodLow[r], nt.prodHigh[r] = percentOf(alloc, float64(t.prodLow[r])), percentOf(alloc, float64(t.prodHigh[r]))
				continue
			}
			if t.low[r] == 0 {
				nt.low[r], nt.high[r] = alloc, alloc
			} else {
				nt.low[r] = percentOf(alloc, clampPercent(mean[r]-float64(t.low[r])))
				nt.high[r] = percentOf(alloc, clampPercent(mean[r]+float64(t.high[r])))
			}
			if t.prodLow[r] == 0 {
				nt.prodLow[r], nt.prodHigh[r] = alloc, alloc
			} else {
				nt.prodLow[r] = percentOf(alloc, clampPercent(prodMean[r]-float64(t.prodLow[r])))
				nt.prodHigh[r] = percentOf(alloc, clampPercent(prodMean[r]+float64(t.prodHigh[r])))
			}
		}
		out[u.node.Name] = nt
	}
	return out
}

func percentOf(total int64, percent float64) int64 { return int64(percent * 0.01 * float64(total)) }

func clampPercent(p float64) float64 { return min(max(p, 0), 100) }

// meanUsagePercent is the mean over nodes of each resource's usage percentage, of all pods and of Prod pods.
func meanUsagePercent(usages []*nodeUsage) (all, prod map[corev1.ResourceName]float64) {
	all, prod = map[corev1.ResourceName]float64{}, map[corev1.ResourceName]float64{}
	if len(usages) == 0 {
		return all, prod
	}
	for _, u := range usages {
		for r, v := range u.usage {
			if a := u.allocatable[r]; a > 0 {
				all[r] += 100 * float64(v) / float64(a)
			}
		}
		for r, v := range u.prodUsage {
			if a := u.allocatable[r]; a > 0 {
				prod[r] += 100 * float64(v) / float64(a)
			}
		}
	}
	n := float64(len(usages))
	for r := range all {
		all[r] /= n
	}
	for r := range prod {
		prod[r] /= n
	}
	return all, prod
}

// over returns the resources whose usage is above their threshold.
func over(usage, thresholds quantity.Amounts) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, r := range thresholds.Names() {
		if v, ok := usage[r]; ok && v > thresholds[r] {
			out = append(out, r)
		}
	}
	return out
}

// under tells whether no resource's usage is above its threshold.
func under(usage, thresholds quantity.Amounts) bool {
	for r, t := range thresholds {
		if v, ok := usage[r]; ok && v > t {
			return false
		}
	}
	return true
}

// classes are the nodes of a pool by their usage, as Koordinator classifies them.
type classes struct {
	// low are under the low thresholds of node usage and between the Prod thresholds.
	low []nodeInfo
	// high are above the high thresholds of node usage.
	high []nodeInfo
	// prodLow are between the node thresholds and under the Prod low thresholds.
	prodLow []nodeInfo
	// prodHigh are above the Prod high thresholds but not above the node high thresholds.
	prodHigh []nodeInfo
	// bothLow are under the low thresholds of both.
	bothLow []nodeInfo
}

// classify sorts nodes into classes. An unschedulable node is never low.
func classify(usages []*nodeUsage, thresholds map[string]nodeThresholds) classes {
	var c classes
	for _, u := range usages {
		ni := nodeInfo{nodeUsage: u, thresholds: thresholds[u.node.Name]}
		t := ni.thresholds
		schedulable := !u.node.Spec.Unschedulable
		prodHigh := len(over(u.prodUsage, t.prodHigh)) > 0
		prodLow := schedulable && under(u.prodUsage, t.prodLow)
		switch {
		case schedulable && under(u.usage, t.low):
			switch {
			case prodHigh:
				c.prodHigh = append(c.prodHigh, ni)
			case prodLow:
				c.bothLow = append(c.bothLow, ni)
			default:
				c.low = append(c.low, ni)
			}
		case len(over(u.usage, t.high)) > 0:
			c.high = append(c.high, ni)
		case prodHigh:
			c.prodHigh = append(c.prodHigh, ni)
		case prodLow:
			c.prodLow = append(c.prodLow, ni)
		}
	}
	return c
}

// usagePercent is the usage of each resource in percent of the node's allocatable.
func usagePercent(usage, allocatable quantity.Amounts, resources []corev1.ResourceName) map[corev1.ResourceName]float64 {
	out := make(map[corev1.ResourceName]float64, len(resources))
	for _, r := range resources {
		if a := allocatable[r]; a > 0 {
			out[r] = 100 * float64(usage[r]) / float64(a)
		}
	}
	return out
}
