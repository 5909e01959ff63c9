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

package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	promapi "github.com/prometheus/client_golang/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/descheduler/pkg/descheduler/metricscollector"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	koordinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

// Options are what the framework needs to build and run the profiles.
type Options struct {
	// Config is the defaulted, validated configuration.
	Config *config.DeschedulerConfiguration
	// Registry builds plugins by name.
	Registry map[string]PluginFactory
	// Client talks to the apiserver.
	Client kubernetes.Interface
	// Informers and KoordInformers are started by Start before the first round.
	Informers      informers.SharedInformerFactory
	KoordInformers koordinformers.SharedInformerFactory
	// Recorder records Events.
	Recorder events.EventRecorder
	// Clock tells the time and paces the rounds.
	Clock clock.WithTicker
}

// Descheduler runs the configuration's profiles every deschedulingInterval.
type Descheduler struct {
	o        Options
	profiles []*profile
	limits   *roundLimits
	getPods  podutil.GetPodsAssignedToNodeFunc
	nodes    func() ([]*corev1.Node, error)
	selector labels.Selector
}

// profile is one profile's plugins.
type profile struct {
	name       string
	selector   labels.Selector
	deschedule []frameworktypes.DeschedulePlugin
	balance    []frameworktypes.BalancePlugin
	evictor    *evictor
}

// New builds every profile's plugins. Informers the plugins ask for are registered with the factories here;
// Start starts them.
func New(ctx context.Context, o Options) (*Descheduler, error) {
	podInformer := o.Informers.Core().V1().Pods().Informer()
	getPods, err := podutil.BuildGetPodsAssignedToNodeFunc(podInformer)
	if err != nil {
		return nil, fmt.Errorf("index pods by node: %w", err)
	}
	nodeLister := o.Informers.Core().V1().Nodes().Lister()
	d := &Descheduler{
		o: o, limits: newRoundLimits(o.Config), getPods: getPods,
		nodes:    func() ([]*corev1.Node, error) { return nodeLister.List(labels.Everything()) },
		selector: labels.Everything(),
	}
	if o.Config.NodeSelector != nil {
		if d.selector, err = metav1.LabelSelectorAsSelector(o.Config.NodeSelector); err != nil {
			return nil, fmt.Errorf("nodeSelector: %w", err)
		}
	}
	for i := range o.Config.Profiles {
		p, err := d.newProfile(ctx, &o.Config.Profiles[i])
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", o.Config.Profiles[i].Name, err)
		}
		d.profiles = append(d.profiles, p)
	}
	return d, nil
}

func (d *Descheduler) newProfile(ctx context.Context, cp *config.DeschedulerProfile) (*profile, error) {
	p := &profile{name: cp.Name, selector: labels.Everything(), evictor: &evictor{profile: cp.Name, limits: d.limits}}
	if cp.NodeSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(cp.NodeSelector)
		if err != nil {
			return nil, fmt.Errorf("nodeSelector: %w", err)
		}
		p.selector = sel
	}
	args := map[string]*config.PluginConfig{}
	for i := range cp.PluginConfig {
		args[cp.PluginConfig[i].Name] = &cp.PluginConfig[i]
	}
	instances := map[string]frameworktypes.Plugin{}
	get := func(name string) (frameworktypes.Plugin, error) {
		if pl, ok := instances[name]; ok {
			return pl, nil
		}
		factory, ok := d.o.Registry[name]
		if !ok {
			return nil, fmt.Errorf("plugin %s is not supported by koord-descheduler", name)
		}
		h := &handle{d: d, evictor: p.evictor, id: cp.Name + "/" + name}
		var obj runtime.Object
		if a := args[name]; a != nil {
			obj = a.Args.Object
		}
		pl, err := factory(ctx, obj, h)
		if err != nil {
			return nil, fmt.Errorf("build plugin %s: %w", name, err)
		}
		instances[name] = pl
		return pl, nil
	}
	for _, e := range cp.Plugins.Filter.Enabled {
		pl, err := get(e.Name)
		if err != nil {
			return nil, err
		}
		f, ok := pl.(frameworktypes.EvictorPlugin)
		if !ok {
			return nil, fmt.Errorf("plugin %s is not a filter plugin", e.Name)
		}
		p.evictor.filters = append(p.evictor.filters, f)
	}
	for _, e := range cp.Plugins.Evict.Enabled {
		pl, err := get(e.Name)
		if err != nil {
			return nil, err
		}
		ev, ok := pl.(EvictPlugin)
		if !ok {
			return nil, fmt.Errorf("plugin %s is not an evict plugin", e.Name)
		}
		p.evictor.evict = ev
	}
	for _, e := range cp.Plugins.Deschedule.Enabled {
		pl, err := get(e.Name)
		if err != nil {
			return nil, err
		}
		dp, ok := pl.(frameworktypes.DeschedulePlugin)
		if !ok {
			return nil, fmt.Errorf("plugin %s is not a deschedule plugin", e.Name)
		}
		p.deschedule = append(p.deschedule, dp)
	}
	for _, e := range cp.Plugins.Balance.Enabled {
		pl, err := get(e.Name)
		if err != nil {
			return nil, err
		}
		bp, ok := pl.(frameworktypes.BalancePlugin)
		if !ok {
			return nil, fmt.Errorf("plugin %s is not a balance plugin", e.Name)
		}
		p.balance = append(p.balance, bp)
	}
	if (len(p.deschedule) > 0 || len(p.balance) > 0) && p.evictor.evict == nil {
		return nil, fmt.Errorf("plugins that pick pods are enabled but no evict plugin (enable %s at evict)", config.MigrationControllerName)
	}
	return p, nil
}

// Start starts the informers, waits for them and runs a round every deschedulingInterval until ctx ends (one
// round when the interval is 0).
func (d *Descheduler) Start(ctx context.Context) error {
	logger := logr.FromContextOrDiscard(ctx).WithName("descheduler")
	ctx = logr.NewContext(ctx, logger)
	d.o.Informers.Start(ctx.Done())
	d.o.KoordInformers.Start(ctx.Done())
	for typ, ok := range d.o.Informers.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer of %v did not sync", typ)
		}
	}
	for typ, ok := range d.o.KoordInformers.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer of %v did not sync", typ)
		}
	}
	interval := d.o.Config.DeschedulingInterval.Duration
	logger.Info("Descheduling", "interval", interval, "profiles", len(d.profiles))
	if interval == 0 {
		d.RunOnce(ctx)
		<-ctx.Done()
		return nil
	}
	t := d.o.Clock.NewTicker(interval)
	defer t.Stop()
	for {
		d.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// RunOnce runs one round of every profile over the ready nodes the configuration selects.
func (d *Descheduler) RunOnce(ctx context.Context) {
	logger := logr.FromContextOrDiscard(ctx)
	start := d.o.Clock.Now()
	all, err := d.nodes()
	if err != nil {
		logger.Error(err, "List nodes")
		return
	}
	var ready []*corev1.Node
	for _, n := range all {
		if nodeutil.IsReady(n) && d.selector.Matches(labels.Set(n.Labels)) {
			ready = append(ready, n)
		}
	}
	// A fixed order makes rounds reproducible: the same cluster gives the same decisions.
	slices.SortFunc(ready, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	if len(ready) <= 1 {
		logger.V(2).Info("Not enough ready nodes to deschedule", "ready", len(ready))
		return
	}
	d.limits.reset()
	for _, p := range d.profiles {
		var nodes []*corev1.Node
		for _, n := range ready {
			if p.selector.Matches(labels.Set(n.Labels)) {
				nodes = append(nodes, n)
			}
		}
		pctx := logr.NewContext(ctx, logger.WithValues("profile", p.name))
		for _, pl := range p.deschedule {
			if st := pl.Deschedule(pctx, nodes); st != nil && st.Err != nil {
				logger.Error(st.Err, "Deschedule plugin failed", "profile", p.name, "plugin", pl.Name())
			}
		}
		for _, pl := range p.balance {
			if st := pl.Balance(pctx, nodes); st != nil && st.Err != nil {
				logger.Error(st.Err, "Balance plugin failed", "profile", p.name, "plugin", pl.Name())
			}
		}
	}
	logger.V(2).Info("Descheduling round done", "nodes", len(ready), "took", d.o.Clock.Since(start).Round(time.Millisecond))
}

// handle is a plugin's Handle.
type handle struct {
	d       *Descheduler
	evictor *evictor
	id      string
}

var _ Handle = &handle{}

func (h *handle) ClientSet() kubernetes.Interface { return h.d.o.Client }

// PrometheusClient returns nil: koord-descheduler reads usage from NodeMetrics, not Prometheus.
func (h *handle) PrometheusClient() promapi.Client                       { return nil }
func (h *handle) Evictor() frameworktypes.Evictor                        { return h.evictor }
func (h *handle) SharedInformerFactory() informers.SharedInformerFactory { return h.d.o.Informers }
func (h *handle) GetPodsAssignedToNodeFunc() podutil.GetPodsAssignedToNodeFunc {
	return h.d.getPods
}

// MetricsCollector returns nil: koord-descheduler reads usage from NodeMetrics, not metrics-server.
func (h *handle) MetricsCollector() *metricscollector.MetricsCollector { return nil }
func (h *handle) PluginInstanceID() string                             { return h.id }
func (h *handle) KoordSharedInformerFactory() koordinformers.SharedInformerFactory {
	return h.d.o.KoordInformers
}
func (h *handle) EventRecorder() events.EventRecorder { return h.d.o.Recorder }
func (h *handle) Clock() clock.PassiveClock           { return h.d.o.Clock }
