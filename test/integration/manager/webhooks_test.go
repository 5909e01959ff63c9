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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

func createOrFail(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := env.Client.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
		if _, ok := obj.(*corev1.Namespace); ok {
			// envtest runs no namespace controller: a deleted namespace would stay Terminating and refuse new
			// objects, so namespaces are left in place.
			continue
		}
		// t.Context() is already cancelled when cleanups run.
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
}

func resources(cpu, memory string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

// TestPodWebhooksThroughTheAPI creates pods through the apiserver: a pod in a colocation namespace comes back
// as a BE batch pod on batch resources; an invalid combination is rejected with a message naming the field.
func TestPodWebhooksThroughTheAPI(t *testing.T) {
	ensureSystemNamespace(t)
	opts := testOptions(t)
	opts.Controllers = nil
	startManager(t, opts)
	ctx := t.Context()

	createOrFail(t,
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "koord-batch"}, Value: 5000},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "spark", Labels: map[string]string{"koordinator.sh/enable-colocation": "true"}}},
		&configv1alpha1.ClusterColocationProfile{
			ObjectMeta: metav1.ObjectMeta{Name: "colocation-profile-example"},
			Spec: configv1alpha1.ClusterColocationProfileSpec{
				NamespaceSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{"koordinator.sh/enable-colocation": "true"}},
				Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"koordinator.sh/enable-colocation": "true"}},
				QoSClass:            "BE",
				PriorityClassName:   "koord-batch",
				KoordinatorPriority: ptr.To[int32](1000),
				SchedulerName:       "koord-scheduler",
				Labels:              map[string]string{"koordinator.sh/mutated": "true"},
			},
		},
	)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "spark", Name: "executor-0", Labels: map[string]string{"koordinator.sh/enable-colocation": "true"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "spark", Resources: resources("1500m", "4Gi")}}},
	}
	// The webhook reads profiles from the manager's cache, which fills asynchronously.
	eventually(t, "pod was not mutated by the colocation profile", func(ctx context.Context) (bool, error) {
		p := pod.DeepCopy()
		p.Name = "probe-" + strconv.Itoa(int(time.Now().UnixNano()%1e6))
		if err := env.Client.Create(ctx, p, client.DryRunAll); err != nil {
			return false, err
		}
		return p.Labels[extension.LabelPodQoS] == "BE", nil
	})
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)) })
	c := pod.Spec.Containers[0]
	wantRes := corev1.ResourceList{extension.BatchCPU: resource.MustParse("1500"), extension.BatchMemory: resource.MustParse("4Gi")}
	if diff := cmp.Diff(wantRes, c.Resources.Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantRes, c.Resources.Limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{
		"koordinator.sh/enable-colocation": "true", "koordinator.sh/mutated": "true",
		extension.LabelPodQoS: "BE", extension.LabelPodPriority: "1000",
	}
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if pod.Spec.SchedulerName != "koord-scheduler" || pod.Spec.PriorityClassName != "koord-batch" || ptr.Deref(pod.Spec.Priority, 0) != 5000 {
		t.Errorf("scheduler %q, priority class %q, priority %v; want koord-scheduler, koord-batch, 5000",
			pod.Spec.SchedulerName, pod.Spec.PriorityClassName, pod.Spec.Priority)
	}
	if _, ok := pod.Annotations[extension.AnnotationExtendedResourceSpec]; !ok {
		t.Errorf("annotation %s missing: %v", extension.AnnotationExtendedResourceSpec, pod.Annotations)
	}

	// Validation: LSR with batch priority is a forbidden combination.
	createOrFail(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web"}})
	bad := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "lsr-batch", Labels: map[string]string{extension.LabelPodQoS: "LSR"}},
		Spec: corev1.PodSpec{PriorityClassName: "koord-batch",
			Containers: []corev1.Container{{Name: "main", Image: "nginx", Resources: resources("2", "1Gi")}}},
	}
	err := env.Client.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "koordinator.sh/qosClass=LSR and priorityClass=koord-batch cannot be used in combination") {
		t.Errorf("create LSR pod with batch priority: got %v, want a rejection naming the combination", err)
	}

	// Devices: koordinator.sh/gpu: 50 becomes half a GPU's core and memory on one shared GPU; 150 is refused.
	gpu := func(name, value string) *corev1.Pod {
		l := corev1.ResourceList{extension.ResourceGPU: resource.MustParse(value)}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "cuda", Resources: corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}}}}}
	}
	half := gpu("half-gpu", "50")
	if err := env.Client.Create(ctx, half); err != nil {
		t.Fatalf("create a pod of half a GPU: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), half, client.GracePeriodSeconds(0)) })
	wantGPU := corev1.ResourceList{extension.ResourceGPUCore: resource.MustParse("50"), extension.ResourceGPUMemoryRatio: resource.MustParse("50"),
		extension.ResourceGPUShared: resource.MustParse("1")}
	if diff := cmp.Diff(wantGPU, half.Spec.Containers[0].Resources.Requests); diff != "" {
		t.Errorf("GPU pod requests (-want +got):\n%s", diff)
	}
	err = env.Client.Create(ctx, gpu("gpu-150", "150"))
	if err == nil || !strings.Contains(err.Error(), "koordinator.sh/gpu-core]: Invalid value: 150: is more than 100 per GPU") {
		t.Errorf("create a pod of 150%% of a GPU: got %v, want a rejection naming the rule", err)
	}
}

// TestKoordKindValidationThroughTheAPI checks the Fail-policy webhooks on Koord's kinds.
func TestKoordKindValidationThroughTheAPI(t *testing.T) {
	ensureSystemNamespace(t)
	opts := testOptions(t)
	opts.Controllers = nil
	startManager(t, opts)
	ctx := t.Context()

	createOrFail(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	parent := &schedulingsigsv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a-parent", Labels: map[string]string{extension.LabelQuotaIsParent: "true"}},
		Spec: schedulingsigsv1alpha1.ElasticQuotaSpec{
			Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")},
			Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20")},
		},
	}
	createOrFail(t, parent)
	child := func(name, min string) *schedulingsigsv1alpha1.ElasticQuota {
		return &schedulingsigsv1alpha1.ElasticQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: map[string]string{extension.LabelQuotaParent: parent.Name}},
			Spec: schedulingsigsv1alpha1.ElasticQuotaSpec{
				Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(min)},
				Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20")},
			},
		}
	}
	// The webhook reads quotas from the manager's cache: wait until it sees the parent.
	eventually(t, "the first child quota was not admitted", func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, child("team-a-child-1", "6"))
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), child("team-a-child-1", "6")) })
	eventually(t, "the manager's cache did not see the first child", func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, child("team-a-child-2", "5"), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "exceeds"), nil
	})
	err := env.Client.Create(ctx, child("team-a-child-2", "5"))
	if err == nil || !strings.Contains(err.Error(), "spec.min") {
		t.Errorf("children's min 6+5 > parent's 10: got %v, want a rejection naming spec.min", err)
	}

	profile := &configv1alpha1.ClusterColocationProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "bad-priority"},
		Spec:       configv1alpha1.ClusterColocationProfileSpec{QoSClass: "LSR", PriorityClassName: "no-such-class"},
	}
	err = env.Client.Create(ctx, profile)
	if err == nil || !strings.Contains(err.Error(), "no-such-class") {
		t.Errorf("profile with an unknown PriorityClass: got %v, want a rejection naming it", err)
	}
}
