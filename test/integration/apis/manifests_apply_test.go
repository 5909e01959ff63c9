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

package apis

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const fieldOwner = client.FieldOwner("koord-integration-test")

// ensureNamespace creates a namespace unless it exists.
func ensureNamespace(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if name == "" {
		return
	}
	err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// apply server-side applies a manifest as a user with kubectl apply --server-side would.
func apply(ctx context.Context, obj *unstructured.Unstructured) error {
	return env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), fieldOwner, client.ForceOwnership)
}

// TestShippedManifestsApply applies every file a user would apply: the namespace, the PriorityClasses and
// every sample. Each must be accepted as written.
func TestShippedManifestsApply(t *testing.T) {
	ctx := t.Context()
	var all []manifest
	for _, pattern := range []string{"config/namespace/*.yaml", "config/priorityclass/*.yaml", "config/samples/*.yaml"} {
		ms := readManifests(t, pattern)
		if len(ms) == 0 {
			t.Fatalf("no manifests match %s", pattern)
		}
		all = append(all, ms...)
	}
	for _, m := range all {
		t.Run(m.String(), func(t *testing.T) {
			ensureNamespace(ctx, t, m.obj.GetNamespace())
			if err := apply(ctx, m.obj); err != nil {
				t.Fatalf("server-side apply of %s was rejected: %v", m, err)
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(m.obj.GroupVersionKind())
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m.obj), got); err != nil {
				t.Fatalf("get %s after apply: %v", m, err)
			}
			// Applying the same manifest again is a no-op for the object's generation.
			if err := apply(ctx, m.obj); err != nil {
				t.Fatalf("second apply of %s: %v", m, err)
			}
			again := &unstructured.Unstructured{}
			again.SetGroupVersionKind(m.obj.GroupVersionKind())
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m.obj), again); err != nil {
				t.Fatalf("get %s after second apply: %v", m, err)
			}
			if got.GetResourceVersion() != again.GetResourceVersion() {
				t.Errorf("re-applying %s changed the object (resourceVersion %s -> %s)", m, got.GetResourceVersion(), again.GetResourceVersion())
			}
		})
	}
}

// TestSamplesCoverEveryKind makes sure no CRD ships without a sample a user can start from.
func TestSamplesCoverEveryKind(t *testing.T) {
	kinds := map[string]bool{}
	for _, m := range readManifests(t, "config/samples/*.yaml") {
		kinds[m.obj.GroupVersionKind().GroupKind().String()] = true
	}
	for _, crd := range env.CRDs {
		gk := crd.Spec.Names.Kind + "." + crd.Spec.Group
		if !kinds[gk] {
			t.Errorf("config/samples has no manifest of kind %s", gk)
		}
	}
}

// TestInvalidObjectsRejected creates each manifest under apis/**/testdata/invalid and expects the apiserver to
// reject it as invalid, with a message that contains the manifest's "# want:" text (which names the field).
func TestInvalidObjectsRejected(t *testing.T) {
	ctx := t.Context()
	var ms []manifest
	for _, pattern := range []string{"apis/*/v1alpha1/testdata/invalid/*.yaml", "apis/*/*/v1alpha1/testdata/invalid/*.yaml"} {
		ms = append(ms, readManifests(t, pattern)...)
	}
	if len(ms) == 0 {
		t.Fatal("no invalid manifests found under apis/**/testdata/invalid")
	}
	for _, m := range ms {
		t.Run(m.String(), func(t *testing.T) {
			if m.want == "" {
				t.Fatalf("%s has no leading '# want: <message>' comment", m.file)
			}
			ensureNamespace(ctx, t, m.obj.GetNamespace())
			err := env.Client.Create(ctx, m.obj.DeepCopy())
			if err == nil {
				_ = env.Client.Delete(ctx, m.obj.DeepCopy())
				t.Fatalf("apiserver accepted %s; want a rejection containing %q", m, m.want)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create %s: got error %v, want an Invalid error", m, err)
			}
			if !strings.Contains(err.Error(), m.want) {
				t.Errorf("create %s: error %q does not contain %q", m, err.Error(), m.want)
			}
			t.Logf("rejected as expected: %v", err)
		})
	}
}

// TestValidEdgeCasesAccepted creates each manifest under apis/**/testdata/valid: values at the edge of the
// validation rules that Koordinator accepts and Koord must accept too.
func TestValidEdgeCasesAccepted(t *testing.T) {
	ctx := t.Context()
	var ms []manifest
	for _, pattern := range []string{"apis/*/v1alpha1/testdata/valid/*.yaml", "apis/*/*/v1alpha1/testdata/valid/*.yaml"} {
		ms = append(ms, readManifests(t, pattern)...)
	}
	if len(ms) == 0 {
		t.Fatal("no valid manifests found under apis/**/testdata/valid")
	}
	for _, m := range ms {
		t.Run(m.String(), func(t *testing.T) {
			ensureNamespace(ctx, t, m.obj.GetNamespace())
			obj := m.obj.DeepCopy()
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("apiserver rejected %s: %v", m, err)
			}
			if err := env.Client.Delete(ctx, obj); err != nil {
				t.Errorf("delete %s: %v", m, err)
			}
		})
	}
}
