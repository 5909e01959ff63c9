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

package plugins

import (
	"errors"
	"fmt"

	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
)

// Handlers returns informer event handlers for objects of type T: changed gets added and updated objects,
// deleted gets deleted ones with tombstones unwrapped. Objects of other types are ignored; either function may
// be nil.
func Handlers[T any](changed, deleted func(*T)) toolscache.ResourceEventHandlerFuncs {
	var h toolscache.ResourceEventHandlerFuncs
	if changed != nil {
		h.AddFunc = func(obj any) {
			if o := ObjectOf[T](obj); o != nil {
				changed(o)
			}
		}
		h.UpdateFunc = func(_, obj any) {
			if o := ObjectOf[T](obj); o != nil {
				changed(o)
			}
		}
	}
	if deleted != nil {
		h.DeleteFunc = func(obj any) {
			if o := ObjectOf[T](obj); o != nil {
				deleted(o)
			}
		}
	}
	return h
}

// KubeInformers returns the framework handle's informer factory of Kubernetes' own kinds. kube-scheduler
// starts it after building the plugins, so a plugin cannot wait for it in its factory: it keeps its handlers'
// HasSynced, which tests wait for.
func KubeInformers(h fwk.Handle) (informers.SharedInformerFactory, error) {
	f := h.SharedInformerFactory()
	if f == nil {
		return nil, errors.New("the framework handle has no informer factory")
	}
	return f, nil
}

// Synced holds a plugin's handler registrations on the scheduler's informers. A plugin reports HasSynced
// from it, which plugintest waits for.
type Synced []toolscache.ResourceEventHandlerRegistration

// Watch adds handler to informer and keeps its registration; what names the kind in the error.
func (s *Synced) Watch(what string, informer toolscache.SharedInformer, handler toolscache.ResourceEventHandler) error {
	reg, err := informer.AddEventHandler(handler)
	if err != nil {
		return fmt.Errorf("watch %s: %w", what, err)
	}
	*s = append(*s, reg)
	return nil
}

// HasSynced reports whether every handler has been given the objects its informer listed at start.
func (s Synced) HasSynced() bool {
	for _, reg := range s {
		if !reg.HasSynced() {
			return false
		}
	}
	return true
}
