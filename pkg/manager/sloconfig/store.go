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

package sloconfig

import (
	"context"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Store holds the snapshot in force. Reads are lock-free; the loader is the only writer.
//
// A store starts with the DefaultSnapshot but not Synced: until the loader has read the ConfigMap once (and found
// it valid, or missing), consumers should not write anything derived from it, or a restart would briefly push
// the defaults to every node. Consumers subscribe before the manager starts; the first install notifies them, so
// they can simply skip their work while the store is not synced.
type Store struct {
	current atomic.Pointer[Snapshot]
	synced  atomic.Bool

	mu          sync.Mutex
	subscribers []chan event.GenericEvent
}

// NewStore returns a store holding the DefaultSnapshot, not yet synced.
func NewStore() *Store {
	s := &Store{}
	s.current.Store(DefaultSnapshot())
	return s
}

// Get returns the snapshot in force. It never returns nil.
func (s *Store) Get() *Snapshot {
	return s.current.Load()
}

// Synced reports whether the snapshot in force comes from the ConfigMap (or its confirmed absence) rather than
// from the start-up defaults.
func (s *Store) Synced() bool {
	return s.synced.Load()
}

// Subscribe returns a channel that receives one GenericEvent, whose Object is the ConfigMap, each time a snapshot
// with a different configuration is installed. Each subscriber has its own channel with a buffer of one; when it
// is full the event is dropped, since the pending one already makes the subscriber resync everything. Wire it
// with source.Channel(ch, EnqueueAllNodes(reader)).
func (s *Store) Subscribe() <-chan event.GenericEvent {
	ch := make(chan event.GenericEvent, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subscribers = append(s.subscribers, ch)
	return ch
}

// Install puts snap in force and marks the store synced. When the configuration differs from the one in force,
// or the store was not synced, it notifies every subscriber with obj (the ConfigMap) and returns true; a new
// resourceVersion with the same configuration (a label edit, a resync) changes nothing downstream.
func (s *Store) Install(snap *Snapshot, obj *corev1.ConfigMap) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.current.Swap(snap)
	wasSynced := s.synced.Swap(true)
	if wasSynced && equality.Semantic.DeepEqual(old.SLOCfg, snap.SLOCfg) {
		return false
	}
	for _, ch := range s.subscribers {
		select {
		case ch <- event.GenericEvent{Object: obj}:
		default:
		}
	}
	return true
}

// EnqueueAllNodes returns an event handler that enqueues a request for every Node that reader lists, whatever the
// event: the handler for the channel of Subscribe, for controllers whose requests are node names.
func EnqueueAllNodes(reader client.Reader) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		nodes := &corev1.NodeList{}
		// Only names are read, so the cache's objects need not be copied.
		if err := reader.List(ctx, nodes, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Skipped the resync of every node after an SLO configuration change")
			return nil
		}
		reqs := make([]reconcile.Request, len(nodes.Items))
		for i := range nodes.Items {
			reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Name: nodes.Items[i].Name}}
		}
		return reqs
	})
}
