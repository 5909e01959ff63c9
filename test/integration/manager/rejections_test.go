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

package manager

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// TestEachValidationRejectionThroughTheAPI sends one object per validation rule through the apiserver (dry run)
// and checks the message the user sees names the field and the problem.
func TestEachValidationRejectionThroughTheAPI(t *testing.T) {
	ensureSystemNamespace(t)
	opts := testOptions(t)
	opts.Controllers = nil
	startManager(t, opts)
	ctx := t.Context()

	createOrFail(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rejections"}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "koord-prod"}, Value: 9000},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "koord-batch"}, Value: 5000},
		&schedulingsigsv1alpha1.ElasticQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: "rejections", Name: "leaf-quota"},
			Spec: schedulingsigsv1alpha1.ElasticQuotaSpec{
				Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			},
		},
	)

	pod := func(name string, labels map[string]string, priorityClass string, res corev1.ResourceRequirements, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "rejections", Name: name, Labels: labels, Annotations: annotations},
			Spec: corev1.PodSpec{PriorityClassName: priorityClass,
				Containers: []corev1.Container{{Name: "main", Image: "app", Resources: res}}},
		}
	}
	quota := func(name string, labels map[string]string) *schedulingsigsv1alpha1.ElasticQuota {
		return &schedulingsigsv1alpha1.ElasticQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: "rejections", Name: name, Labels: labels},
			Spec: schedulingsigsv1alpha1.ElasticQuotaSpec{
				Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			},
		}
	}
	batch := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{extension.BatchCPU: resource.MustParse("1000")},
		Limits:   corev1.ResourceList{extension.BatchCPU: resource.MustParse("1000")},
	}
	halfCPU := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
	}
	unequal := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
	}

	tests := map[string]struct {
		obj  client.Object
		want []string
	}{
		"pod: BE with prod priority": {
			obj:  pod("be-prod", map[string]string{extension.LabelPodQoS: "BE"}, "koord-prod", resources("1", "1Gi"), nil),
			want: []string{"koordinator.sh/qosClass=BE and priorityClass=koord-prod cannot be used in combination"},
		},
		"pod: batch resources without BE": {
			obj:  pod("batch-ls", map[string]string{extension.LabelPodQoS: "LS"}, "koord-batch", batch, nil),
			want: []string{"metadata.labels[koordinator.sh/qosClass]", "must be BE because"},
		},
		"pod: LSR with fractional CPU": {
			obj:  pod("lsr-fraction", map[string]string{extension.LabelPodQoS: "LSR"}, "koord-prod", halfCPU, nil),
			want: []string{"spec.containers[0].resources.requests[cpu]", "must be a whole number of CPUs in an LSR pod"},
		},
		"pod: LSE with limit above request": {
			obj:  pod("lse-unequal", map[string]string{extension.LabelPodQoS: "LSE"}, "koord-prod", unequal, nil),
			want: []string{"spec.containers[0].resources.limits[cpu]", "must equal the cpu request (1) in an LSE pod"},
		},
		"pod: malformed resource-spec annotation": {
			obj: pod("bad-annotation", nil, "", resources("1", "1Gi"),
				map[string]string{extension.AnnotationResourceSpec: "{not json"}),
			want: []string{"metadata.annotations[scheduling.koordinator.sh/resource-spec]"},
		},
		"pod: unknown QoS class": {
			obj:  pod("bad-qos", map[string]string{extension.LabelPodQoS: "Gold"}, "", resources("1", "1Gi"), nil),
			want: []string{"metadata.labels[koordinator.sh/qosClass]", `Unsupported value: "Gold"`},
		},
		"quota: parent does not exist": {
			obj:  quota("orphan", map[string]string{extension.LabelQuotaParent: "no-such-quota"}),
			want: []string{"metadata.labels[quota.scheduling.koordinator.sh/parent]", `parent quota "no-such-quota" does not exist`},
		},
		"quota: parent is not a parent": {
			obj:  quota("under-leaf", map[string]string{extension.LabelQuotaParent: "leaf-quota"}),
			want: []string{`parent quota "leaf-quota" is not a parent`},
		},
		"quota: its own parent": {
			obj:  quota("self-parent", map[string]string{extension.LabelQuotaParent: "self-parent", extension.LabelQuotaIsParent: "true"}),
			want: []string{"a quota cannot be its own parent"},
		},
		"quota: min resource missing from max": {
			obj: &schedulingsigsv1alpha1.ElasticQuota{
				ObjectMeta: metav1.ObjectMeta{Namespace: "rejections", Name: "min-not-in-max"},
				Spec: schedulingsigsv1alpha1.ElasticQuotaSpec{
					Min: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
					Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				},
			},
			want: []string{"spec.min[memory]", "is not in spec.max"},
		},
		"profile: invalid patch": {
			obj: &configv1alpha1.ClusterColocationProfile{
				ObjectMeta: metav1.ObjectMeta{Name: "bad-patch"},
				Spec:       configv1alpha1.ClusterColocationProfileSpec{Patch: runtime.RawExtension{Raw: []byte(`{"spec":{"containers":"not-a-list"}}`)}},
			},
			want: []string{"spec.patch", "is not a strategic merge patch of a Pod"},
		},
		"profile: BE with prod priority": {
			obj: &configv1alpha1.ClusterColocationProfile{
				ObjectMeta: metav1.ObjectMeta{Name: "be-prod"},
				Spec:       configv1alpha1.ClusterColocationProfileSpec{QoSClass: "BE", PriorityClassName: "koord-prod"},
			},
			want: []string{"cannot be used in combination"},
		},
	}
	// The handlers that read the manager's cache need it filled: the leaf quota must be visible first.
	eventually(t, "the manager's cache did not see the leaf quota", func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, quota("under-leaf", map[string]string{extension.LabelQuotaParent: "leaf-quota"}), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "is not a parent"), nil
	})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.obj, client.DryRunAll)
			if err == nil {
				t.Fatalf("the apiserver admitted %s", tc.obj.GetName())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("rejection %q does not contain %q", err.Error(), w)
				}
			}
			t.Logf("rejected as expected: %v", err)
		})
	}
}
