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
	"fmt"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
)

// maxDeleted bounds the deleted objects whose last version a Feed remembers.
const maxDeleted = 4096

// Feed hands the objects of one kind to a plugin's state as two informers deliver them: each version at most
// once, and never a version older than one the state already has.
//
// Why two informers: kube-scheduler watches every resource a plugin registers events for with an informer of
// its own and hands the events to the plugin's queueing hints, while the plugin reads the same objects through
// its own informer (the shared Koord CRD informers, or kube-scheduler's informer factory). The two deliver the
// same changes independently and in any order. A pod a hint requeues is retried at once, possibly before the
// plugin's informer has delivered the change, and would be rejected again by what the plugin's state still
// holds, then wait for the next event. Hence the one rule, for every plugin whose hints judge a change by its
// state:
//
//  1. The plugin's informer handler (Handler) and the queueing hint (Event, before it decides) both hand the
//     event to the Feed; so do the plugin's own writes (Update with the object the API returned).
//  2. The Feed compares the object's resourceVersion with the newest it passed on for the object (by namespace
//     and name) and passes on only newer ones, calling update or remove under one lock, so the state never
//     goes back to an older version whichever informer is ahead. Resource versions are opaque to clients, but
//     etcd's are increasing integers (kube-scheduler's assume cache relies on that too); versions that are not
//     integers (fake clientsets leave them empty) always pass, so the last event wins.
//  3. An event's object is converted into a *T (kube-scheduler's informers deliver custom resources
//     unstructured) only when it passes, and Object converts an event's object once however many pending pods
//     the hint runs for.
//  4. A deletion passes at the version it was deleted at or newer, and leaves that version behind for the
//     most recent deletions (maxDeleted), so that a late event of an older version does not bring the object
//     back.
//
// update and remove must not call back into the Feed. It is safe for concurrent use.
type Feed[T any] struct {
	update, remove func(*T)

	mu sync.Mutex
	// versions are the newest versions passed on, by namespace/name.
	versions map[string]version
	// deleted are the keys of deleted objects, oldest first, to forget their versions beyond maxDeleted.
	deleted []string
	// memo holds the latest conversions of event objects; next is the entry to replace.
	memo [2]conversion[T]
	next int
}

// version is the newest version of an object a Feed passed on.
type version struct {
	resourceVersion string
	deleted         bool
}

// conversion is an event's object and its typed form.
type conversion[T any] struct {
	in  any
	out *T
}

// NewFeed returns a Feed that passes added and updated objects to update and deleted ones to remove.
func NewFeed[T any](update, remove func(*T)) *Feed[T] {
	return &Feed[T]{update: update, remove: remove, versions: map[string]version{}}
}

// Event hands an event to the state: newObj when it is not nil (an add or update), else the deletion of oldObj.
// Objects may be typed or unstructured, tombstones included. It fails when the object is not one of T.
func (f *Feed[T]) Event(oldObj, newObj any) error {
	if newObj != nil {
		return f.Update(newObj)
	}
	return f.Delete(oldObj)
}

// Update hands obj to the state when it is newer than what the state has.
func (f *Feed[T]) Update(obj any) error { return f.pass(obj, false) }

// Delete hands the deletion of obj to the state unless the state has a newer version of it.
func (f *Feed[T]) Delete(obj any) error { return f.pass(obj, true) }

func (f *Feed[T]) pass(obj any, deleted bool) error {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("want a %T, got %T", (*T)(nil), obj)
	}
	key, rv := m.GetNamespace()+"/"+m.GetName(), m.GetResourceVersion()
	f.mu.Lock()
	defer f.mu.Unlock()
	// A deletion comes with the version last written, so it passes at the version the state has, unless the
	// state has already seen it deleted.
	if last, ok := f.versions[key]; ok && !newer(rv, last.resourceVersion, deleted && !last.deleted) {
		return nil
	}
	typed, err := f.objectLocked(obj)
	if err != nil {
		return err
	}
	if deleted {
		f.forgetLocked(key, rv)
		if f.remove != nil {
			f.remove(typed)
		}
		return nil
	}
	f.versions[key] = version{resourceVersion: rv}
	if f.update != nil {
		f.update(typed)
	}
	return nil
}

// forgetLocked records the deletion of key at resourceVersion rv.
func (f *Feed[T]) forgetLocked(key, rv string) {
	f.versions[key] = version{resourceVersion: rv, deleted: true}
	f.deleted = append(f.deleted, key)
	if len(f.deleted) <= maxDeleted {
		return
	}
	oldest := f.deleted[0]
	f.deleted = f.deleted[1:]
	// A key deleted twice stands twice in the list; a key that came back is live again.
	if v := f.versions[oldest]; v.deleted && !slices.Contains(f.deleted, oldest) {
		delete(f.versions, oldest)
	}
}

// Object returns obj as a *T: typed objects as they are, unstructured ones converted once per event object.
// The result is shared: do not modify it.
func (f *Feed[T]) Object(obj any) (*T, error) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if o, ok := obj.(*T); ok {
		return o, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objectLocked(obj)
}

func (f *Feed[T]) objectLocked(obj any) (*T, error) {
	if o, ok := obj.(*T); ok {
		return o, nil
	}
	for _, c := range f.memo {
		if c.in == obj {
			return c.out, nil
		}
	}
	out, err := crdinformers.As[T](obj)
	if err != nil {
		return nil, err
	}
	f.memo[f.next] = conversion[T]{in: obj, out: out}
	f.next = (f.next + 1) % len(f.memo)
	return out, nil
}

// Handler returns the handlers of the plugin's own informer: every event goes to the Feed; objects of another
// kind are reported to logger.
func (f *Feed[T]) Handler(logger klog.Logger) toolscache.ResourceEventHandlerFuncs {
	report := func(err error) {
		if err != nil {
			utilruntime.HandleErrorWithLogger(logger, err, "Ignored an unexpected informer event")
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { report(f.Update(obj)) },
		UpdateFunc: func(_, obj any) { report(f.Update(obj)) },
		DeleteFunc: func(obj any) { report(f.Delete(obj)) },
	}
}

// newer reports whether resourceVersion rv comes after last, or, orEqual, is last. Versions that are not
// integers always do.
func newer(rv, last string, orEqual bool) bool {
	x, errX := strconv.ParseUint(rv, 10, 64)
	y, errY := strconv.ParseUint(last, 10, 64)
	if errX != nil || errY != nil {
		return true
	}
	return x > y || orEqual && x == y
}
