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

// Package loadaware implements the LoadAwareScheduling plugin: it keeps pods off nodes whose measured usage
// (from NodeMetric), plus the estimated usage of pods placed there since, plus the incoming pod's estimate,
// would exceed a threshold, and prefers the least used nodes. See README.md for the rules.
package loadaware

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/estimator"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "LoadAwareScheduling"

// Plugin is the LoadAwareScheduling plugin. It implements Filter, Score, Reserve, EnqueueExtensions, Sign (checked
// at build time in package scheduler, which registers it).
type Plugin struct {
	args  *config.LoadAwareSchedulingArgs
	clock clock.PassiveClock

	resources quantity.Names
	estimator *estimator.Estimator
	// weights are args.ResourceWeights by resource index; weightSum includes the dominant resource weight.
	weights   []int64
	weightSum int64
	// expiration is args.NodeMetricExpirationSeconds.
	expiration time.Duration
	// estimateAfterScheduled and estimateAfterInitialized are the args' estimation seconds.
	estimateAfterScheduled   time.Duration
	estimateAfterInitialized time.Duration

	// defaultThresholds are the thresholds of nodes without a valid usage-thresholds annotation.
	defaultThresholds *thresholdProfile

	// rejections count Filter's rejections by resource index; rejectionsExpired those for a stale NodeMetric.
	rejections        []prometheus.Counter
	rejectionsExpired prometheus.Counter

	// nodes holds the NodeMetric and the assigned pods of every node; nodeMetrics feeds it NodeMetrics.
	nodes       *cache.Nodes
	nodeMetrics *plugins.Feed[slov1alpha1.NodeMetric]
	// current is the state of the pod of the last scheduling cycle, signed the last pod signed.
	current atomic.Pointer[podState]
	signed  atomic.Pointer[signedPod]
	// synced are the plugin's handlers of the scheduler's informers.
	synced plugins.Synced
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// NodeMetrics through informers, which it starts with the context the factory gets and waits for.
func NewFactory(informers *crdinformers.Shared, opts ...plugins.Option) frameworkruntime.PluginFactory {
	o := plugins.NewOptions(opts...)
	return plugins.Factory(Name, validation.ValidateLoadAwareSchedulingArgs, func(ctx context.Context, args *config.LoadAwareSchedulingArgs, h fwk.Handle) (*Plugin, error) {
		return newPlugin(ctx, args, h, informers, o)
	})
}

func newPlugin(ctx context.Context, args *config.LoadAwareSchedulingArgs, h fwk.Handle, informers *crdinformers.Shared, o plugins.Options) (*Plugin, error) {
	resources := resourcesOf(args)
	p := &Plugin{
		args:                     args,
		clock:                    o.Clock,
		resources:                resources,
		estimator:                estimator.New(resources, args.EstimatedScalingFactors),
		weights:                  resources.VectorOf(args.ResourceWeights),
		weightSum:                args.DominantResourceWeight,
		expiration:               time.Duration(args.NodeMetricExpirationSeconds) * time.Second,
		estimateAfterScheduled:   time.Duration(args.EstimatedSecondsAfterPodScheduled) * time.Second,
		estimateAfterInitialized: time.Duration(args.EstimatedSecondsAfterInitialized) * time.Second,
		nodes:                    cache.NewNodes(resources),
	}
	for _, w := range p.weights {
		p.weightSum += w
	}
	p.defaultThresholds = p.profileFromArgs()
	for _, name := range resources {
		p.rejections = append(p.rejections, o.Metrics.LoadAwareRejections.WithLabelValues(string(name)))
	}
	p.rejectionsExpired = o.Metrics.LoadAwareRejections.WithLabelValues("expired")
	if err := p.watchPods(ctx, h); err != nil {
		return nil, err
	}
	if err := p.watchNodeMetrics(ctx, h, informers); err != nil {
		return nil, err
	}
	return p, nil
}

// resourcesOf lists the resources the plugin works on: cpu and memory, then, sorted, every other resource
// the args name.
func resourcesOf(args *config.LoadAwareSchedulingArgs) quantity.Names {
	others := sets.New[corev1.ResourceName]()
	for _, m := range []map[corev1.ResourceName]int64{args.ResourceWeights, args.UsageThresholds, args.ProdUsageThresholds, args.EstimatedScalingFactors} {
		others.Insert(slices.Collect(maps.Keys(m))...)
	}
	if a := args.Aggregated; a != nil {
		others.Insert(slices.Collect(maps.Keys(a.UsageThresholds))...)
	}
	others.Insert(args.SupportedResources...)
	others.Delete(corev1.ResourceCPU, corev1.ResourceMemory)
	return append(quantity.Names{corev1.ResourceCPU, corev1.ResourceMemory}, sets.List(others)...)
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// HasSynced reports whether the plugin has seen every pod the scheduler's informer listed at start.
func (p *Plugin) HasSynced() bool { return p.synced.HasSynced() }
