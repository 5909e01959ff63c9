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
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/apis/extension"
)

// thresholdProfile are the usage thresholds of a node, in percent by resource index; 0 means no check.
type thresholdProfile struct {
	// usage are the thresholds on the latest node usage.
	usage []int64
	// prod, when not nil, are the thresholds of koord-prod pods on the usage of koord-prod pods.
	prod []int64
	// aggregated, when not nil, replaces usage for pods not checked against prod.
	aggregated *aggregatedThresholds
}

// aggregatedThresholds are thresholds on a statistic of node usage over a window.
type aggregatedThresholds struct {
	usage []int64
	typ   extension.AggregationType
	// window is 0 for the longest window reported.
	window time.Duration
}

// profileFromArgs returns the thresholds of the args.
func (p *Plugin) profileFromArgs() *thresholdProfile {
	t := &thresholdProfile{usage: p.resources.VectorOf(p.args.UsageThresholds)}
	t.prod = prodThresholds(p.resources.VectorOf(p.args.ProdUsageThresholds))
	if a := p.args.Aggregated; a != nil && len(a.UsageThresholds) > 0 && a.UsageAggregationType != "" {
		t.aggregated = &aggregatedThresholds{
			usage:  p.resources.VectorOf(a.UsageThresholds),
			typ:    a.UsageAggregationType,
			window: a.UsageAggregatedDuration.Duration,
		}
	}
	return t
}

// setThresholds sets the thresholds of s, the new summary of node, whose last summary was last (or nil): those
// of its scheduling.koordinator.sh/usage-thresholds annotation, each part falling back to the args when the
// annotation leaves it empty, or the args' when the annotation is missing or malformed. A malformed value is
// logged once per value. The thresholds are parsed again only when the annotation changes.
func (p *Plugin) setThresholds(ctx context.Context, s, last *nodeSummary, node *corev1.Node) {
	if last != nil && last.object == node {
		s.thresholds, s.thresholdsKey, s.hasAnnotation = last.thresholds, last.thresholdsKey, last.hasAnnotation
		return
	}
	raw, ok := node.Annotations[extension.AnnotationNodeUsageThresholds]
	s.thresholdsKey, s.hasAnnotation = raw, ok
	if last != nil && last.hasAnnotation == ok && last.thresholdsKey == raw {
		s.thresholds = last.thresholds
		return
	}
	s.thresholds = p.defaultThresholds
	if !ok {
		return
	}
	custom, err := extension.GetCustomUsageThresholds(node.Annotations)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Ignored a malformed node annotation; the node gets the plugin's thresholds",
			"node", klog.KObj(node), "annotation", extension.AnnotationNodeUsageThresholds)
		return
	}
	s.thresholds = p.mergeThresholds(custom)
}

// mergeThresholds builds the profile of a node annotation: each of its three parts replaces the args' part
// when it sets any threshold (and, for aggregated usage, a statistic).
func (p *Plugin) mergeThresholds(custom *extension.CustomUsageThresholds) *thresholdProfile {
	t := *p.defaultThresholds
	if custom == nil {
		return &t
	}
	if len(custom.UsageThresholds) > 0 {
		t.usage = p.resources.VectorOf(custom.UsageThresholds)
	}
	if len(custom.ProdUsageThresholds) > 0 {
		t.prod = prodThresholds(p.resources.VectorOf(custom.ProdUsageThresholds))
	}
	if a := custom.AggregatedUsage; a != nil && len(a.UsageThresholds) > 0 && a.UsageAggregationType != "" {
		t.aggregated = &aggregatedThresholds{usage: p.resources.VectorOf(a.UsageThresholds), typ: a.UsageAggregationType}
		if a.UsageAggregatedDuration != nil {
			t.aggregated.window = a.UsageAggregatedDuration.Duration
		}
	}
	return &t
}

// prodThresholds returns v, or nil when no threshold in it is above 0: as in Koordinator, prod pods are then
// checked like the others.
func prodThresholds(v []int64) []int64 {
	for _, t := range v {
		if t > 0 {
			return v
		}
	}
	return nil
}
