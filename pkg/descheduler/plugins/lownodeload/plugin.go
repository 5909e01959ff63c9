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

// Package lownodeload is Koordinator's LowNodeLoad descheduler plugin: each round it sorts the nodes of each
// node pool by the usage their NodeMetrics report into cool (under the low thresholds), hot (above the high
// thresholds) and in between, for all pods and for Prod pods; a node hot for enough rounds in a row
// (anomalyCondition) gives up pods, the least important and best at removing its excess first, while the cool
// nodes have room under their high thresholds for their usage and (nodeFit) one of them fits the pod.
package lownodeload

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	slov1alpha1listers "github.com/koord-dev/koord/pkg/client/listers/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	"github.com/koord-dev/koord/pkg/descheduler/framework"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Name is the plugin's name, Koordinator's.
const Name = config.LowNodeLoadName

// Plugin is LowNodeLoad.
type Plugin struct {
	handle      framework.Handle
	args        *config.LowNodeLoadArgs
	nodeMetrics slov1alpha1listers.NodeMetricLister
	podFilter   podutil.FilterFunc
	pools       []pool
	metrics     *Metrics
	// nodeDetectors and prodDetectors count hot rounds per node, of all pods and of Prod pods.
	nodeDetectors, prodDetectors *detectors
}

// pool is a node pool with its selector parsed.
type pool struct {
	*config.LowNodeLoadNodePool
	selector labels.Selector
}

var _ frameworktypes.BalancePlugin = &Plugin{}

// Factory returns the plugin's factory for the framework's registry; m may be nil (private metrics).
func Factory(m *Metrics) framework.PluginFactory {
	return func(ctx context.Context, obj runtime.Object, h frameworktypes.Handle) (frameworktypes.Plugin, error) {
		args, ok := obj.(*config.LowNodeLoadArgs)
		if !ok {
			return nil, fmt.Errorf("want args of type LowNodeLoadArgs, got %T", obj)
		}
		handle, ok := h.(framework.Handle)
		if !ok {
			return nil, fmt.Errorf("%s needs koord-descheduler's framework handle, got %T", Name, h)
		}
		return New(args, handle, m)
	}
}

// New builds the plugin from defaulted, validated arguments.
func New(args *config.LowNodeLoadArgs, h framework.Handle, m *Metrics) (*Plugin, error) {
	if m == nil {
		m = NewMetrics()
	}
	podFilter, err := podFilterOf(args, h.Evictor().Filter)
	if err != nil {
		return nil, err
	}
	pl := &Plugin{
		handle:        h,
		args:          args,
		nodeMetrics:   h.KoordSharedInformerFactory().Slo().V1alpha1().NodeMetrics().Lister(),
		podFilter:     podFilter,
		metrics:       m,
		nodeDetectors: newDetectors(args.DetectorCacheTimeout.Duration),
		prodDetectors: newDetectors(args.DetectorCacheTimeout.Duration),
	}
	for i := range args.NodePools {
		p := &args.NodePools[i]
		sel := labels.Everything()
		if p.NodeSelector != nil {
			if sel, err = metav1.LabelSelectorAsSelector(p.NodeSelector); err != nil {
				return nil, fmt.Errorf("node pool %s: node selector: %w", p.Name, err)
			}
		}
		pl.pools = append(pl.pools, pool{LowNodeLoadNodePool: p, selector: sel})
	}
	return pl, nil
}

// podFilterOf combines the evictor's filter, the pod selectors (a pod must match one) and the evictable
// namespaces.
func podFilterOf(args *config.LowNodeLoadArgs, evictorFilter podutil.FilterFunc) (podutil.FilterFunc, error) {
	var selectors []labels.Selector
	for _, s := range args.PodSelectors {
		if s.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(s.Selector)
		if err != nil {
			return nil, fmt.Errorf("pod selector %s: %w", s.Name, err)
		}
		selectors = append(selectors, sel)
	}
	bySelector := func(p *corev1.Pod) bool {
		if len(selectors) == 0 {
			return true
		}
		for _, sel := range selectors {
			if sel.Matches(labels.Set(p.Labels)) {
				return true
			}
		}
		return false
	}
	o := podutil.NewOptions().WithFilter(podutil.WrapFilterFuncs(evictorFilter, bySelector))
	if ns := args.EvictableNamespaces; ns != nil {
		o = o.WithNamespaces(sets.New(ns.Include...)).WithoutNamespaces(sets.New(ns.Exclude...))
	}
	f, err := o.BuildFilterFunc()
	if err != nil {
		return nil, fmt.Errorf("build pod filter: %w", err)
	}
	return f, nil
}

// Name returns the plugin's name.
func (pl *Plugin) Name() string { return Name }

// Balance runs one round over nodes, pool by pool; a node found hot in one pool is left out of the next.
func (pl *Plugin) Balance(ctx context.Context, nodes []*corev1.Node) *frameworktypes.Status {
	logger := logr.FromContextOrDiscard(ctx).WithValues("plugin", Name)
	if *pl.args.Paused {
		logger.V(2).Info("LowNodeLoad is paused")
		return nil
	}
	now := pl.handle.Clock().Now()
	pl.nodeDetectors.gc(now)
	pl.prodDetectors.gc(now)
	processed := sets.New[string]()
	for _, p := range pl.pools {
		plog := logger.WithValues("nodePool", p.Name)
		pl.balancePool(logr.NewContext(ctx, plog), p, nodes, processed, now)
	}
	return nil
}

// usages reads the usage of nodes from their NodeMetrics; nodes without a fresh one are left out (and
// logged): their usage is not known.
func (pl *Plugin) usages(ctx context.Context, nodes []*corev1.Node, resources []corev1.ResourceName, now time.Time) []*nodeUsage {
	logger := logr.FromContextOrDiscard(ctx)
	expiration := time.Duration(*pl.args.NodeMetricExpirationSeconds) * time.Second
	out := make([]*nodeUsage, 0, len(nodes))
	for _, n := range nodes {
		metric, err := pl.nodeMetrics.Get(n.Name)
		if err != nil {
			logger.V(4).Info("Node left out: no NodeMetric", "node", n.Name, "err", err)
			continue
		}
		if metricExpired(metric, expiration, now) {
			logger.V(4).Info("Node left out: NodeMetric expired", "node", n.Name, "updateTime", metricTime(metric), "expiration", expiration)
			continue
		}
		pods, err := podutil.ListPodsOnANode(n.Name, pl.handle.GetPodsAssignedToNodeFunc(), nil)
		if err != nil {
			logger.Error(err, "Node left out: cannot list its pods", "node", n.Name)
			continue
		}
		alloc, err := allocatableOf(n)
		if err != nil {
			logger.Error(err, "Using the node's status.allocatable", "node", n.Name)
		}
		u := usageOf(n, pods, metric, resources)
		u.allocatable = quantity.Amounts{}
		for _, r := range resources {
			u.allocatable[r] = quantity.ValueIn(alloc, r)
		}
		u.allocatable[corev1.ResourcePods] = quantity.ValueIn(alloc, corev1.ResourcePods)
		out = append(out, u)
	}
	return out
}

// selectNodes returns the nodes a pool selects that no earlier pool found hot.
func selectNodes(p pool, nodes []*corev1.Node, processed sets.Set[string]) []*corev1.Node {
	out := make([]*corev1.Node, 0, len(nodes))
	for _, n := range nodes {
		if !processed.Has(n.Name) && p.selector.Matches(labels.Set(n.Labels)) {
			out = append(out, n)
		}
	}
	return out
}

// metricTime is when a NodeMetric was last updated, for logs ("never" when it was not).
func metricTime(m *slov1alpha1.NodeMetric) string {
	if m.Status.UpdateTime == nil {
		return "never"
	}
	return m.Status.UpdateTime.UTC().Format(time.RFC3339)
}
