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

package cache

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// DefaultReportInterval is the report interval of a NodeMetric that states none (Koordinator's default).
const DefaultReportInterval = 60 * time.Second

// NodeMetricView is one version of a NodeMetric as vectors over the plugin's resources.
type NodeMetricView struct {
	// UpdateTime is when the node agent last reported; zero when it never did.
	UpdateTime time.Time
	// ReportInterval is how often the node agent reports.
	ReportInterval time.Duration
	// HasUsage says whether the NodeMetric carries node usage at all.
	HasUsage bool
	// NodeUsage is the node's usage.
	NodeUsage quantity.Vector
	// SystemUsage is the usage not accounted to pods.
	SystemUsage quantity.Vector
	// Aggregated are the statistics of node usage, by window.
	Aggregated []AggregatedUsage
	// Pods are the pods the NodeMetric reports usage of, by namespace and name; an entry without usage is
	// not a report, as in Koordinator.
	Pods map[types.NamespacedName]PodUsage
}

// PodUsage is what a NodeMetric reports of one pod.
type PodUsage struct {
	// Usage is the pod's usage.
	Usage quantity.Vector
	// Prod says whether the node agent reported the pod as koord-prod.
	Prod bool
}

// AggregatedUsage is one statistic of node usage over one window.
type AggregatedUsage struct {
	// Type is the statistic.
	Type extension.AggregationType
	// Window is the window.
	Window time.Duration
	// Usage is the value of the statistic.
	Usage quantity.Vector
}

// NewNodeMetricView converts nm for resources.
func NewNodeMetricView(nm *slov1alpha1.NodeMetric, resources quantity.Names) *NodeMetricView {
	v := &NodeMetricView{ReportInterval: DefaultReportInterval}
	if t := nm.Status.UpdateTime; t != nil {
		v.UpdateTime = t.Time
	}
	if p := nm.Spec.CollectPolicy; p != nil && p.ReportIntervalSeconds != nil && *p.ReportIntervalSeconds > 0 {
		v.ReportInterval = time.Duration(*p.ReportIntervalSeconds) * time.Second
	}
	if m := nm.Status.NodeMetric; m != nil {
		v.HasUsage = true
		v.NodeUsage = resources.Vector(m.NodeUsage.ResourceList)
		v.SystemUsage = resources.Vector(m.SystemUsage.ResourceList)
		for _, agg := range m.AggregatedNodeUsages {
			for typ, usage := range agg.Usage {
				if len(usage.ResourceList) == 0 {
					continue
				}
				v.Aggregated = append(v.Aggregated, AggregatedUsage{
					Type:   extension.AggregationType(typ),
					Window: agg.Duration.Duration,
					Usage:  resources.Vector(usage.ResourceList),
				})
			}
		}
	}
	if len(nm.Status.PodsMetric) > 0 {
		v.Pods = make(map[types.NamespacedName]PodUsage, len(nm.Status.PodsMetric))
		for _, pm := range nm.Status.PodsMetric {
			if len(pm.PodUsage.ResourceList) == 0 {
				continue
			}
			v.Pods[types.NamespacedName{Namespace: pm.Namespace, Name: pm.Name}] = PodUsage{
				Usage: resources.Vector(pm.PodUsage.ResourceList),
				Prod:  extension.PriorityClass(pm.Priority) == extension.PriorityProd,
			}
		}
	}
	return v
}

// Aggregate returns the statistic typ of node usage over window, or over the longest window reported for typ
// when window is 0. ok is false when the NodeMetric does not report it.
func (v *NodeMetricView) Aggregate(typ extension.AggregationType, window time.Duration) (usage quantity.Vector, ok bool) {
	var best time.Duration
	for _, a := range v.Aggregated {
		if a.Type != typ {
			continue
		}
		if window != 0 {
			if a.Window == window {
				return a.Usage, true
			}
			continue
		}
		if !ok || a.Window > best {
			usage, best, ok = a.Usage, a.Window, true
		}
	}
	return usage, ok
}
