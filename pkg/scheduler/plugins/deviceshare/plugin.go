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

// Package deviceshare is the DeviceShare plugin (Koordinator's name and args): pods that ask for GPUs
// (koordinator.sh/gpu-core, gpu-memory, gpu-memory-ratio, gpu.shared, koordinator.sh/gpu, nvidia.com/gpu),
// RDMA NICs (koordinator.sh/rdma) or FPGAs get devices of the node's Device object (written by koordlet): a
// part of one GPU, whole GPUs, several of them, NICs or their virtual functions, following the pod's
// device-allocate-hint and device-joint-allocate annotations. The result is written in the pod's
// scheduling.koordinator.sh/device-allocated annotation, from which the plugin rebuilds its state. README.md
// has the rules.
package deviceshare

import (
	"context"
	"errors"
	"sync"

	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/deviceshare/cache"
)

// Name is the plugin's name in a KubeSchedulerConfiguration: Koordinator's.
const Name = "DeviceShare"

// Plugin is the DeviceShare plugin. It implements PreFilter, Filter, PreScore, Score, Reserve, PreBind,
// EnqueueExtensions and SignPlugin (checked at build time in package scheduler, which registers it).
type Plugin struct {
	args   *config.DeviceShareArgs
	handle fwk.Handle
	cache  *cache.Cache
	synced plugins.Synced
	rules  rules
	// koord writes the device-allocated annotation of Reservations.
	koord versioned.Interface
	// problems are the nodes whose Device has entries the plugin left out, with what is wrong.
	problems sync.Map
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory(...)). The plugin reads
// Devices through the shared Koord informers and pods through kube-scheduler's.
func NewFactory(informers *crdinformers.Shared, opts ...plugins.Option) frameworkruntime.PluginFactory {
	return plugins.Factory(Name, validation.ValidateDeviceShareArgs, func(ctx context.Context, args *config.DeviceShareArgs, h fwk.Handle) (*Plugin, error) {
		if h.ClientSet() == nil {
			return nil, errors.New("the framework handle has no clientset")
		}
		p := &Plugin{args: args, handle: h, cache: cache.New(), rules: newRules(args)}
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
