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

// Package crdinformers gives koord-scheduler's plugins one shared informer factory for Koord's CRDs
// (NodeMetric, ...). kube-scheduler hands plugins only its own informer factory, for built-in types; Koord's
// factory is built once per scheduler, by whichever plugin asks first, from the kubeconfig on the plugin's
// framework handle, so that plugins need no handle beyond kube-scheduler's plain one.
package crdinformers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/client/informers/externalversions"
)

// DefaultSyncTimeout is how long Start waits for the informers to sync before it gives up.
const DefaultSyncTimeout = time.Minute

// Shared holds the informer factory of Koord's CRDs that all plugins of one scheduler use. Build one per
// scheduler, in main, and hand it to every plugin factory. It is safe for concurrent use.
type Shared struct {
	mu          sync.Mutex
	newClient   func(*rest.Config) (versioned.Interface, error)
	client      versioned.Interface
	factory     externalversions.SharedInformerFactory
	syncTimeout time.Duration
}

// New returns a Shared that builds its clientset from the kubeconfig of the first framework handle it sees.
func New() *Shared {
	return &Shared{newClient: newClientForScheduler, syncTimeout: DefaultSyncTimeout}
}

// NewForClient returns a Shared whose informers list and watch through client, e.g. a fake clientset.
func NewForClient(client versioned.Interface) *Shared {
	return &Shared{
		newClient:   func(*rest.Config) (versioned.Interface, error) { return client, nil },
		syncTimeout: DefaultSyncTimeout,
	}
}

// newClientForScheduler builds Koord's clientset from kube-scheduler's kubeconfig. kube-scheduler speaks
// protobuf by default, which custom resources do not; Koord's clients use JSON.
func newClientForScheduler(cfg *rest.Config) (versioned.Interface, error) {
	if cfg == nil {
		return nil, errors.New("the framework handle carries no kubeconfig")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg = rest.AddUserAgent(cfg, "koord-scheduler")
	c, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create Koord clientset: %w", err)
	}
	return c, nil
}

// Client returns the shared clientset of Koord's CRDs, building it on first use from h's kubeconfig. Plugins
// write Koord objects (status, annotations) through it; the factory's informers use it too.
func (s *Shared) Client(h fwk.Handle) (versioned.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientLocked(h)
}

func (s *Shared) clientLocked(h fwk.Handle) (versioned.Interface, error) {
	if s.client == nil {
		client, err := s.newClient(h.KubeConfig())
		if err != nil {
			return nil, err
		}
		s.client = client
	}
	return s.client, nil
}

// Factory returns the shared informer factory, building it on first use from h's kubeconfig. Plugins get
// their informers and listers from it, then call Start.
func (s *Shared) Factory(h fwk.Handle) (externalversions.SharedInformerFactory, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.factory != nil {
		return s.factory, nil
	}
	client, err := s.clientLocked(h)
	if err != nil {
		return nil, err
	}
	s.factory = externalversions.NewSharedInformerFactory(client, 0)
	return s.factory, nil
}

// Start starts the informers requested from the factory so far, bound to ctx (a plugin passes the context
// its factory got, which lives as long as the scheduler), and waits until they have synced. It fails when
// they have not synced within the timeout, typically because a CRD is not installed or not readable.
func (s *Shared) Start(ctx context.Context) error {
	s.mu.Lock()
	factory := s.factory
	s.mu.Unlock()
	if factory == nil {
		return errors.New("start Koord informers: no informer was requested")
	}
	factory.Start(ctx.Done())
	waitCtx, cancel := context.WithTimeout(ctx, s.syncTimeout)
	defer cancel()
	for typ, synced := range factory.WaitForCacheSync(waitCtx.Done()) {
		if !synced {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("wait for the %v informer: %w", typ, err)
			}
			return fmt.Errorf("the %v informer did not sync within %v: is its CRD installed and readable by koord-scheduler?", typ, s.syncTimeout)
		}
	}
	return nil
}

// Sync starts the informers requested so far, as Start does, then waits until each of the handler
// registrations has been given every object its informer listed: a plugin calls it at the end of its factory
// with the registrations of its handlers, so that it starts with a complete state.
func (s *Shared) Sync(ctx context.Context, regs ...toolscache.ResourceEventHandlerRegistration) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	// The informers have synced; their handlers follow within moments.
	err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, reg := range regs {
			if !reg.HasSynced() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the informer handlers: %w", err)
	}
	return nil
}
