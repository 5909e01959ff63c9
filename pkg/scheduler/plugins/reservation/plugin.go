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

// Package reservation implements the Reservation plugin and its controller. A Reservation is placed by a
// reserve pod (a real pod built from spec.template) that kube-scheduler schedules like any pod; the plugin's
// Bind turns the placement into the Reservation's status instead of binding the pod. Available reservations
// then hold their unallocated resources against every pod except their owners, which allocate them. See
// README.md for the rules.
package reservation

import (
	"context"
	"errors"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "Reservation"

// Plugin is the Reservation plugin. It implements PreFilter, Filter, PostFilter, PreScore, Score, Reserve,
// PreBind, Bind, EnqueueExtensions (checked at build time in package scheduler, which registers it). It also runs
// the reservation controller.
type Plugin struct {
	args   *config.ReservationArgs
	handle fwk.Handle
	clock  clock.WithTicker
	cache  *cache.Cache

	// client writes Reservations; kube creates and deletes reserve pods and annotates owner pods.
	client versioned.Interface
	kube   kubernetes.Interface

	// reservationLister lists the Reservations; reservations feeds them to the cache.
	reservationLister schedlisters.ReservationLister
	reservations      *plugins.Feed[schedv1alpha1.Reservation]
	pods              corelisters.PodLister
	nodes             corelisters.NodeLister

	// queue holds the names of the Reservations the controller has to look at.
	queue workqueue.TypedRateLimitingInterface[string]

	// synced are the plugin's handlers of the scheduler's informers; nodesSynced reports whether the node
	// handler has seen the nodes listed at start.
	synced      plugins.Synced
	nodesSynced func() bool
	// metrics records what the plugin counts.
	metrics *metrics.Metrics
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// Reservations through the shared Koord informers, which it starts with the context the factory gets and waits
// for; its controller runs until that context ends.
func NewFactory(informers *crdinformers.Shared, opts ...plugins.Option) frameworkruntime.PluginFactory {
	return newFactory(informers, true, opts...)
}

// newFactory is NewFactory, with the controller started when controller is set; tests that call reconcile
// themselves leave it stopped.
func newFactory(informers *crdinformers.Shared, controller bool, opts ...plugins.Option) frameworkruntime.PluginFactory {
	o := plugins.NewOptions(opts...)
	return plugins.Factory(Name, validation.ValidateReservationArgs, func(ctx context.Context, args *config.ReservationArgs, h fwk.Handle) (*Plugin, error) {
		p, err := newPlugin(ctx, args, h, informers, o)
		if err != nil {
			return nil, err
		}
		if controller {
			o.Leadership.Run(ctx, "Reservation controller", p.startController)
		}
		return p, nil
	})
}

// newPlugin builds the plugin and wires its informers; the controller is not started.
func newPlugin(ctx context.Context, args *config.ReservationArgs, h fwk.Handle, informers *crdinformers.Shared, o plugins.Options) (*Plugin, error) {
	if h.ClientSet() == nil {
		return nil, errors.New("the framework handle has no clientset")
	}
	p := &Plugin{
		metrics: o.Metrics,
		args:    args,
		handle:  h,
		clock:   o.Clock,
		cache:   cache.NewCache(args.IgnoredResources),
		kube:    h.ClientSet(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "reservation", Clock: o.Clock},
		),
	}
	go func() {
		<-ctx.Done()
		p.queue.ShutDown()
	}()
	client, err := informers.Client(h)
	if err != nil {
		return nil, err
	}
	p.client = client
	if err := p.watchPodsAndNodes(ctx, h); err != nil {
		return nil, err
	}
	if err := p.watchReservations(ctx, h, informers); err != nil {
		return nil, err
	}
	p.metrics.ObserveReservations(p.reservationLister)
	return p, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// HasSynced reports whether the plugin has seen every pod and node the scheduler's informers listed at start.
func (p *Plugin) HasSynced() bool { return p.synced.HasSynced() }

// reportError hands an unexpected error to the runtime's error handler.
func reportError(logger klog.Logger, err error, msg string, kv ...any) {
	utilruntime.HandleErrorWithLogger(logger, err, msg, kv...)
}
