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

package extension

import (
	"encoding/json"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lookup returns the value stored under key and whether it is set to a
// non-empty value. An empty value is treated like a missing one.
func lookup(m map[string]string, key string) (string, bool) {
	v := m[key]
	return v, v != ""
}

// decodeAnnotation unmarshals the JSON value of the annotation key into v.
func decodeAnnotation(key, value string, v any) error {
	if err := json.Unmarshal([]byte(value), v); err != nil {
		return &AnnotationError{Key: key, Value: value, Err: err}
	}
	return nil
}

// setAnnotation stores value under key on obj. The annotation map is copied
// so that a map shared with another object is never modified.
func setAnnotation(obj metav1.Object, key, value string) {
	a := maps.Clone(obj.GetAnnotations())
	if a == nil {
		a = make(map[string]string, 1)
	}
	a[key] = value
	obj.SetAnnotations(a)
}

// removeAnnotation deletes key from the annotations of obj.
func removeAnnotation(obj metav1.Object, key string) {
	a := obj.GetAnnotations()
	if _, ok := a[key]; !ok {
		return
	}
	a = maps.Clone(a)
	delete(a, key)
	obj.SetAnnotations(a)
}

// validatable is a pointer to an annotation value that can check itself.
type validatable[T any] interface {
	*T
	validate() error
}

// getJSONAnnotation parses the JSON value of the annotation key into a new T and validates it. It returns nil
// and no error when the annotation is missing or empty, and an *AnnotationError naming the key otherwise.
func getJSONAnnotation[T any, PT validatable[T]](annotations map[string]string, key string) (*T, error) {
	value, ok := lookup(annotations, key)
	if !ok {
		return nil, nil
	}
	v := PT(new(T))
	if err := decodeAnnotation(key, value, v); err != nil {
		return nil, err
	}
	if err := v.validate(); err != nil {
		return nil, &AnnotationError{Key: key, Value: value, Err: err}
	}
	return v, nil
}

// setJSONAnnotation validates v and stores its JSON form under key on obj, or removes the annotation when v
// is nil. An invalid v writes nothing and returns an *AnnotationError naming the key.
func setJSONAnnotation[T any, PT validatable[T]](obj metav1.Object, key string, v PT) error {
	if v == nil {
		removeAnnotation(obj, key)
		return nil
	}
	if err := v.validate(); err != nil {
		return &AnnotationError{Key: key, Err: err}
	}
	return encodeAnnotation(obj, key, v)
}

// getStringListAnnotation parses the annotation key as a JSON list of strings and checks it with validate. It
// returns nil and no error when the annotation is missing, an empty list for JSON null, and an
// *AnnotationError naming the key otherwise.
func getStringListAnnotation(annotations map[string]string, key string, validate func([]string) error) ([]string, error) {
	value, ok := lookup(annotations, key)
	if !ok {
		return nil, nil
	}
	var list []string
	if err := decodeAnnotation(key, value, &list); err != nil {
		return nil, err
	}
	if list == nil {
		list = []string{} // JSON null
	}
	if err := validate(list); err != nil {
		return nil, &AnnotationError{Key: key, Value: value, Err: err}
	}
	return list, nil
}

// setStringListAnnotation checks list with validate and stores it as JSON under key on obj, or removes the
// annotation when list is nil. An invalid list writes nothing and returns an *AnnotationError naming the key.
func setStringListAnnotation(obj metav1.Object, key string, list []string, validate func([]string) error) error {
	if list == nil {
		removeAnnotation(obj, key)
		return nil
	}
	if err := validate(list); err != nil {
		return &AnnotationError{Key: key, Err: err}
	}
	return encodeAnnotation(obj, key, list)
}

// encodeAnnotation stores the JSON form of v under key on obj.
func encodeAnnotation(obj metav1.Object, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return &AnnotationError{Key: key, Err: err}
	}
	setAnnotation(obj, key, string(data))
	return nil
}
