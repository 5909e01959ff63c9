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
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	_ "github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme" // kube-scheduler must be able to decode the args.
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/estimator"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "LoadAwareScheduling"

var (
	_ fwk.FilterPlugin      = &Plugin{}
	_ fwk.ScorePlugin       = &Plugin{}
	_ fwk.ReservePlugin     = &Plugin{}
	_ fwk.EnqueueExtensions = &Plugin{}
	_ fwk.SignPlugin        = &Plugin{}
)

// Plugin is the LoadAwareScheduling plugin.
type Plugin struct {
	args  *config.LoadAwareSchedulingArgs
	clock clock.PassiveClock

	resources estimator.Resources
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
	rejections        []k8smetrics.CounterMetric
	rejectionsExpired k8smetrics.CounterMetric

	// nodes holds the NodeMetric and the assigned pods of every node.
	nodes *cache.Nodes
	// current is the state of the pod of the last scheduling cycle, signed the last pod signed.
	current atomic.Pointer[podState]
	signed  atomic.Pointer[signedPod]
	// podsSynced reports whether the assign cache has seen every pod the informer listed at start.
	podsSynced func() bool
}

// Option configures the plugin factory.
type Option func(*options)

type options struct {
	clock clock.PassiveClock
}

// WithClock makes the plugin tell time, and so the age of NodeMetrics and of assignments, by c.
func WithClock(c clock.PassiveClock) Option {
	return func(o *options) { o.clock = c }
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// NodeMetrics through informers, which it starts with the context the factory gets and waits for.
func NewFactory(informers *crdinformers.Shared, opts ...Option) frameworkruntime.PluginFactory {
	metrics.Register()
	o := options{clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&o)
	}
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return newPlugin(ctx, obj, h, informers, o)
	}
}

func newPlugin(ctx context.Context, obj runtime.Object, h fwk.Handle, informers *crdinformers.Shared, o options) (*Plugin, error) {
	args, ok := obj.(*config.LoadAwareSchedulingArgs)
	if !ok {
		return nil, fmt.Errorf("want args of type LoadAwareSchedulingArgs, got %T", obj)
	}
	if errs := validation.ValidateLoadAwareSchedulingArgs(field.NewPath("pluginConfig").Key(Name).Child("args"), args); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	resources := resourcesOf(args)
	p := &Plugin{
		args:                     args,
		clock:                    o.clock,
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
		p.rejections = append(p.rejections, metrics.LoadAwareRejections.WithLabelValues(string(name)))
	}
	p.rejectionsExpired = metrics.LoadAwareRejections.WithLabelValues("expired")

	factory, err := informers.Factory(h)
	if err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	changed := func(oldObj, newObj any) {
		if err := p.nodeMetricChanged(oldObj, newObj); err != nil {
			utilruntime.HandleErrorWithLogger(logger, err, "Ignored an unexpected NodeMetric event")
		}
	}
	reg, err := factory.Slo().V1alpha1().NodeMetrics().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { changed(nil, obj) },
		UpdateFunc: changed,
		DeleteFunc: func(obj any) { changed(obj, nil) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch NodeMetrics: %w", err)
	}
	if err := informers.Start(ctx); err != nil {
		return nil, err
	}
	// The informer has synced; its handlers follow within moments.
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return reg.HasSynced(), nil }); err != nil {
		return nil, fmt.Errorf("wait for NodeMetrics: %w", err)
	}
	if err := p.watchPods(ctx, h); err != nil {
		return nil, err
	}
	return p, nil
}

// resourcesOf lists the resources the plugin works on: cpu and memory, then, sorted, every other resource
// the args name.
func resourcesOf(args *config.LoadAwareSchedulingArgs) estimator.Resources {
	others := sets.New[corev1.ResourceName]()
	for _, m := range []map[corev1.ResourceName]int64{args.ResourceWeights, args.UsageThresholds, args.ProdUsageThresholds, args.EstimatedScalingFactors} {
		others.Insert(slices.Collect(maps.Keys(m))...)
	}
	if a := args.Aggregated; a != nil {
		others.Insert(slices.Collect(maps.Keys(a.UsageThresholds))...)
	}
	others.Insert(args.SupportedResources...)
	others.Delete(corev1.ResourceCPU, corev1.ResourceMemory)
	return append(estimator.Resources{corev1.ResourceCPU, corev1.ResourceMemory}, sets.List(others)...)
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }
