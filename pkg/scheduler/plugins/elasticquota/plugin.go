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

// Package elasticquota implements the ElasticQuota plugin: pods are charged to quotas (ElasticQuota objects
// arranged in trees), a pod is admitted only while its quota's used resources plus its request stay within
// the quota's runtime quota, preemption stays inside a quota, and a controller takes back what quotas use
// beyond their runtime quota for too long. The state lives in package core; see README.md for the rules.
package elasticquota

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"

	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	_ "github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme" // kube-scheduler must be able to decode the args.
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota/core"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "ElasticQuota"

// ReasonInvalidElasticQuota is the reason of the Warning event on an ElasticQuota whose annotations do not
// parse.
const ReasonInvalidElasticQuota = "InvalidElasticQuota"

var (
	_ fwk.PreFilterPlugin   = &Plugin{}
	_ fwk.FilterPlugin      = &Plugin{}
	_ fwk.PostFilterPlugin  = &Plugin{}
	_ fwk.ReservePlugin     = &Plugin{}
	_ fwk.PreEnqueuePlugin  = &Plugin{}
	_ fwk.EnqueueExtensions = &Plugin{}
)

// Plugin is the ElasticQuota plugin.
type Plugin struct {
	args    *config.ElasticQuotaArgs
	handle  fwk.Handle
	clock   clock.WithTicker
	manager *core.Manager

	// client writes quota status; quotas lists the ElasticQuota objects.
	client versioned.Interface
	quotas schedlisters.ElasticQuotaLister

	// preemption is kube-scheduler's default preemption restricted to victims of the preemptor's quota.
	preemption *defaultpreemption.DefaultPreemption
	evaluator  *preemption.Evaluator

	// invalid holds, by quota name, the error of the last ElasticQuota the manager rejected.
	invalidMu sync.Mutex
	invalid   map[string]string

	// podsSynced and nodesSynced report whether the manager has seen every pod and node listed at start.
	podsSynced, nodesSynced func() bool
}

// Option configures the plugin factory.
type Option func(*options)

type options struct {
	clock    clock.WithTicker
	features *plfeature.Features
}

// WithClock makes the plugin's controllers tell time by c.
func WithClock(c clock.WithTicker) Option {
	return func(o *options) { o.clock = c }
}

// WithFeatures gives the plugin kube-scheduler's feature gates (for preemption) instead of reading them from
// the process's feature gate.
func WithFeatures(fts plfeature.Features) Option {
	return func(o *options) { o.features = &fts }
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// ElasticQuotas through the shared Koord informers, which it starts with the context the factory gets and
// waits for; its controllers run until that context ends.
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
	args, ok := obj.(*config.ElasticQuotaArgs)
	if !ok {
		return nil, fmt.Errorf("want args of type ElasticQuotaArgs, got %T", obj)
	}
	if errs := validation.ValidateElasticQuotaArgs(field.NewPath("pluginConfig").Key(Name).Child("args"), args); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if h.SharedInformerFactory() == nil {
		return nil, errors.New("the framework handle has no informer factory")
	}
	p := &Plugin{
		args:   args,
		handle: h,
		clock:  o.clock,
		manager: core.NewManager(core.Options{
			DefaultQuotaMax:     args.DefaultQuotaGroupMax,
			SystemQuotaMax:      args.SystemQuotaGroupMax,
			EnableMinQuotaScale: args.EnableMinQuotaScale,
			EnableRuntimeQuota:  args.EnableRuntimeQuota,
		}),
		invalid: map[string]string{},
	}
	client, err := informers.Client(h)
	if err != nil {
		return nil, err
	}
	p.client = client
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	if o.features != nil {
		fts = *o.features
	}
	if err := p.setUpPreemption(ctx, h, fts); err != nil {
		return nil, err
	}
	if err := p.watchQuotas(ctx, h, informers); err != nil {
		return nil, err
	}
	if err := p.watchPodsAndNodes(h); err != nil {
		return nil, err
	}
	go p.runStatusWriter(ctx)
	if args.MonitorAllQuotas {
		go p.runRevoker(ctx)
	}
	return p, nil
}

// watchQuotas feeds ElasticQuota events to the manager and waits until it has seen every quota.
func (p *Plugin) watchQuotas(ctx context.Context, h fwk.Handle, informers *crdinformers.Shared) error {
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	informer := factory.SchedulingSigs().V1alpha1().ElasticQuotas()
	p.quotas = informer.Lister()
	update := func(obj any) {
		eq, ok := obj.(*schedv1alpha1.ElasticQuota)
		if !ok {
			return
		}
		p.quotaParsed(logger, eq, p.manager.UpdateQuota(eq))
	}
	reg, err := informer.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    update,
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if eq, ok := obj.(*schedv1alpha1.ElasticQuota); ok {
				p.manager.DeleteQuota(eq.Name)
				p.quotaParsed(logger, eq, nil)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch ElasticQuotas: %w", err)
	}
	if err := informers.Start(ctx); err != nil {
		return err
	}
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return reg.HasSynced(), nil }); err != nil {
		return fmt.Errorf("wait for ElasticQuotas: %w", err)
	}
	return nil
}

// quotaParsed reports an ElasticQuota the manager rejected, in the log and as a Warning event on the object,
// once per distinct error: the plugin's own status patches bring the same object back every second.
func (p *Plugin) quotaParsed(logger klog.Logger, eq *schedv1alpha1.ElasticQuota, err error) {
	p.invalidMu.Lock()
	defer p.invalidMu.Unlock()
	if err == nil {
		delete(p.invalid, eq.Name)
		return
	}
	if p.invalid[eq.Name] == err.Error() {
		return
	}
	p.invalid[eq.Name] = err.Error()
	utilruntime.HandleErrorWithLogger(logger, err, "Ignored an invalid ElasticQuota, its last good configuration stays", "elasticQuota", klog.KObj(eq))
	if rec := p.handle.EventRecorder(); rec != nil {
		rec.Eventf(eq, nil, corev1.EventTypeWarning, ReasonInvalidElasticQuota, "Parse", "Ignored, the last good configuration stays: %v", err)
	}
}

// watchPodsAndNodes feeds pods (pending and assigned) and nodes to the manager. The scheduler starts its
// informers after building plugins.
func (p *Plugin) watchPodsAndNodes(h fwk.Handle) error {
	podReg, err := h.SharedInformerFactory().Core().V1().Pods().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.podChanged(obj) },
		UpdateFunc: func(_, obj any) { p.podChanged(obj) },
		DeleteFunc: func(obj any) {
			if pod := podOf(obj); pod != nil {
				p.manager.DeletePod(pod.UID)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	nodeReg, err := h.SharedInformerFactory().Core().V1().Nodes().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.nodeChanged(obj) },
		UpdateFunc: func(_, obj any) { p.nodeChanged(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if node, ok := obj.(*corev1.Node); ok {
				p.manager.DeleteNode(node.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	p.podsSynced, p.nodesSynced = podReg.HasSynced, nodeReg.HasSynced
	return nil
}

func (p *Plugin) podChanged(obj any) {
	if pod, ok := obj.(*corev1.Pod); ok {
		p.manager.UpdatePod(pod)
	}
}

func (p *Plugin) nodeChanged(obj any) {
	if node, ok := obj.(*corev1.Node); ok {
		p.manager.SetNode(node.Name, node.Status.Allocatable)
	}
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

// setUpPreemption builds kube-scheduler's default preemption, with its candidate settings, restricted to
// victims this plugin allows.
func (p *Plugin) setUpPreemption(ctx context.Context, h fwk.Handle, fts plfeature.Features) error {
	dp, err := defaultpreemption.New(ctx, &schedconfig.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}, h, fts)
	if err != nil {
		return fmt.Errorf("set up preemption: %w", err)
	}
	dp.IsEligiblePod = p.isEligibleVictim
	p.preemption = dp
	p.evaluator = preemption.NewEvaluator(Name, h, dp, dp.Executor)
	return nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }
