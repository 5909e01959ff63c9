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

package plugintest

import (
	"strconv"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	koordfake "github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
)

// firstResourceVersion is the resourceVersion the first write through an Env gets: above the small versions
// tests give their objects.
const firstResourceVersion = 1000

// versionWrites makes every create, update and patch through c store its object under a new, increasing
// resourceVersion, as an apiserver does; the fake clientset's tracker keeps whatever version the client sent.
// Plugins feed their state by version (plugins.Feed), so that matters: a write that kept its version would not
// reach the state. Reactors a test prepends later run first.
func versionWrites(c *koordfake.Clientset) {
	var last atomic.Int64
	last.Store(firstResourceVersion - 1)
	next := func() string { return strconv.FormatInt(last.Add(1), 10) }
	tracker := c.Tracker()
	store := k8stesting.ObjectReaction(tracker)
	c.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		switch a := action.(type) {
		case k8stesting.CreateActionImpl:
			a.Object = withVersion(a.Object, next())
			return store(a)
		case k8stesting.UpdateActionImpl:
			a.Object = withVersion(a.Object, next())
			return store(a)
		case k8stesting.PatchActionImpl:
			if a.GetPatchType() == types.ApplyPatchType {
				return false, nil, nil
			}
			handled, obj, err := store(a)
			if err != nil || obj == nil {
				return handled, obj, err
			}
			obj = withVersion(obj, next())
			if err := tracker.Update(a.GetResource(), obj, a.GetNamespace()); err != nil {
				return true, nil, err
			}
			return true, obj, nil
		}
		return false, nil, nil
	})
}

// withVersion returns a copy of obj with resourceVersion rv.
func withVersion(obj runtime.Object, rv string) runtime.Object {
	obj = obj.DeepCopyObject()
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(rv)
	}
	return obj
}
