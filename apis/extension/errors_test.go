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
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnnotationError(t *testing.T) {
	inner := errors.New("boom")
	err := error(&AnnotationError{Key: AnnotationResourceSpec, Value: "x", Err: inner})

	if diff := cmp.Diff(`annotation "scheduling.koordinator.sh/resource-spec": boom`, err.Error()); diff != "" {
		t.Errorf("Error() (-want,+got):\n%s", diff)
	}
	if !errors.Is(err, inner) {
		t.Error("errors.Is(err, inner) = false, want true")
	}
	if !errors.Is(err, &AnnotationError{}) {
		t.Error("errors.Is(err, &AnnotationError{}) = false, want true")
	}
	if !errors.Is(err, &AnnotationError{Key: AnnotationResourceSpec}) {
		t.Error("errors.Is(err, same key) = false, want true")
	}
	if errors.Is(err, &AnnotationError{Key: AnnotationResourceStatus}) {
		t.Error("errors.Is(err, other key) = true, want false")
	}
	if errors.Is(err, &LabelError{}) {
		t.Error("errors.Is(err, &LabelError{}) = true, want false")
	}
	ae, ok := errors.AsType[*AnnotationError](err)
	if !ok {
		t.Fatal("errors.AsType[*AnnotationError] failed")
	}
	if diff := cmp.Diff("x", ae.Value); diff != "" {
		t.Errorf("Value (-want,+got):\n%s", diff)
	}
}

func TestLabelError(t *testing.T) {
	err := error(&LabelError{Key: LabelPodPriority, Value: "x", Err: strconv.ErrSyntax})

	if diff := cmp.Diff(`label "koordinator.sh/priority": invalid syntax`, err.Error()); diff != "" {
		t.Errorf("Error() (-want,+got):\n%s", diff)
	}
	if !errors.Is(err, strconv.ErrSyntax) {
		t.Error("errors.Is(err, strconv.ErrSyntax) = false, want true")
	}
	if !errors.Is(err, &LabelError{Key: LabelPodPriority}) {
		t.Error("errors.Is(err, same key) = false, want true")
	}
	if errors.Is(err, &LabelError{Key: LabelPodQoS}) {
		t.Error("errors.Is(err, other key) = true, want false")
	}
	if errors.Is(err, &AnnotationError{}) {
		t.Error("errors.Is(err, &AnnotationError{}) = true, want false")
	}
}
