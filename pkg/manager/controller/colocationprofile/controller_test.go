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

package colocationprofile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/scheme"
)

const testInterval = 7 * time.Second

var testScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := scheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// env is a fake API with the pod index, recording the pod patches.
type env struct {
	client  client.Client
	patches []string
}

func newEnv(t *testing.T, objs []client.Object, patchErr error) *env {
	t.Helper()
	e := &env{}
	e.client = fake.NewClientBuilder().WithScheme(testScheme).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, PendingPodIndex, IndexPendingUnbound).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				data, err := patch.Data(obj)
				if err != nil {
					return err
				}
				e.patches = append(e.patches, obj.GetName()+" "+string(data))
				if patchErr != nil {
					return patchErr
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	return e
}

func (e *env) reconcile(t *testing.T, profile string) ctrl.Result {
	t.Helper()
	r := NewReconciler(e.client, Options{Clock: clocktesting.NewFakeClock(time.Unix(1000, 0)), Interval: testInterval})
	res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Name: profile}})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// metadata returns the labels and annotations of every pod, by name.
func (e *env) metadata(t *testing.T) map[string][2]map[string]string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := e.client.List(t.Context(), pods); err != nil {
		t.Fatal(err)
	}
	out := map[string][2]map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = [2]map[string]string{p.Labels, p.Annotations}
	}
	return out
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func pod(ns, name string, labels map[string]string, phase corev1.PodPhase, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

func profile(name string, managedValue string, mutate func(*configv1alpha1.ClusterColocationProfileSpec)) *configv1alpha1.ClusterColocationProfile {
	p := &configv1alpha1.ClusterColocationProfile{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if managedValue != "" {
		p.Labels = map[string]string{extension.LabelControllerManaged: managedValue}
	}
	p.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "on"}}
	p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "batch"}}
	p.Spec.Labels = map[string]string{"injected": "yes"}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

var batch = map[string]string{"app": "batch"}

func TestReconcileAppliesMetadataToPendingUnboundPods(t *testing.T) {
	p := profile("full", "true", func(s *configv1alpha1.ClusterColocationProfileSpec) {
		s.Annotations = map[string]string{"note": "colocated"}
		s.LabelKeysMapping = map[string]string{"app": "copied-app"}
		s.AnnotationKeysMapping = map[string]string{"source": "copied-source"}
		s.LabelSuffixes = map[string]string{"tier": "-be"}
		s.QoSClass = string(extension.QoSBE)
		s.KoordinatorPriority = ptr.To[int32](1111)
		s.SchedulerName = "koord-scheduler"
		s.PriorityClassName = "koord-batch"
		s.Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"patched":"x"}},"spec":{"hostNetwork":true}}`)}
	})
	matching := pod("on", "matching", map[string]string{"app": "batch", "tier": "web"}, corev1.PodPending, "")
	matching.Annotations = map[string]string{"source": "s"}
	objs := []client.Object{
		namespace("on", map[string]string{"colocation": "on"}),
		namespace("off", nil),
		namespace("kube-system", map[string]string{"colocation": "on"}),
		p,
		matching,
		pod("on", "bound", batch, corev1.PodPending, "node-1"),
		pod("on", "running", batch, corev1.PodRunning, "node-1"),
		pod("on", "other-app", map[string]string{"app": "web"}, corev1.PodPending, ""),
		pod("off", "other-namespace", batch, corev1.PodPending, ""),
		pod("kube-system", "system", batch, corev1.PodPending, ""),
	}
	e := newEnv(t, objs, nil)
	if got := e.reconcile(t, "full"); got.RequeueAfter != testInterval {
		t.Errorf("RequeueAfter = %s, want %s", got.RequeueAfter, testInterval)
	}
	want := map[string][2]map[string]string{
		"matching": {
			{"app": "batch", "tier": "web-be", "injected": "yes", "copied-app": "batch",
				extension.LabelPodQoS: "BE", extension.LabelPodPriority: "1111"},
			{"source": "s", "copied-source": "s", "note": "colocated"},
		},
		"bound":           {batch, nil},
		"running":         {batch, nil},
		"other-app":       {{"app": "web"}, nil},
		"other-namespace": {batch, nil},
		"system":          {batch, nil},
	}
	if diff := cmp.Diff(want, e.metadata(t)); diff != "" {
		t.Errorf("pod metadata (-want,+got):\n%s", diff)
	}

	got := &corev1.Pod{}
	if err := e.client.Get(t.Context(), client.ObjectKeyFromObject(matching), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(matching.Spec, got.Spec); diff != "" {
		t.Errorf("pod spec changed; schedulerName, priority and patch must be left alone (-want,+got):\n%s", diff)
	}

	// One patch, of metadata only, guarded by the resourceVersion.
	if len(e.patches) != 1 {
		t.Fatalf("patches = %q, want one", e.patches)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal([]byte(e.patches[0][len("matching "):]), &body); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for top, inner := range body {
		for k := range inner {
			keys = append(keys, top+"."+k)
		}
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"metadata.annotations", "metadata.labels", "metadata.resourceVersion"}, keys); diff != "" {
		t.Errorf("patch fields (-want,+got):\n%s", diff)
	}

	// A second pass finds nothing to change.
	e.patches = nil
	e.reconcile(t, "full")
	if len(e.patches) != 0 {
		t.Errorf("second pass patched %q, want nothing", e.patches)
	}
}

func TestReconcileIgnoresUnmanagedProfiles(t *testing.T) {
	tests := map[string]struct {
		objs []client.Object
	}{
		"no label":      {objs: []client.Object{profile("p", "", nil)}},
		"label false":   {objs: []client.Object{profile("p", "false", nil)}},
		"profile gone":  {objs: nil},
		"invalid value": {objs: []client.Object{profile("p", "True", nil)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := append([]client.Object{
				namespace("on", map[string]string{"colocation": "on"}),
				pod("on", "pending", batch, corev1.PodPending, ""),
			}, tc.objs...)
			e := newEnv(t, objs, nil)
			if diff := cmp.Diff(ctrl.Result{}, e.reconcile(t, "p")); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if len(e.patches) != 0 {
				t.Errorf("patched %q, want nothing", e.patches)
			}
		})
	}
}

func TestReconcileProbabilityIsDeterministic(t *testing.T) {
	p := profile("half", "true", func(s *configv1alpha1.ClusterColocationProfileSpec) {
		s.Probability = ptr.To(intstr.FromString("50%"))
	})
	objs := []client.Object{namespace("on", map[string]string{"colocation": "on"}), p}
	var want []string
	for i := range 40 {
		po := pod("on", fmt.Sprintf("pod-%02d", i), batch, corev1.PodPending, "")
		objs = append(objs, po)
		if Draw("half", po) < 50 {
			want = append(want, po.Name)
		}
	}
	if len(want) == 0 || len(want) == 40 {
		t.Fatalf("draws select %d of 40 pods; the test needs some of each", len(want))
	}
	for pass := range 3 {
		e := newEnv(t, objs, nil)
		for range 2 {
			e.reconcile(t, "half")
		}
		var got []string
		for name, md := range e.metadata(t) {
			if md[0]["injected"] == "yes" {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pass %d: selected pods (-want,+got):\n%s", pass, diff)
		}
		if len(e.patches) != len(want) {
			t.Errorf("pass %d: %d patches, want %d (one per selected pod, none on the second reconcile)", pass, len(e.patches), len(want))
		}
	}
}

func TestDraw(t *testing.T) {
	a := pod("ns", "a", nil, corev1.PodPending, "")
	tests := map[string]struct {
		profile string
		pod     *corev1.Pod
		want    int
	}{
		// FNV-1a 32 of "p/uid-a" modulo 100, computed once; the value must never change between releases, or
		// pods already decided would flip.
		"fixed value": {profile: "p", pod: a, want: drawOf("p/uid-a")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Draw(tc.profile, tc.pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Draw (-want,+got):\n%s", diff)
			}
			if got < 0 || got >= 100 {
				t.Errorf("Draw = %d, outside [0, 100)", got)
			}
		})
	}
}

// drawOf is FNV-1a 32 of s modulo 100, written out.
func drawOf(s string) int {
	h := uint32(2166136261)
	for _, b := range []byte(s) {
		h ^= uint32(b)
		h *= 16777619
	}
	return int(h % 100)
}

func TestReconcileSkipsBadInput(t *testing.T) {
	ns := namespace("on", map[string]string{"colocation": "on"})
	pending := pod("on", "pending", batch, corev1.PodPending, "")
	tests := map[string]struct {
		profile  *configv1alpha1.ClusterColocationProfile
		patchErr error
		want     ctrl.Result
	}{
		"invalid selector": {profile: profile("p", "true", func(s *configv1alpha1.ClusterColocationProfileSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
		}), want: ctrl.Result{RequeueAfter: testInterval}},
		"invalid probability": {profile: profile("p", "true", func(s *configv1alpha1.ClusterColocationProfileSpec) {
			s.Probability = ptr.To(intstr.FromString("half"))
		}), want: ctrl.Result{RequeueAfter: testInterval}},
		"conflict": {profile: profile("p", "true", nil),
			patchErr: apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "pending", fmt.Errorf("changed")),
			want:     ctrl.Result{RequeueAfter: testInterval}},
		"rejected": {profile: profile("p", "true", nil),
			patchErr: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "pending", fmt.Errorf("immutable")),
			want:     ctrl.Result{RequeueAfter: testInterval}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, []client.Object{ns, pending, tc.profile}, tc.patchErr)
			if diff := cmp.Diff(tc.want, e.reconcile(t, "p")); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string][2]map[string]string{"pending": {batch, nil}}, e.metadata(t)); diff != "" {
				t.Errorf("pod metadata (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestIndexPendingUnbound(t *testing.T) {
	deleting := pod("ns", "deleting", nil, corev1.PodPending, "")
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	tests := map[string]struct {
		obj  client.Object
		want []string
	}{
		"pending unbound": {obj: pod("ns", "a", nil, corev1.PodPending, ""), want: []string{PendingUnbound}},
		"pending bound":   {obj: pod("ns", "a", nil, corev1.PodPending, "n"), want: nil},
		"running":         {obj: pod("ns", "a", nil, corev1.PodRunning, "n"), want: nil},
		"failed unbound":  {obj: pod("ns", "a", nil, corev1.PodFailed, ""), want: nil},
		"deleting":        {obj: deleting, want: nil},
		"not a pod":       {obj: namespace("ns", nil), want: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, IndexPendingUnbound(tc.obj)); diff != "" {
				t.Errorf("index (-want,+got):\n%s", diff)
			}
		})
	}
}
