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

package elasticquota

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/extension"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

func TestMutatingHandler(t *testing.T) {
	treeParent := quota("t", "tree-top", nil, rl("cpu", "10"), isParent, "true", extension.LabelQuotaTreeID, "tree-1")
	tests := map[string]struct {
		quota *schedulingsigsv1alpha1.ElasticQuota
		op    admissionv1.Operation
		want  []jsonpatch.Operation
	}{
		"parent, tree id and shared weight filled in": {
			quota: quota("t", "child", nil, rl("cpu", "4"), parent, "tree-top"),
			want: []jsonpatch.Operation{
				{Operation: "add", Path: "/metadata/annotations", Value: map[string]any{extension.AnnotationSharedWeight: `{"cpu":"4"}`}},
				{Operation: "add", Path: "/metadata/labels/quota.scheduling.koordinator.sh~1tree-id", Value: "tree-1"},
			},
		},
		"no parent label: the root": {
			quota: quota("t", "top", nil, rl("cpu", "4")),
			want: []jsonpatch.Operation{
				{Operation: "add", Path: "/metadata/annotations", Value: map[string]any{extension.AnnotationSharedWeight: `{"cpu":"4"}`}},
				{Operation: "add", Path: "/metadata/labels", Value: map[string]any{extension.LabelQuotaParent: extension.RootQuotaName}},
			},
		},
		"what is set stays": {
			quota: withAnnotation(quota("t", "top", nil, rl("cpu", "4"), parent, extension.RootQuotaName), extension.AnnotationSharedWeight, `{"cpu":"1"}`),
		},
		"the root quota is left alone": {
			quota: quota("koordinator-system", extension.RootQuotaName, nil, rl("cpu", "4")),
		},
		"updates are left alone": {
			op:    admissionv1.Update,
			quota: quota("t", "top", nil, rl("cpu", "4")),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			op := tc.op
			if op == "" {
				op = admissionv1.Create
			}
			reader := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(treeParent).Build()
			old := tc.quota
			if op != admissionv1.Update {
				old = nil
			}
			resp := NewMutatingWebhook(reader, admission.NewDecoder(testScheme)).Handler.Handle(ctx, request(t, op, tc.quota, old))
			if !resp.Allowed {
				t.Fatalf("denied: %s", resp.Result.Message)
			}
			got := resp.Patches
			// Compare values as JSON sees them.
			norm := func(ops []jsonpatch.Operation) string {
				b, _ := json.Marshal(ops)
				return string(b)
			}
			if diff := cmp.Diff(norm(sorted(tc.want)), norm(sorted(got))); diff != "" && !(len(tc.want) == 0 && len(got) == 0) {
				t.Errorf("patches (-want,+got):\n%s", diff)
			}
		})
	}
}

func sorted(ops []jsonpatch.Operation) []jsonpatch.Operation {
	out := slices.Clone(ops)
	slices.SortFunc(out, func(a, b jsonpatch.Operation) int { return strings.Compare(a.Path, b.Path) })
	return out
}
