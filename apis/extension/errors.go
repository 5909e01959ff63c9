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

import "fmt"

// AnnotationError reports an annotation whose value cannot be parsed or is
// invalid. Use errors.As to recover the key and the raw value.
type AnnotationError struct {
	// Key is the annotation key.
	Key string
	// Value is the raw annotation value. It is empty when the error comes
	// from formatting a value rather than parsing one.
	Value string
	// Err is the underlying problem.
	Err error
}

// Error implements error. The raw value is left out because annotation values
// can be large; the underlying error quotes the offending part.
func (e *AnnotationError) Error() string {
	return fmt.Sprintf("annotation %q: %v", e.Key, e.Err)
}

// Unwrap returns the underlying problem.
func (e *AnnotationError) Unwrap() error { return e.Err }

// Is reports whether target is an *AnnotationError for the same key. A target
// with an empty Key matches any annotation error, so
// errors.Is(err, &AnnotationError{}) tells whether any annotation was bad.
func (e *AnnotationError) Is(target error) bool {
	t, ok := target.(*AnnotationError)
	return ok && (t.Key == "" || t.Key == e.Key)
}

// LabelError reports a label whose value cannot be parsed or is invalid. Use
// errors.As to recover the key and the raw value.
type LabelError struct {
	// Key is the label key.
	Key string
	// Value is the raw label value.
	Value string
	// Err is the underlying problem.
	Err error
}

// Error implements error.
func (e *LabelError) Error() string {
	return fmt.Sprintf("label %q: %v", e.Key, e.Err)
}

// Unwrap returns the underlying problem.
func (e *LabelError) Unwrap() error { return e.Err }

// Is reports whether target is a *LabelError for the same key. A target with
// an empty Key matches any label error.
func (e *LabelError) Is(target error) bool {
	t, ok := target.(*LabelError)
	return ok && (t.Key == "" || t.Key == e.Key)
}
