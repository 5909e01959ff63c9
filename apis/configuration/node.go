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

package configuration

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// SLOCfg is the parsed configuration of every key of the slo-controller-config ConfigMap that Koord renders per
// node. A nil key means the key is not set, so only defaults apply.
type SLOCfg struct {
	// Colocation is colocation-config.
	// +optional
	Colocation *ColocationCfg `json:"colocation,omitempty"`
	// ResourceThreshold is resource-threshold-config.
	// +optional
	ResourceThreshold *ResourceThresholdCfg `json:"resourceThreshold,omitempty"`
	// ResourceQOS is resource-qos-config.
	// +optional
	ResourceQOS *ResourceQOSCfg `json:"resourceQOS,omitempty"`
	// CPUBurst is cpu-burst-config.
	// +optional
	CPUBurst *CPUBurstCfg `json:"cpuBurst,omitempty"`
	// System is system-config.
	// +optional
	System *SystemCfg `json:"system,omitempty"`
	// HostApplication is host-application-config.
	// +optional
	HostApplication *HostApplicationCfg `json:"hostApplication,omitempty"`
}

// The functions below render the configuration of one node. Each strategy is the defaults, merged (see Merge)
// with the cluster strategy, merged with the first node strategy whose selector matches the node's labels. A nil
// configuration gives the defaults. The results are new values the caller may modify.

// ColocationStrategyForNode returns the colocation strategy of node. On top of the merged configuration:
//   - the node annotation node.koordinator.sh/colocation-strategy, a JSON ColocationStrategy, overrides the
//     fields it sets;
//   - the node labels node.koordinator.sh/cpu-reclaim-ratio and memory-reclaim-ratio override the reclaim
//     thresholds, and mid-static-cpu-reserved-ratio and mid-static-memory-reserved-ratio the static mid shares.
//     Each is a float ratio: "0.7" means 70 %. The percentage is truncated to an integer as Koordinator does,
//     without its float artefacts ("0.29" is 29 %, not 28 %).
//
// The cluster strategy's enable is the master switch, as in Koordinator: unless it is true, Enable is false
// whatever a node config or the annotation says, so that no node gets batch or mid resources while colocation is
// off for the cluster.
//
// An annotation that does not parse or validate is ignored as a whole, and a label that does not parse or is out
// of range is ignored; each such problem is reported in the returned error (an *extension.AnnotationError or
// *extension.LabelError, joined) while everything else still applies.
func ColocationStrategyForNode(cfg *ColocationCfg, node *corev1.Node) (ColocationStrategy, error) {
	strategy, err := colocationStrategyForNode(cfg, node)
	if cfg == nil || !ptr.Deref(cfg.Enable, false) {
		strategy.Enable = ptr.To(false)
	}
	return strategy, err
}

// colocationStrategyForNode is ColocationStrategyForNode without the master switch.
func colocationStrategyForNode(cfg *ColocationCfg, node *corev1.Node) (ColocationStrategy, error) {
	defaults := DefaultColocationStrategy()
	var cluster, matched *ColocationStrategy
	if cfg != nil {
		cluster = &cfg.ColocationStrategy
		if i := firstMatch(len(cfg.NodeConfigs), func(i int) *metav1.LabelSelector { return cfg.NodeConfigs[i].NodeSelector }, node); i >= 0 {
			matched = &cfg.NodeConfigs[i].ColocationStrategy
		}
	}
	strategy := Merge(&defaults, cluster, matched)
	if node == nil {
		return *strategy, nil
	}
	var errs []error
	override, err := colocationStrategyAnnotation(node.Annotations)
	if err != nil {
		errs = append(errs, err)
	} else if override != nil {
		strategy = Merge(strategy, override)
	}
	for _, l := range []struct {
		key string
		max float64
		to  **int64
	}{
		{extension.LabelCPUReclaimRatio, OverCommitPercentLimit / 100, &strategy.CPUReclaimThresholdPercent},
		{extension.LabelMemoryReclaimRatio, OverCommitPercentLimit / 100, &strategy.MemoryReclaimThresholdPercent},
		{extension.LabelMidStaticCPUReservedRatio, 1, &strategy.MidStaticCPUReservedPercent},
		{extension.LabelMidStaticMemoryReservedRatio, 1, &strategy.MidStaticMemoryReservedPercent},
	} {
		percent, err := ratioLabelPercent(node.Labels, l.key, l.max)
		if err != nil {
			errs = append(errs, err)
		} else if percent != nil {
			*l.to = percent
		}
	}
	return *strategy, errors.Join(errs...)
}

// colocationStrategyAnnotation parses and validates the node's colocation strategy annotation. It returns nil
// and no error when the annotation is missing or empty.
func colocationStrategyAnnotation(annotations map[string]string) (*ColocationStrategy, error) {
	const key = extension.AnnotationNodeColocationStrategy
	value := annotations[key]
	if value == "" {
		return nil, nil
	}
	s, unknown, err := decodeStrict[ColocationStrategy](value)
	if err == nil && len(unknown) > 0 {
		err = errors.Join(unknown...)
	}
	if err != nil {
		return nil, &extension.AnnotationError{Key: key, Value: value, Err: err}
	}
	const root = "strategy"
	if errs := ValidateColocationStrategy(field.NewPath(root), s); len(errs) > 0 {
		for _, e := range errs {
			e.Field = strings.TrimPrefix(e.Field, root+".") // name the fields as the annotation's JSON does
		}
		return nil, &extension.AnnotationError{Key: key, Value: value, Err: errs.ToAggregate()}
	}
	return s, nil
}

// ratioLabelPercent reads a float ratio label as an integer percentage. It returns nil and no error when the
// label is missing, and an *extension.LabelError when it is not a number in [0, maxRatio].
func ratioLabelPercent(nodeLabels map[string]string, key string, maxRatio float64) (*int64, error) {
	value, ok := nodeLabels[key]
	if !ok {
		return nil, nil
	}
	ratio, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsNaN(ratio) || ratio < 0 || ratio > maxRatio {
		return nil, &extension.LabelError{Key: key, Value: value,
			Err: fmt.Errorf("%q is not a ratio between 0 and %g, such as 0.7 for 70 %%", value, maxRatio)}
	}
	// The epsilon absorbs binary float error: 0.29*100 is 28.999999999999996.
	return ptr.To(int64(math.Floor(ratio*100 + 1e-9))), nil
}

// ResourceThresholdStrategyForNode returns the suppression and eviction strategy of node.
func ResourceThresholdStrategyForNode(cfg *ResourceThresholdCfg, node *corev1.Node) *slov1alpha1.ResourceThresholdStrategy {
	if cfg == nil {
		return DefaultResourceThresholdStrategy()
	}
	var matched *slov1alpha1.ResourceThresholdStrategy
	if i := firstMatch(len(cfg.NodeStrategies), func(i int) *metav1.LabelSelector { return cfg.NodeStrategies[i].NodeSelector }, node); i >= 0 {
		matched = cfg.NodeStrategies[i].ResourceThresholdStrategy
	}
	return Merge(DefaultResourceThresholdStrategy(), cfg.ClusterStrategy, matched)
}

// ResourceQOSStrategyForNode returns the per-class QoS strategy of node. A class's network QoS that leaves a
// request or limit unset gets the NodeSLO schema's default (request 0, limit 100), so the rendered strategy is
// what the API server stores.
func ResourceQOSStrategyForNode(cfg *ResourceQOSCfg, node *corev1.Node) *slov1alpha1.ResourceQOSStrategy {
	var out *slov1alpha1.ResourceQOSStrategy
	if cfg == nil {
		out = DefaultResourceQOSStrategy()
	} else {
		var matched *slov1alpha1.ResourceQOSStrategy
		if i := firstMatch(len(cfg.NodeStrategies), func(i int) *metav1.LabelSelector { return cfg.NodeStrategies[i].NodeSelector }, node); i >= 0 {
			matched = cfg.NodeStrategies[i].ResourceQOSStrategy
		}
		out = Merge(DefaultResourceQOSStrategy(), cfg.ClusterStrategy, matched)
	}
	for _, c := range qosClasses(out) {
		if c.qos == nil || c.qos.NetworkQOS == nil {
			continue
		}
		n := &c.qos.NetworkQOS.NetworkQOS
		for _, v := range []struct {
			to  **intstr.IntOrString
			def int
		}{{&n.IngressRequest, 0}, {&n.IngressLimit, 100}, {&n.EgressRequest, 0}, {&n.EgressLimit, 100}} {
			if *v.to == nil {
				*v.to = ptr.To(intstr.FromInt(v.def))
			}
		}
	}
	return out
}

// CPUBurstStrategyForNode returns the CPU burst strategy of node.
func CPUBurstStrategyForNode(cfg *CPUBurstCfg, node *corev1.Node) *slov1alpha1.CPUBurstStrategy {
	if cfg == nil {
		return DefaultCPUBurstStrategy()
	}
	var matched *slov1alpha1.CPUBurstStrategy
	if i := firstMatch(len(cfg.NodeStrategies), func(i int) *metav1.LabelSelector { return cfg.NodeStrategies[i].NodeSelector }, node); i >= 0 {
		matched = cfg.NodeStrategies[i].CPUBurstStrategy
	}
	return Merge(DefaultCPUBurstStrategy(), cfg.ClusterStrategy, matched)
}

// SystemStrategyForNode returns the system strategy of node.
func SystemStrategyForNode(cfg *SystemCfg, node *corev1.Node) *slov1alpha1.SystemStrategy {
	if cfg == nil {
		return DefaultSystemStrategy()
	}
	var matched *slov1alpha1.SystemStrategy
	if i := firstMatch(len(cfg.NodeStrategies), func(i int) *metav1.LabelSelector { return cfg.NodeStrategies[i].NodeSelector }, node); i >= 0 {
		matched = cfg.NodeStrategies[i].SystemStrategy
	}
	return Merge(DefaultSystemStrategy(), cfg.ClusterStrategy, matched)
}

// HostApplicationsForNode returns the host applications of node: those of the first matching node configuration,
// which replace the cluster list as a whole (as in Koordinator), else the cluster list. It returns nil when
// there are none.
func HostApplicationsForNode(cfg *HostApplicationCfg, node *corev1.Node) []slov1alpha1.HostApplicationSpec {
	if cfg == nil {
		return nil
	}
	apps := cfg.Applications
	if i := firstMatch(len(cfg.NodeConfigs), func(i int) *metav1.LabelSelector { return cfg.NodeConfigs[i].NodeSelector }, node); i >= 0 {
		apps = cfg.NodeConfigs[i].Applications
	}
	if len(apps) == 0 {
		return nil
	}
	out := make([]slov1alpha1.HostApplicationSpec, len(apps))
	for i := range apps {
		apps[i].DeepCopyInto(&out[i])
	}
	return out
}

// NodeSLOSpecForNode renders the NodeSLO spec of node from cfg (which may be nil).
func NodeSLOSpecForNode(cfg *SLOCfg, node *corev1.Node) slov1alpha1.NodeSLOSpec {
	if cfg == nil {
		cfg = &SLOCfg{}
	}
	return slov1alpha1.NodeSLOSpec{
		ResourceUsedThresholdWithBE: ResourceThresholdStrategyForNode(cfg.ResourceThreshold, node),
		ResourceQOSStrategy:         ResourceQOSStrategyForNode(cfg.ResourceQOS, node),
		CPUBurstStrategy:            CPUBurstStrategyForNode(cfg.CPUBurst, node),
		SystemStrategy:              SystemStrategyForNode(cfg.System, node),
		HostApplications:            HostApplicationsForNode(cfg.HostApplication, node),
	}
}

// NodeMetricCollectPolicy returns the NodeMetric collection policy of a node with the given colocation strategy:
// its metric aggregation window, report interval, aggregation windows and memory collection policy.
func NodeMetricCollectPolicy(strategy ColocationStrategy) *slov1alpha1.NodeMetricCollectPolicy {
	s := strategy.DeepCopy()
	return &slov1alpha1.NodeMetricCollectPolicy{
		AggregateDurationSeconds: s.MetricAggregateDurationSeconds,
		ReportIntervalSeconds:    s.MetricReportIntervalSeconds,
		NodeAggregatePolicy:      s.MetricAggregatePolicy,
		NodeMemoryCollectPolicy:  s.MetricMemoryCollectPolicy,
	}
}

// firstMatch returns the index of the first of n node selectors that selects node, or -1. A nil selector, one
// that does not parse, or a nil node matches nothing.
func firstMatch(n int, selector func(int) *metav1.LabelSelector, node *corev1.Node) int {
	if node == nil {
		return -1
	}
	nodeLabels := labels.Set(node.Labels)
	for i := range n {
		ls := selector(i)
		if ls == nil {
			continue
		}
		s, err := metav1.LabelSelectorAsSelector(ls)
		if err == nil && s.Matches(nodeLabels) {
			return i
		}
	}
	return -1
}
