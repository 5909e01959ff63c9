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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// quota returns an object standing for an ElasticQuota.
func quota(name string, labels, annotations map[string]string) metav1.Object {
	return &metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels, Annotations: annotations}
}

func TestQuotaLabels(t *testing.T) {
	type result struct {
		Parent         string
		IsParent       bool
		AllowLent      bool
		IsTreeRoot     bool
		TreeID         string
		NonPreemptible bool
	}
	tests := map[string]struct {
		quota metav1.Object
		want  result
	}{
		"no labels": {
			quota: quota("q", nil, nil),
			want:  result{Parent: RootQuotaName, AllowLent: true},
		},
		"root quota has no parent": {
			quota: quota(RootQuotaName, nil, nil),
			want:  result{Parent: "", AllowLent: true},
		},
		"all set": {
			quota: quota("q", map[string]string{
				LabelQuotaParent:       "p",
				LabelQuotaIsParent:     "true",
				LabelAllowLentResource: "false",
				LabelQuotaIsRoot:       "true",
				LabelQuotaTreeID:       "t1",
			}, nil),
			want: result{Parent: "p", IsParent: true, AllowLent: false, IsTreeRoot: true, TreeID: "t1"},
		},
		"non-canonical booleans": {
			quota: quota("q", map[string]string{
				LabelQuotaIsParent:     "True",
				LabelAllowLentResource: "no",
				LabelQuotaIsRoot:       "1",
			}, nil),
			want: result{Parent: RootQuotaName, AllowLent: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := result{
				Parent:     GetParentQuotaName(tc.quota),
				IsParent:   IsParentQuota(tc.quota),
				AllowLent:  IsAllowLentResource(tc.quota),
				IsTreeRoot: IsTreeRootQuota(tc.quota),
				TreeID:     GetQuotaTreeID(tc.quota),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("quota labels (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestQuotaPodLabels(t *testing.T) {
	type result struct {
		Name           string
		NonPreemptible bool
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want result
	}{
		"nil pod":         {pod: nil, want: result{}},
		"no labels":       {pod: podWith(nil, nil), want: result{}},
		"quota name":      {pod: podWith(map[string]string{LabelQuotaName: "q1"}, nil), want: result{Name: "q1"}},
		"non-preemptible": {pod: podWith(map[string]string{LabelPreemptible: "false"}, nil), want: result{NonPreemptible: true}},
		"preemptible":     {pod: podWith(map[string]string{LabelPreemptible: "true"}, nil), want: result{}},
		"name is a label, not an annotation": {
			pod:  annotated(LabelQuotaName, "q1"),
			want: result{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := result{Name: GetQuotaName(tc.pod), NonPreemptible: IsPodNonPreemptible(tc.pod)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pod quota labels (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestQuotaResourceListGetters(t *testing.T) {
	getters := map[string]func(metav1.Object) (corev1.ResourceList, error){
		AnnotationSharedWeight:          GetSharedWeight,
		AnnotationRuntime:               GetRuntime,
		AnnotationRequest:               GetRequest,
		AnnotationChildRequest:          GetChildRequest,
		AnnotationGuaranteed:            GetGuaranteed,
		AnnotationAllocated:             GetAllocated,
		AnnotationNonPreemptibleRequest: GetNonPreemptibleRequest,
		AnnotationNonPreemptibleUsed:    GetNonPreemptibleUsed,
		AnnotationTotalResource:         GetTotalResource,
		AnnotationUnschedulableResource: GetUnschedulableResource,
	}
	tests := map[string]struct {
		value   *string
		want    corev1.ResourceList
		wantErr string // formatted with the key
	}{
		"missing":    {value: nil, want: nil},
		"empty":      {value: new(""), want: nil},
		"empty list": {value: new(`{}`), want: corev1.ResourceList{}},
		"null":       {value: new(`null`), want: corev1.ResourceList{}},
		"resources": {
			value: new(`{"cpu":"4","memory":"8Gi","kubernetes.io/batch-cpu":2000}`),
			want:  rl("cpu", "4", "memory", "8Gi", "kubernetes.io/batch-cpu", "2k"),
		},
		"malformed": {
			value:   new(`{"cpu":`),
			wantErr: `annotation %q: unexpected end of JSON input`,
		},
		"wrong type": {
			value:   new(`["cpu"]`),
			wantErr: `annotation %q: json: cannot unmarshal array into Go value of type v1.ResourceList`,
		},
		"bad quantity": {
			value:   new(`{"cpu":"x"}`),
			wantErr: `annotation %q: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		},
	}
	for key, get := range getters {
		for name, tc := range tests {
			t.Run(key+"/"+name, func(t *testing.T) {
				annotations := map[string]string{}
				if tc.value != nil {
					annotations[key] = *tc.value
				}
				got, err := get(quota("q", nil, annotations))
				wantErr := ""
				if tc.wantErr != "" {
					wantErr = sprintf(tc.wantErr, key)
				}
				if diff := cmp.Diff(wantErr, errString(err)); diff != "" {
					t.Fatalf("error (-want,+got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("resource list (-want,+got):\n%s", diff)
				}
			})
		}
	}
}

func TestSetQuotaResourceList(t *testing.T) {
	q := quota("q", nil, nil)
	list := rl("cpu", "1500m", "memory", "1Gi")
	if err := SetQuotaResourceList(q, AnnotationRuntime, list); err != nil {
		t.Fatalf("SetQuotaResourceList() error: %v", err)
	}
	if diff := cmp.Diff(`{"cpu":"1500m","memory":"1Gi"}`, q.GetAnnotations()[AnnotationRuntime]); diff != "" {
		t.Errorf("annotation value (-want,+got):\n%s", diff)
	}
	got, err := GetRuntime(q)
	if err != nil {
		t.Fatalf("GetRuntime() error: %v", err)
	}
	if diff := cmp.Diff(list, got); diff != "" {
		t.Errorf("round trip (-want,+got):\n%s", diff)
	}
	if err := SetQuotaResourceList(q, AnnotationRuntime, nil); err != nil {
		t.Fatalf("SetQuotaResourceList(nil) error: %v", err)
	}
	if diff := cmp.Diff(map[string]string{}, q.GetAnnotations()); diff != "" {
		t.Errorf("annotations after removal (-want,+got):\n%s", diff)
	}
}

func TestGetAnnotationQuotaNamespaces(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    []string
		wantErr string
	}{
		"missing":    {value: nil, want: nil},
		"empty":      {value: new(""), want: nil},
		"valid":      {value: new(`["ns1","team-b"]`), want: []string{"ns1", "team-b"}},
		"empty list": {value: new(`[]`), want: []string{}},
		"null":       {value: new(`null`), want: []string{}},
		"invalid namespace": {
			value:   new(`["ok","Bad_NS"]`),
			wantErr: `annotation "quota.scheduling.koordinator.sh/namespaces": [1]: "Bad_NS" is not a valid namespace name (an RFC 1123 label)`,
		},
		"empty namespace": {
			value:   new(`[""]`),
			wantErr: `annotation "quota.scheduling.koordinator.sh/namespaces": [0]: "" is not a valid namespace name (an RFC 1123 label)`,
		},
		"unquoted names": {
			value:   new(`[team-a]`),
			wantErr: `annotation "quota.scheduling.koordinator.sh/namespaces": invalid character 'e' in literal true (expecting 'r')`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != nil {
				annotations[AnnotationQuotaNamespaces] = *tc.value
			}
			got, err := GetAnnotationQuotaNamespaces(quota("q", nil, annotations))
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetAnnotationQuotaNamespaces() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetAnnotationQuotaNamespaces() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetAnnotationQuotaNamespaces(t *testing.T) {
	q := quota("q", nil, nil)
	if err := SetAnnotationQuotaNamespaces(q, []string{"a", "b"}); err != nil {
		t.Fatalf("SetAnnotationQuotaNamespaces() error: %v", err)
	}
	if diff := cmp.Diff(`["a","b"]`, q.GetAnnotations()[AnnotationQuotaNamespaces]); diff != "" {
		t.Errorf("annotation value (-want,+got):\n%s", diff)
	}
	err := SetAnnotationQuotaNamespaces(q, []string{"A"})
	if diff := cmp.Diff(`annotation "quota.scheduling.koordinator.sh/namespaces": [0]: "A" is not a valid namespace name (an RFC 1123 label)`, errString(err)); diff != "" {
		t.Errorf("SetAnnotationQuotaNamespaces(invalid) error (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(`["a","b"]`, q.GetAnnotations()[AnnotationQuotaNamespaces]); diff != "" {
		t.Errorf("annotation value after failed set (-want,+got):\n%s", diff)
	}
	if err := SetAnnotationQuotaNamespaces(q, nil); err != nil {
		t.Fatalf("SetAnnotationQuotaNamespaces(nil) error: %v", err)
	}
	if diff := cmp.Diff(map[string]string{}, q.GetAnnotations()); diff != "" {
		t.Errorf("annotations after removal (-want,+got):\n%s", diff)
	}
}

func TestQuotaKeys(t *testing.T) {
	got := []string{
		LabelQuotaName, LabelQuotaParent, LabelQuotaIsParent, LabelAllowLentResource, LabelQuotaIsRoot,
		LabelQuotaTreeID, LabelPreemptible, LabelQuotaProfile, AnnotationSharedWeight, AnnotationRuntime,
		AnnotationRequest, AnnotationChildRequest, AnnotationGuaranteed, AnnotationAllocated,
		AnnotationQuotaNamespaces, AnnotationNonPreemptibleRequest, AnnotationNonPreemptibleUsed,
		AnnotationTotalResource, AnnotationResourceKeys,
	}
	var want []string
	for _, name := range []string{
		"name", "parent", "is-parent", "allow-lent-resource", "is-root", "tree-id", "preemptible", "profile",
		"shared-weight", "runtime", "request", "child-request", "guaranteed", "allocated", "namespaces",
		"non-preemptible-request", "non-preemptible-used", "total-resource", "resource-keys",
	} {
		want = append(want, "quota.scheduling.koordinator.sh/"+name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quota keys (-want,+got):\n%s", diff)
	}
}
