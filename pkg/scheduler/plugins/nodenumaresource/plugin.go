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

// Package nodenumaresource is the NodeNUMAResource plugin (Koordinator's name and args): LSE and LSR pods get
// exclusive CPUs chosen on the node's CPU topology (whole physical cores with FullPCPUs, one thread per core
// with SpreadByPCPUs), and pods with a NUMA topology policy (SingleNUMANode, Restricted, BestEffort, from the
// pod's numa-topology-spec or the node's label) get their CPUs and memory on the fewest NUMA nodes that hold
// them. The result is written in the pod's scheduling.koordinator.sh/resource-status, which koordlet applies
// as the containers' cpuset. README.md has the rules.
package nodenumaresource

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
)

// Name is the plugin's name in a KubeSchedulerConfiguration: Koordinator's.
const Name = "NodeNUMAResource"

// Plugin is the NodeNUMAResource plugin. It implements PreFilter, Filter, PreScore, Score, Reserve, PreBind
// and EnqueueExtensions (checked at build time in package scheduler, which registers it).
type Plugin struct {
	args   *config.NodeNUMAResourceArgs
	handle fwk.Handle
	cache  *cache.Cache
	synced plugins.Synced
	// koord writes the resource-status of Reservations.
	koord versioned.Interface
	nrts  nrtLister
	// problems are the nodes whose NodeResourceTopology does not parse, with what is wrong.
	problems sync.Map
	// policyNodes are the nodes with a NUMA topology policy label.
	policyMu    sync.RWMutex
	policyNodes sets.Set[string]
	// defaultBind is args.DefaultCPUBindPolicy.
	defaultBind extension.CPUBindPolicy
	// rules are the args' allocation rules.
	rules rules
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// NodeResourceTopologies through the shared Koord informers and pods and nodes through kube-scheduler's.
func NewFactory(informers *crdinformers.Shared, opts ...plugins.Option) frameworkruntime.PluginFactory {
	return plugins.Factory(Name, validation.ValidateNodeNUMAResourceArgs, func(ctx context.Context, args *config.NodeNUMAResourceArgs, h fwk.Handle) (*Plugin, error) {
		if h.ClientSet() == nil {
			return nil, errors.New("the framework handle has no clientset")
		}
		p := &Plugin{args: args, handle: h, cache: cache.New(), defaultBind: extension.CPUBindPolicy(args.DefaultCPUBindPolicy), policyNodes: sets.New[string](), rules: newRules(args)}
		client, err := informers.Client(h)
		if err != nil {
			return nil, err
		}
		p.koord = client
		if err := p.watch(ctx, h, informers); err != nil {
			return nil, err
		}
		return p, nil
	})
}

// Name returns Name.
func (p *Plugin) Name() string { return Name }

// HasSynced reports whether the plugin has seen the objects its informers listed at start.
func (p *Plugin) HasSynced() bool { return p.synced.HasSynced() }
