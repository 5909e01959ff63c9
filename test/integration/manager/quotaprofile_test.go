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
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	quotav1alpha1 "github.com/koord-dev/koord/apis/quota/v1alpha1"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/manager"
)

// TestQuotaProfileController: an ElasticQuotaProfile gets a tree ID and a root ElasticQuota (admitted by
// koord-manager's own quota webhooks) whose min is its ratio of the selected nodes' allocatable; the quota
// follows a node joining the pool and a node leaving it.
func TestQuotaProfileController(t *testing.T) {
	ensureSystemNamespace(t)
	opts := testOptions(t)
	opts.Controllers = []string{manager.ControllerQuotaProfile}
	startManager(t, opts)
	ctx := t.Context()

	pool := map[string]string{"quota-profile-test": "pool-a"}
	a := createSLONode(t, "qp-node-a", pool, nil)
	setNodeCapacity(t, a, "10", "10Gi")
	createOrFail(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "qp-test"}})
	profile := &quotav1alpha1.ElasticQuotaProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "qp-test", Name: "pool-a"},
		Spec: quotav1alpha1.ElasticQuotaProfileSpec{
			QuotaName:     "pool-a-root",
			QuotaLabels:   map[string]string{extension.LabelQuotaIsParent: "true"},
			ResourceRatio: ptr.To("0.5"),
			NodeSelector:  &metav1.LabelSelector{MatchLabels: pool},
		},
	}
	createOrFail(t, profile)
	t.Cleanup(func() {
		for _, obj := range []client.Object{profile, &schedv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "qp-test", Name: "pool-a-root"}}} {
			if err := env.Client.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s: %v", obj.GetName(), err)
			}
		}
	})

	quotaWithMin := func(cpu, memory string) *schedv1alpha1.ElasticQuota {
		t.Helper()
		eq := &schedv1alpha1.ElasticQuota{}
		wantCPU, wantMemory := resource.MustParse(cpu), resource.MustParse(memory)
		eventually(t, "the profile's quota has min cpu "+cpu+", memory "+memory, func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: "qp-test", Name: "pool-a-root"}, eq)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			gotCPU, gotMemory := eq.Spec.Min[corev1.ResourceCPU], eq.Spec.Min[corev1.ResourceMemory]
			return gotCPU.Cmp(wantCPU) == 0 && gotMemory.Cmp(wantMemory) == 0, nil
		})
		return eq
	}
	eq := quotaWithMin("5", "5Gi")
	got := &quotav1alpha1.ElasticQuotaProfile{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(profile), got); err != nil {
		t.Fatal(err)
	}
	treeID := got.Labels[extension.LabelQuotaTreeID]
	if treeID == "" {
		t.Fatalf("the profile has no tree ID label: %v", got.Labels)
	}
	for key, want := range map[string]string{
		extension.LabelQuotaProfile:  "pool-a",
		extension.LabelQuotaTreeID:   treeID,
		extension.LabelQuotaIsRoot:   "true",
		extension.LabelQuotaIsParent: "true",
	} {
		if eq.Labels[key] != want {
			t.Errorf("quota label %s = %q, want %q", key, eq.Labels[key], want)
		}
	}
	if eq.Annotations[extension.AnnotationTotalResource] == "" {
		t.Errorf("quota has no %s annotation", extension.AnnotationTotalResource)
	}

	// A second node joins the pool: the min doubles. It leaves: back.
	b := createSLONode(t, "qp-node-b", nil, nil)
	setNodeCapacity(t, b, "10", "10Gi")
	setLabels(t, b, pool)
	quotaWithMin("10", "10Gi")
	setLabels(t, b, map[string]string{"quota-profile-test": "elsewhere"})
	quotaWithMin("5", "5Gi")
}
