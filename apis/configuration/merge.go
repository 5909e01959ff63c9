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

package configuration

import (
	"encoding/json"
	"reflect"
)

// deepCopier is a pointer to a generated API type.
type deepCopier[T any] interface {
	*T
	DeepCopy() *T
}

// Merge returns a new strategy: a deep copy of base with the set fields of each override applied in order, so
// that later overrides win. It is the merge the ConfigMap's layers use (defaults, cluster strategy, node strategy,
// node annotation) and has the semantics of decoding each override's JSON, with empty fields omitted, over the
// result:
//   - a nil pointer, slice, map or interface, an empty string and a zero number or bool in an override are
//     "not set" and leave the result alone;
//   - a set pointer to a struct merges field by field into the result's struct (deep merge);
//   - a set slice replaces the result's slice (lists are not merged element by element);
//   - a set map adds its keys to the result's map, overriding equal keys;
//   - values with their own JSON form (resource.Quantity, metav1.Duration, intstr.IntOrString, ExtensionsMap) are
//     replaced as a whole when not zero, so a zero Quantity in an override cannot reset a set one.
//
// Neither base nor the overrides are modified, and the result shares no memory with them. Nil arguments are
// skipped; Merge never returns nil.
func Merge[T any, PT deepCopier[T]](base PT, overrides ...PT) PT {
	var out PT
	if base != nil {
		out = base.DeepCopy()
	} else {
		out = PT(new(T))
	}
	for _, o := range overrides {
		if o == nil {
			continue
		}
		// The copy is owned by the result from here on, so its pointers can be moved into it.
		mergeValue(reflect.ValueOf(out).Elem(), reflect.ValueOf(o.DeepCopy()).Elem())
	}
	return out
}

var jsonMarshalerType = reflect.TypeFor[json.Marshaler]()

// isLeaf reports whether values of struct type t are replaced as a whole rather than merged by field: types with
// their own JSON form or with unexported state.
func isLeaf(t reflect.Type) bool {
	if t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType) {
		return true
	}
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			return true
		}
	}
	return false
}

// mergeValue applies the set parts of src to dst, which must be settable and of the same type. src is owned by
// the caller's result: its pointers, slices and maps are moved into dst, not copied.
func mergeValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Struct:
		if isLeaf(src.Type()) {
			if !src.IsZero() {
				dst.Set(src)
			}
			return
		}
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				mergeValue(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		if dst.IsNil() || src.Elem().Kind() != reflect.Struct || isLeaf(src.Elem().Type()) {
			dst.Set(src)
			return
		}
		mergeValue(dst.Elem(), src.Elem())
	case reflect.Map:
		if src.IsNil() {
			return
		}
		if dst.IsNil() {
			dst.Set(src)
			return
		}
		iter := src.MapRange()
		for iter.Next() {
			dst.SetMapIndex(iter.Key(), iter.Value())
		}
	case reflect.Slice, reflect.Interface:
		if !src.IsNil() {
			dst.Set(src)
		}
	default:
		if !src.IsZero() {
			dst.Set(src)
		}
	}
}
