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
	"context"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
)

// benchProfiles returns n profiles of which about half match basePod in namespace "team"; the last one makes
// it a koord-batch pod.
func benchProfiles(n int) []*configv1alpha1.ClusterColocationProfile {
	profiles := make([]*configv1alpha1.ClusterColocationProfile, 0, n)
	for i := range n - 1 {
		spec := configv1alpha1.ClusterColocationProfileSpec{
			Labels:      map[string]string{fmt.Sprintf("profile-%02d", i): "applied"},
			Annotations: map[string]string{fmt.Sprintf("profile-%02d", i): "applied"},
		}
		switch i % 4 {
		case 0:
			spec.Selector = selectApp
		case 1:
			spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
		case 2:
			spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "on"}}
			spec.Probability = ptr.To(intstr.FromString("50%"))
		case 3:
			spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "off"}}
		}
		profiles = append(profiles, profile(fmt.Sprintf("p-%02d", i), spec))
	}
	return append(profiles, profile("z-batch", configv1alpha1.ClusterColocationProfileSpec{
		Selector: selectApp, QoSClass: "BE", PriorityClassName: "koord-batch", SchedulerName: "koord-scheduler",
	}))
}

// staticReader serves fixed objects without copying them, as the manager's cache does for the handler's
// List (UnsafeDisableDeepCopy); it keeps the fake client's encoding out of the measurement.
type staticReader struct {
	profiles   []*configv1alpha1.ClusterColocationProfile
	namespaces map[string]*corev1.Namespace
	classes    map[string]*schedulingv1.PriorityClass
}

// Get implements client.Reader for Namespaces and PriorityClasses.
func (r *staticReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *corev1.Namespace:
		if ns, ok := r.namespaces[key.Name]; ok {
			*o = *ns
			return nil
		}
		return apierrors.NewNotFound(corev1.Resource("namespaces"), key.Name)
	case *schedulingv1.PriorityClass:
		if pc, ok := r.classes[key.Name]; ok {
			*o = *pc
			return nil
		}
		return apierrors.NewNotFound(schedulingv1.Resource("priorityclasses"), key.Name)
	}
	return fmt.Errorf("unexpected type %T", obj)
}

// List implements client.Reader for ClusterColocationProfiles.
func (r *staticReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l, ok := list.(*configv1alpha1.ClusterColocationProfileList)
	if !ok {
		return fmt.Errorf("unexpected type %T", list)
	}
	l.Items = make([]configv1alpha1.ClusterColocationProfile, len(r.profiles))
	for i, p := range r.profiles {
		l.Items[i] = *p
	}
	return nil
}

func BenchmarkMutatingHandler(b *testing.B) {
	const n = 20
	profiles := benchProfiles(n)
	ns := namespace("team", map[string]string{"colocation": "on"})
	static := &staticReader{profiles: profiles, namespaces: map[string]*corev1.Namespace{"team": ns}, classes: map[string]*schedulingv1.PriorityClass{}}
	objs := []client.Object{ns}
	for _, pc := range priorityClasses() {
		static.classes[pc.GetName()] = pc.(*schedulingv1.PriorityClass)
		objs = append(objs, pc)
	}
	for _, p := range profiles {
		objs = append(objs, p)
	}
	for _, bc := range []struct {
		name   string
		reader client.Reader
	}{
		{"reader=static", static},
		{"reader=fake", newReader(objs...)},
	} {
		b.Run(fmt.Sprintf("profiles=%d/%s", n, bc.name), func(b *testing.B) {
			ctx := logr.NewContext(b.Context(), logr.Discard())
			handler := NewMutatingWebhook(bc.reader, admission.NewDecoder(testScheme), WithRandom(func() int { return 10 })).Handler
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Namespace: "team", Object: runtime.RawExtension{Raw: encode(b, basePod())},
			}}
			b.ReportAllocs()
			for b.Loop() {
				if resp := handler.Handle(ctx, req); !resp.Allowed || len(resp.Patches) == 0 {
					b.Fatalf("allowed=%v patches=%d, want a patch", resp.Allowed, len(resp.Patches))
				}
			}
		})
	}
}
