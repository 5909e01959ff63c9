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
// beyond their runtime quota for too long. The state lives in package cache; see README.md for the rules.
package elasticquota

import (
	"context"
	"fmt"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	corelisters "k8s.io/client-go/listers/core/v1"
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
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota/cache"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "ElasticQuota"

// ReasonInvalidElasticQuota is the reason of the Warning event on an ElasticQuota whose annotations do not
// parse.
const ReasonInvalidElasticQuota = "InvalidElasticQuota"

// Plugin is the ElasticQuota plugin. It implements PreFilter, Filter, PostFilter, Reserve, PreEnqueue,
// EnqueueExtensions (checked at build time in package scheduler, which registers it).
type Plugin struct {
	args    *config.ElasticQuotaArgs
	handle  fwk.Handle
	clock   clock.WithTicker
	manager *cache.Manager

	// client writes quota status; quotaLister lists the ElasticQuota objects; quotas feeds them to the
	// manager.
	client      versioned.Interface
	quotaLister schedlisters.ElasticQuotaLister
	quotas      *plugins.Feed[schedv1alpha1.ElasticQuota]
	// podLister reads the scheduler's pod informer, which the forgetter compares the manager with.
	podLister corelisters.PodLister

	// preemption is kube-scheduler's default preemption restricted to victims of the preemptor's quota.
	preemption *defaultpreemption.DefaultPreemption
	evaluator  *preemption.Evaluator

	// invalid holds, by quota name, the error of the last ElasticQuota the manager rejected.
	invalidMu sync.Mutex
	invalid   map[string]string

	// synced are the plugin's handlers of the scheduler's informers.
	synced plugins.Synced
	// metrics records what the plugin counts.
	metrics *metrics.Metrics
	// gauged are the quota, resource and type labels of the quota gauges set last, so that those of quotas
	// gone are removed. Only the status writer touches it.
	gauged map[[3]string]bool
	// gaugedStatus are the label values of the Koordinator-named status gauges set last.
	gaugedStatus map[[6]string]bool
}

func init() {
	// The plugin's gate goes into kube-scheduler's gate set, which --feature-gates sets.
	utilruntime.Must(features.AddSchedulerGates(utilfeature.DefaultMutableFeatureGate))
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// ElasticQuotas through the shared Koord informers, which it starts with the context the factory gets and
// waits for; its controllers run until that context ends.
func NewFactory(informers *crdinformers.Shared, opts ...plugins.Option) frameworkruntime.PluginFactory {
	o := plugins.NewOptions(opts...)
	return plugins.Factory(Name, validation.ValidateElasticQuotaArgs, func(ctx context.Context, args *config.ElasticQuotaArgs, h fwk.Handle) (*Plugin, error) {
		return newPlugin(ctx, args, h, informers, o)
	})
}

func newPlugin(ctx context.Context, args *config.ElasticQuotaArgs, h fwk.Handle, informers *crdinformers.Shared, o plugins.Options) (*Plugin, error) {
	p := &Plugin{
		metrics: o.Metrics,
		args:    args,
		handle:  h,
		clock:   o.Clock,
		manager: cache.NewManager(cache.Options{
			DefaultQuotaMax:     args.DefaultQuotaGroupMax,
			SystemQuotaMax:      args.SystemQuotaGroupMax,
			EnableMinQuotaScale: args.EnableMinQuotaScale,
			EnableRuntimeQuota:  args.EnableRuntimeQuota,
			// kube-scheduler's gate set, which --feature-gates has set by the time plugins are built.
			CountTerminatingPods: !utilfeature.DefaultFeatureGate.Enabled(features.ElasticQuotaIgnoreTerminatingPod),
			MultiQuotaTree:       utilfeature.DefaultFeatureGate.Enabled(features.MultiQuotaTree),
		}),
		invalid: map[string]string{},
	}
	client, err := informers.Client(h)
	if err != nil {
		return nil, err
	}
	p.client = client
	if err := p.setUpPreemption(ctx, h, o.Features); err != nil {
		return nil, err
	}
	if err := p.watchPodsAndNodes(h); err != nil {
		return nil, err
	}
	if err := p.watchQuotas(ctx, h, informers); err != nil {
		return nil, err
	}
	go p.runForgetter(ctx)
	o.Leadership.Run(ctx, "ElasticQuota status writer", p.runStatusWriter)
	if args.MonitorAllQuotas {
		// A revoker that starts leading counts delayEvictTime from its own first look at a quota, so a
		// takeover never evicts sooner than the old leader would have.
		o.Leadership.Run(ctx, "ElasticQuota revoker", p.runRevoker)
	}
	return p, nil
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

// HasSynced reports whether the manager has seen every pod and node the scheduler's informers listed at start.
func (p *Plugin) HasSynced() bool { return p.synced.HasSynced() }
