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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	_ "github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme" // kube-scheduler must be able to decode the args.
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "Reservation"

var (
	_ fwk.PreFilterPlugin   = &Plugin{}
	_ fwk.FilterPlugin      = &Plugin{}
	_ fwk.PostFilterPlugin  = &Plugin{}
	_ fwk.PreScorePlugin    = &Plugin{}
	_ fwk.ScorePlugin       = &Plugin{}
	_ fwk.ReservePlugin     = &Plugin{}
	_ fwk.PreBindPlugin     = &Plugin{}
	_ fwk.BindPlugin        = &Plugin{}
	_ fwk.EnqueueExtensions = &Plugin{}
)

// Plugin is the Reservation plugin. It also runs the reservation controller.
type Plugin struct {
	args   *config.ReservationArgs
	handle fwk.Handle
	clock  clock.WithTicker
	cache  *Cache

	// client writes Reservations; kube creates and deletes reserve pods and annotates owner pods.
	client versioned.Interface
	kube   kubernetes.Interface

	reservations schedlisters.ReservationLister
	pods         corelisters.PodLister
	nodes        corelisters.NodeLister

	// queue holds the names of the Reservations the controller has to look at.
	queue workqueue.TypedRateLimitingInterface[string]

	// podsSynced and nodesSynced report whether the pod and node informers have delivered their first list.
	podsSynced, nodesSynced func() bool
}

// Option configures the plugin factory.
type Option func(*options)

type options struct {
	clock clock.WithTicker
}

// WithClock makes the plugin and its controller tell time (ttl, expires, GC) by c.
func WithClock(c clock.WithTicker) Option {
	return func(o *options) { o.clock = c }
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// Reservations through the shared Koord informers, which it starts with the context the factory gets and waits
// for; its controller runs until that context ends.
func NewFactory(informers *crdinformers.Shared, opts ...Option) frameworkruntime.PluginFactory {
	metrics.Register()
	o := options{clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&o)
	}
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := newPlugin(ctx, obj, h, informers, o)
		if err != nil {
			return nil, err
		}
		p.startController(ctx)
		return p, nil
	}
}

// newPlugin builds the plugin and wires its informers; the controller is not started.
func newPlugin(ctx context.Context, obj runtime.Object, h fwk.Handle, informers *crdinformers.Shared, o options) (*Plugin, error) {
	args, ok := obj.(*config.ReservationArgs)
	if !ok {
		return nil, fmt.Errorf("want args of type ReservationArgs, got %T", obj)
	}
	if errs := validation.ValidateReservationArgs(field.NewPath("pluginConfig").Key(Name).Child("args"), args); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if h.SharedInformerFactory() == nil {
		return nil, errors.New("the framework handle has no informer factory")
	}
	if h.ClientSet() == nil {
		return nil, errors.New("the framework handle has no clientset")
	}
	p := &Plugin{
		args:   args,
		handle: h,
		clock:  o.clock,
		cache:  NewCache(args.IgnoredResources),
		kube:   h.ClientSet(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "reservation", Clock: o.clock},
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
	return p, nil
}

// watchReservations feeds Reservations to the cache and the controller, and waits until the cache has seen
// every Reservation.
func (p *Plugin) watchReservations(ctx context.Context, h fwk.Handle, informers *crdinformers.Shared) error {
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	informer := factory.Scheduling().V1alpha1().Reservations()
	p.reservations = informer.Lister()
	update := func(obj any) {
		r, ok := obj.(*schedv1alpha1.Reservation)
		if !ok {
			return
		}
		if err := p.cache.UpdateReservation(r); err != nil {
			logger.V(2).Info("Ignored owners of a Reservation", "reservation", klog.KObj(r), "err", err)
		}
		p.queue.Add(r.Name)
	}
	reg, err := informer.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    update,
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if r, ok := obj.(*schedv1alpha1.Reservation); ok {
				p.cache.DeleteReservation(r.UID)
				p.queue.Add(r.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch Reservations: %w", err)
	}
	if err := informers.Start(ctx); err != nil {
		return err
	}
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return reg.HasSynced(), nil }); err != nil {
		return fmt.Errorf("wait for Reservations: %w", err)
	}
	return nil
}

// watchPodsAndNodes follows owner pods (allocations, rebuilt from their reservation-allocated annotation on
// start), reserve pods and node deletions. The scheduler starts these informers after building plugins.
func (p *Plugin) watchPodsAndNodes(ctx context.Context, h fwk.Handle) error {
	logger := klog.FromContext(ctx)
	pods := h.SharedInformerFactory().Core().V1().Pods()
	p.pods = pods.Lister()
	podReg, err := pods.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.podChanged(logger, obj, false) },
		UpdateFunc: func(_, obj any) { p.podChanged(logger, obj, false) },
		DeleteFunc: func(obj any) { p.podChanged(logger, obj, true) },
	})
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	nodes := h.SharedInformerFactory().Core().V1().Nodes()
	p.nodes = nodes.Lister()
	nodeReg, err := nodes.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if node, ok := obj.(*corev1.Node); ok {
				for _, r := range p.cache.Snapshot().onNode(node.Name) {
					p.queue.Add(r.name)
				}
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	p.podsSynced, p.nodesSynced = podReg.HasSynced, nodeReg.HasSynced
	return nil
}

// podChanged keeps the allocations of owner pods and wakes the controller for reserve pods and owners.
func (p *Plugin) podChanged(logger klog.Logger, obj any, deleted bool) {
	pod := podOf(obj)
	if pod == nil {
		return
	}
	if isReservePod(pod) {
		p.queue.Add(pod.Labels[LabelReservationName])
		return
	}
	if deleted || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil {
		// A terminating owner releases what it allocated.
		if a, ok := p.cache.Forget(pod.UID); ok {
			p.queue.Add(a.resvName)
		}
		return
	}
	if pod.Spec.NodeName == "" {
		return
	}
	a, err := extension.GetReservationAllocated(pod.Annotations)
	if err != nil {
		logger.V(2).Info("Ignored a malformed annotation of a pod", "pod", klog.KObj(pod), "err", err)
		return
	}
	if a == nil {
		return
	}
	if p.cache.SetBound(allocation{
		pod:      podRef(pod),
		resvUID:  a.UID,
		resvName: a.Name,
		requests: podResources(pod, p.cache.ignored),
	}) && a.Name != "" {
		p.queue.Add(a.Name)
	}
}

// podRef is the object reference of pod in status.currentOwners.
func podRef(pod *corev1.Pod) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
}

// podOf returns the pod of an event, tombstones of deleted pods included, or nil.
func podOf(obj any) *corev1.Pod {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o
	case toolscache.DeletedFinalStateUnknown:
		pod, _ := o.Obj.(*corev1.Pod)
		return pod
	}
	return nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// reportError hands an unexpected error to the runtime's error handler.
func reportError(logger klog.Logger, err error, msg string, kv ...any) {
	utilruntime.HandleErrorWithLogger(logger, err, msg, kv...)
}
