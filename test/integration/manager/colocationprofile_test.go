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
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/manager"
)

// TestColocationProfileControllerLabelsPendingPods runs only the opt-in colocationprofile controller, with the
// webhooks on (the validating webhook lets a QoS class be added before binding): a pending, unbound pod that the
// managed profile selects gets
// the profile's labels and annotation, a bound pod and a running pod do not, and a profile without the
// controller-managed label is never applied.
func TestColocationProfileControllerLabelsPendingPods(t *testing.T) {
	ensureSystemNamespace(t)
	opts := testOptions(t)
	opts.Controllers = []string{manager.ControllerColocationProfile}
	opts.ColocationProfileInterval = time.Second
	startManager(t, opts)
	ctx := t.Context()

	selected := map[string]string{"colocation-profile-test": "selected"}
	podLabels := map[string]string{"colocation-profile-test": "selected", extension.LabelPodPriorityClass: "koord-batch"}
	newPod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{
			// A batch pod: the profile makes it BE, and BE needs a batch priority (the pod validating webhook).
			ObjectMeta: metav1.ObjectMeta{Namespace: "cp-test", Name: name,
				Labels: maps.Clone(podLabels)},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}
	}
	pending, bound, running := newPod("pending", ""), newPod("bound", "cp-node-1"), newPod("running", "cp-node-1")
	createOrFail(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cp-test", Labels: map[string]string{"colocation": "on"}}},
		pending, bound, running,
	)
	running.Status.Phase = corev1.PodRunning
	if err := env.Client.Status().Update(ctx, running); err != nil {
		t.Fatalf("mark pod running: %v", err)
	}

	// Created after the pods, so that only the controller can apply them.
	createOrFail(t,
		&configv1alpha1.ClusterColocationProfile{
			ObjectMeta: metav1.ObjectMeta{Name: "cp-unmanaged"},
			Spec: configv1alpha1.ClusterColocationProfileSpec{
				Selector: &metav1.LabelSelector{MatchLabels: selected},
				Labels:   map[string]string{"unmanaged": "applied"},
			},
		},
		&configv1alpha1.ClusterColocationProfile{
			ObjectMeta: metav1.ObjectMeta{Name: "cp-managed", Labels: map[string]string{extension.LabelControllerManaged: "true"}},
			Spec: configv1alpha1.ClusterColocationProfileSpec{
				NamespaceSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "on"}},
				Selector:            &metav1.LabelSelector{MatchLabels: selected},
				QoSClass:            "BE",
				KoordinatorPriority: ptr.To[int32](1000),
				SchedulerName:       "koord-scheduler",
				Labels:              map[string]string{"colocated": "true"},
				Annotations:         map[string]string{"colocated-by": "cp-managed"},
			},
		},
	)

	wantLabels := map[string]string{
		"colocation-profile-test": "selected", "colocated": "true",
		extension.LabelPodQoS: "BE", extension.LabelPodPriority: "1000", extension.LabelPodPriorityClass: "koord-batch",
	}
	eventually(t, "pending pod did not get the profile's labels", func(ctx context.Context) (bool, error) {
		got := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pending), got); err != nil {
			return false, err
		}
		return cmp.Equal(wantLabels, got.Labels), nil
	})
	got := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pending), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"colocated-by": "cp-managed"}, got.Annotations); diff != "" {
		t.Errorf("pending pod annotations (-want,+got):\n%s", diff)
	}
	if got.Spec.SchedulerName != corev1.DefaultSchedulerName {
		t.Errorf("pending pod schedulerName = %q, want it left at %q", got.Spec.SchedulerName, corev1.DefaultSchedulerName)
	}

	// Give the controller a few more passes, then check that the bound and running pods were left alone.
	time.Sleep(3 * opts.ColocationProfileInterval)
	for _, p := range []*corev1.Pod{bound, running} {
		got := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(podLabels, got.Labels); diff != "" {
			t.Errorf("pod %s labels (-want,+got):\n%s", p.Name, diff)
		}
		if len(got.Annotations) != 0 {
			t.Errorf("pod %s annotations = %v, want none", p.Name, got.Annotations)
		}
	}
}
