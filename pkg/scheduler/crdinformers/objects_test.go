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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

func TestAs(t *testing.T) {
	typed := &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	tests := map[string]struct {
		obj     any
		want    *slov1alpha1.NodeMetric
		wantErr string
	}{
		"typed":     {obj: typed, want: typed},
		"tombstone": {obj: toolscache.DeletedFinalStateUnknown{Key: "n1", Obj: typed}, want: typed},
		"unstructured": {
			obj:  &unstructured.Unstructured{Object: map[string]any{"kind": "NodeMetric", "metadata": map[string]any{"name": "n1"}}},
			want: typed,
		},
		"malformed": {
			obj:     &unstructured.Unstructured{Object: map[string]any{"kind": "NodeMetric", "metadata": map[string]any{"name": "n1"}, "status": "hot"}},
			wantErr: "convert NodeMetric n1: ",
		},
		"another type": {obj: "n1", wantErr: "want a *v1alpha1.NodeMetric, got string"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := As[slov1alpha1.NodeMetric](tc.obj)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("As() error = %v, want one starting with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.ObjectMeta, got.ObjectMeta); diff != "" {
				t.Errorf("As() (-want,+got):\n%s", diff)
			}
		})
	}
}
