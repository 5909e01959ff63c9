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

package crdinformers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// As returns the object of an event as a typed *T. kube-scheduler watches custom resources with dynamic
// informers, so the events it hands to queueing hints carry unstructured objects; the shared informers here
// deliver typed ones. Tombstones of deleted objects are unwrapped.
func As[T any](obj any) (*T, error) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	switch o := obj.(type) {
	case *T:
		return o, nil
	case *unstructured.Unstructured:
		typed := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, typed); err != nil {
			return nil, fmt.Errorf("convert %s %s: %w", o.GetKind(), objectName(o), err)
		}
		return typed, nil
	}
	return nil, fmt.Errorf("want a %T, got %T", (*T)(nil), obj)
}

// objectName is namespace/name, or name for a cluster-scoped object.
func objectName(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}
