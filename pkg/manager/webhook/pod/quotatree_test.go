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

package pod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/extension"
	quotav1alpha1 "github.com/koord-dev/koord/apis/quota/v1alpha1"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

func TestMultiQuotaTreeAffinity(t *testing.T) {
	quotaIn := func(name, tree string) *schedulingsigsv1alpha1.ElasticQuota {
		q := &schedulingsigsv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "quotas", Labels: map[string]string{}}}
		if tree != "" {
			q.Labels[extension.LabelQuotaTreeID] = tree
		}
		return q
	}
	profile := &quotav1alpha1.ElasticQuotaProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-pool", Namespace: "quotas", Labels: map[string]string{extension.LabelQuotaTreeID: "t1"}},
		Spec: quotav1alpha1.ElasticQuotaProfileSpec{QuotaName: "gpu-root", NodeSelector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{"pool": "gpu"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"z9"}}},
		}},
	}
	treeReqs := []corev1.NodeSelectorRequirement{
		{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu"}},
		{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"z9"}},
	}
	objs := []client.Object{quotaIn("train", "t1"), quotaIn("team", "t1"), quotaIn("plain", ""), profile}
	pod := func(quota string, affinity *corev1.Affinity) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team", Labels: map[string]string{}}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c"}}, Affinity: affinity,
		}}
		if quota != "" {
			p.Labels[extension.LabelQuotaName] = quota
		}
		return p
	}
	required := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	own := corev1.NodeSelectorRequirement{Key: "disk", Operator: corev1.NodeSelectorOpExists}
	tests := map[string]struct {
		gate bool
		pod  *corev1.Pod
		// want is the pod's affinity after mutation.
		want *corev1.Affinity
	}{
		"quota in a tree: the profile's selector": {
			gate: true, pod: pod("train", nil),
			want: required(corev1.NodeSelectorTerm{MatchExpressions: treeReqs}),
		},
		"quota named like the namespace": {
			gate: true, pod: pod("", nil),
			want: required(corev1.NodeSelectorTerm{MatchExpressions: treeReqs}),
		},
		"every term of the pod's own affinity gets it": {
			gate: true,
			pod:  pod("train", required(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{own}}, corev1.NodeSelectorTerm{})),
			want: required(corev1.NodeSelectorTerm{MatchExpressions: append([]corev1.NodeSelectorRequirement{own}, treeReqs...)}, corev1.NodeSelectorTerm{MatchExpressions: treeReqs}),
		},
		"quota without a tree": {gate: true, pod: pod("plain", nil)},
		"unknown quota":        {gate: true, pod: pod("nowhere", nil)},
		"gate off":             {pod: pod("train", nil)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var opts []Option
			if tc.gate {
				opts = append(opts, WithMultiQuotaTree())
			}
			handler := NewMutatingWebhook(newReader(append(priorityClasses(), objs...)...), admission.NewDecoder(testScheme), opts...).Handler
			req := request(t, admissionv1.Create, tc.pod, nil)
			resp := handler.Handle(ctx, req)
			if !resp.Allowed {
				t.Fatalf("pod denied: %v", resp.Result)
			}
			mutated := applyResponse(t, req.Object.Raw, resp)
			if diff := cmp.Diff(tc.want, decodePod(t, mutated).Spec.Affinity); diff != "" {
				t.Errorf("affinity (-want,+got):\n%s", diff)
			}
			req.Object.Raw = mutated
			if again := handler.Handle(ctx, req); !again.Allowed || len(again.Patches) != 0 {
				t.Errorf("mutating the mutated pod: allowed=%v patches %v, want no patch", again.Allowed, again.Patches)
			}
		})
	}
}
