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

package quotaprofile

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	quotav1alpha1 "github.com/koord-dev/koord/apis/quota/v1alpha1"
)

func node(name string, isReady bool) corev1.Node {
	status := corev1.ConditionTrue
	if !isReady {
		status = corev1.ConditionFalse
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:              resource.MustParse("10"),
				corev1.ResourceMemory:           resource.MustParse("1000"),
				corev1.ResourceEphemeralStorage: resource.MustParse("1000"),
			},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
		},
	}
}

// TestDesiredQuota pins the quota to Koordinator's controller tests: nodes of 10 cpus, 1000 memory and 1000
// storage, one of them not Ready.
func TestDesiredQuota(t *testing.T) {
	nodes := []corev1.Node{node("ready", true), node("not-ready", false)}
	profile := func(edit func(*quotav1alpha1.ElasticQuotaProfile)) *quotav1alpha1.ElasticQuotaProfile {
		p := &quotav1alpha1.ElasticQuotaProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "profile1"},
			Spec:       quotav1alpha1.ElasticQuotaProfileSpec{QuotaName: "pool-a", NodeSelector: &metav1.LabelSelector{}},
		}
		if edit != nil {
			edit(p)
		}
		return p
	}
	max := resource.MustParse("4611686018427387")
	tests := map[string]struct {
		profile           *quotav1alpha1.ElasticQuotaProfile
		wantMin           corev1.ResourceList
		wantTotal         corev1.ResourceList
		wantUnschedulable corev1.ResourceList
		wantLabels        map[string]string
	}{
		"two nodes": {
			profile:           profile(nil),
			wantMin:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20"), corev1.ResourceMemory: resource.MustParse("2000")},
			wantTotal:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20"), corev1.ResourceMemory: resource.MustParse("2000"), corev1.ResourceEphemeralStorage: resource.MustParse("2000")},
			wantUnschedulable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), corev1.ResourceMemory: resource.MustParse("1000"), corev1.ResourceEphemeralStorage: resource.MustParse("1000")},
			wantLabels:        map[string]string{extension.LabelQuotaProfile: "profile1", extension.LabelQuotaTreeID: "tree", extension.LabelQuotaIsRoot: "true"},
		},
		"ratio 0.9, quota labels": {
			profile: profile(func(p *quotav1alpha1.ElasticQuotaProfile) {
				p.Spec.ResourceRatio = ptr.To("0.9")
				p.Spec.QuotaLabels = map[string]string{extension.LabelQuotaIsParent: "true"}
			}),
			wantMin:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("18"), corev1.ResourceMemory: resource.MustParse("1800")},
			wantTotal:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("18"), corev1.ResourceMemory: resource.MustParse("1800"), corev1.ResourceEphemeralStorage: resource.MustParse("1800")},
			wantUnschedulable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("9"), corev1.ResourceMemory: resource.MustParse("900"), corev1.ResourceEphemeralStorage: resource.MustParse("900")},
			wantLabels: map[string]string{extension.LabelQuotaProfile: "profile1", extension.LabelQuotaTreeID: "tree", extension.LabelQuotaIsRoot: "true",
				extension.LabelQuotaIsParent: "true"},
		},
		"resource keys": {
			profile: profile(func(p *quotav1alpha1.ElasticQuotaProfile) {
				p.Annotations = map[string]string{extension.AnnotationResourceKeys: `["cpu"]`}
			}),
			wantMin:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20")},
			wantTotal:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20"), corev1.ResourceMemory: resource.MustParse("2000"), corev1.ResourceEphemeralStorage: resource.MustParse("2000")},
			wantUnschedulable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), corev1.ResourceMemory: resource.MustParse("1000"), corev1.ResourceEphemeralStorage: resource.MustParse("1000")},
			wantLabels:        map[string]string{extension.LabelQuotaProfile: "profile1", extension.LabelQuotaTreeID: "tree", extension.LabelQuotaIsRoot: "true"},
		},
		"malformed resource keys fall back to cpu and memory": {
			profile: profile(func(p *quotav1alpha1.ElasticQuotaProfile) {
				p.Annotations = map[string]string{extension.AnnotationResourceKeys: `cpu`}
			}),
			wantMin:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20"), corev1.ResourceMemory: resource.MustParse("2000")},
			wantTotal:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20"), corev1.ResourceMemory: resource.MustParse("2000"), corev1.ResourceEphemeralStorage: resource.MustParse("2000")},
			wantUnschedulable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), corev1.ResourceMemory: resource.MustParse("1000"), corev1.ResourceEphemeralStorage: resource.MustParse("1000")},
			wantLabels:        map[string]string{extension.LabelQuotaProfile: "profile1", extension.LabelQuotaTreeID: "tree", extension.LabelQuotaIsRoot: "true"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := desiredQuota(tc.profile, "tree", nodes, klog.Background())
			if err != nil {
				t.Fatal(err)
			}
			gotAnnotations := got.annotations
			if diff := cmp.Diff(tc.wantMin, got.min, equalQuantities); diff != "" {
				t.Errorf("min (-want +got):\n%s", diff)
			}
			for k, v := range got.max {
				if v.Cmp(max) != 0 {
					t.Errorf("max[%s] = %s, want %s", k, v.String(), max.String())
				}
			}
			if len(got.max) != len(tc.wantMin) {
				t.Errorf("max has %d resources, want %d", len(got.max), len(tc.wantMin))
			}
			for key, want := range map[string]corev1.ResourceList{
				extension.AnnotationTotalResource:         tc.wantTotal,
				extension.AnnotationUnschedulableResource: tc.wantUnschedulable,
			} {
				var got corev1.ResourceList
				if err := json.Unmarshal([]byte(gotAnnotations[key]), &got); err != nil {
					t.Fatalf("annotation %s: %v", key, err)
				}
				if diff := cmp.Diff(want, got, equalQuantities); diff != "" {
					t.Errorf("annotation %s (-want +got):\n%s", key, diff)
				}
			}
			if diff := cmp.Diff(tc.wantLabels, got.labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// equalQuantities compares quantities by value.
var equalQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// TestTreeID: the FNV-64a hash of "namespace/name" in decimal, as Koordinator's.
func TestTreeID(t *testing.T) {
	h := fnv.New64a()
	_, _ = h.Write([]byte("ns/profile1"))
	if got, want := TreeID("ns", "profile1"), strconv.FormatUint(h.Sum64(), 10); got != want {
		t.Errorf("TreeID = %s, want %s", got, want)
	}
	if TreeID("ns", "profile1") == TreeID("other", "profile1") {
		t.Error("TreeID does not depend on the namespace")
	}
}
