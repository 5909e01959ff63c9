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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGetSchedulingHint(t *testing.T) {
	pod := func(annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	}
	tests := map[string]struct {
		pod     *corev1.Pod
		want    *SchedulingHint
		wantErr string
	}{
		"none":  {pod: pod(nil)},
		"empty": {pod: pod(map[string]string{AnnotationSchedulingHint: ""})},
		"nodes and preferred nodes": {
			pod:  pod(map[string]string{AnnotationSchedulingHint: `{"nodeNames":["n1","n2"],"preferredNodeNames":["n2"]}`}),
			want: &SchedulingHint{NodeNames: []string{"n1", "n2"}, PreferredNodeNames: []string{"n2"}},
		},
		"the deprecated key": {
			pod:  pod(map[string]string{DeprecatedAnnotationSchedulingHint: `{"nodeNames":["n1"]}`}),
			want: &SchedulingHint{NodeNames: []string{"n1"}},
		},
		"the current key wins": {
			pod:  pod(map[string]string{AnnotationSchedulingHint: `{"nodeNames":["new"]}`, DeprecatedAnnotationSchedulingHint: `{"nodeNames":["old"]}`}),
			want: &SchedulingHint{NodeNames: []string{"new"}},
		},
		"malformed": {
			pod:     pod(map[string]string{AnnotationSchedulingHint: `{"nodeNames":"n1"}`}),
			wantErr: `annotation "internal.scheduling.koordinator.sh/scheduling-hint": json: cannot unmarshal string`,
		},
		"unknown field": {
			pod:     pod(map[string]string{AnnotationSchedulingHint: `{"nodes":["n1"]}`}),
			wantErr: `annotation "internal.scheduling.koordinator.sh/scheduling-hint": json: unknown field "nodes"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetSchedulingHint(tc.pod)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hint (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzGetSchedulingHint(f *testing.F) {
	for _, seed := range []string{`{"nodeNames":["n1"]}`, `{"preferredNodeNames":["a","b"],"extensions":{"x":1}}`, `[]`, `{`, ``} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		hint, err := GetSchedulingHint(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationSchedulingHint: raw}}})
		if err != nil && hint != nil {
			t.Fatalf("a hint and an error at once: %+v, %v", hint, err)
		}
	})
}
