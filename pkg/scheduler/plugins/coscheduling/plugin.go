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

// Package coscheduling implements the Coscheduling plugin: gang scheduling. The pods of a gang (a PodGroup
// of scheduling.sigs.k8s.io, or pods carrying the gang.scheduling.koordinator.sh annotations) are placed all
// together or not at all: they wait in Permit until enough of them are assumed, and a Strict gang gives up
// the whole attempt when one member fails. The gangs' state lives in package cache; this package decides. See
// README.md for the rules.
package coscheduling

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	schedsigslisters "github.com/koord-dev/koord/pkg/client/listers/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "Coscheduling"

// statusDelay is how long a PodGroup's status change waits before it is written, so that the changes of many
// members make one write.
const statusDelay = time.Second

// Plugin is the Coscheduling plugin. It implements QueueSort, PreFilter, PostFilter, Permit, Reserve, PostBind,
// EnqueueExtensions, Sign (checked at build time in package scheduler, which registers it).
type Plugin struct {
	// runCtx is the context the factory got, which lives as long as the scheduler: retries of failed gangs
	// run under it.
	runCtx context.Context
	handle fwk.Handle
	clock  clock.WithDelayedExecution
	cache  *cache.Cache
	// checkCycle is false when args.SkipCheckScheduleCycle turns the schedule-cycle check off.
	checkCycle bool

	// podGroupLister lists the PodGroups; podGroups feeds them to the cache.
	podGroupLister schedsigslisters.PodGroupLister
	podGroups      *plugins.Feed[v1alpha1.PodGroup]
	client         versioned.Interface
	// queue holds the PodGroup status writes and the timeout marks to make.
	queue       workqueue.TypedRateLimitingInterface[workItem]
	statusDelay time.Duration
	// synced are the plugin's handlers of the scheduler's informers.
	synced plugins.Synced
	// metrics records what the plugin counts.
	metrics *metrics.Metrics
	// bindings are the binding infos PreBind writes.
	bindings bindings
	// executor preempts for gangs (kube-scheduler's preemption executor); nil unless args.EnablePreemption.
	executor *preemption.Executor
	// topology places gangs by network topology; nil unless args.AwareNetworkTopology.
	topology *networkTopology
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// PodGroups through informers, which it starts with the context the factory gets and waits for, and pods
// through the scheduler's informer factory.
func NewFactory(informers *crdinformers.Shared, opts ...plugins.Option) frameworkruntime.PluginFactory {
	return newFactory(informers, statusDelay, opts...)
}

// newFactory is NewFactory with PodGroup status writes delayed by delay; tests write at once.
func newFactory(informers *crdinformers.Shared, delay time.Duration, opts ...plugins.Option) frameworkruntime.PluginFactory {
	o := plugins.NewOptions(opts...)
	return plugins.Factory(Name, validation.ValidateCoschedulingArgs, func(ctx context.Context, args *config.CoschedulingArgs, h fwk.Handle) (*Plugin, error) {
		return newPlugin(ctx, args, h, informers, o, delay)
	})
}

func newPlugin(ctx context.Context, args *config.CoschedulingArgs, h fwk.Handle, informers *crdinformers.Shared, o plugins.Options, delay time.Duration) (*Plugin, error) {
	client, err := informers.Client(h)
	if err != nil {
		return nil, err
	}
	p := &Plugin{
		metrics: o.Metrics,
		runCtx:  ctx,
		handle:  h,
		clock:   o.Clock,
		cache: cache.NewCache(cache.Defaults{
			WaitTime:    args.DefaultTimeout.Duration,
			MatchPolicy: extension.GangMatchPolicy(args.DefaultMatchPolicy),
		}, o.Clock),
		checkCycle:  !args.SkipCheckScheduleCycle,
		client:      client,
		queue:       workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[workItem]()),
		statusDelay: delay,
	}
	if args.EnablePreemption {
		p.executor = preemption.NewExecutor(h, o.Features)
		// Every result is exported from the start, at 0, so that dashboards see 0 rather than no data.
		for _, r := range []string{preemptionPreempted, preemptionIneligible, preemptionOngoing, preemptionNotHelpful, preemptionError} {
			p.metrics.GangPreemptions.WithLabelValues(r)
		}
	}
	if args.AwareNetworkTopology {
		fw, ok := h.(framework.Framework)
		if !ok {
			return nil, fmt.Errorf("awareNetworkTopology needs kube-scheduler's framework as the plugin's handle, got %T", h)
		}
		p.topology = &networkTopology{framework: fw, client: client, plans: map[cache.ID]*gangPlan{}}
		if err := p.watchNetworkTopology(ctx, informers, h); err != nil {
			return nil, err
		}
		o.Leadership.Run(ctx, "ClusterNetworkTopology status writer", p.runTopologyStatus)
	}
	if err := p.watchPods(ctx, h); err != nil {
		return nil, err
	}
	if err := p.watchPodGroups(ctx, informers, h); err != nil {
		return nil, err
	}
	go func() {
		<-ctx.Done()
		p.queue.ShutDown()
	}()
	// A standby queues the same work from its informers, and its workers drain it once it leads.
	o.Leadership.Run(ctx, "Coscheduling status workers", func(ctx context.Context) { p.run(ctx, int(args.ControllerWorkers)) })
	p.metrics.ObserveGangs(profileName(h), p.cache.Census)
	return p, nil
}

// profileName is the name of the scheduling profile h belongs to, "" when h does not tell.
func profileName(h fwk.Handle) string {
	if f, ok := h.(interface{ ProfileName() string }); ok {
		return f.ProfileName()
	}
	return ""
}

// run starts the workers that write PodGroup status and timeout marks; they stop with ctx.
func (p *Plugin) run(ctx context.Context, workers int) {
	for range workers {
		go wait.UntilWithContext(ctx, p.work, time.Second)
	}
	klog.FromContext(ctx).V(2).Info("Started Coscheduling workers", "workers", workers)
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// HasSynced reports whether the cache has seen every pod the scheduler's informer listed at start.
func (p *Plugin) HasSynced() bool { return p.synced.HasSynced() }
