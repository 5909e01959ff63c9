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

package nodeslo

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/koord-dev/koord/apis/configuration"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := slov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// snapshot parses a ConfigMap with the given resource-threshold-config.
func snapshot(t *testing.T, rv, threshold string) *sloconfig.Snapshot {
	t.Helper()
	snap, err := sloconfig.Parse(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv},
		Data:       map[string]string{configuration.ResourceThresholdConfigKey: threshold},
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

const thresholdCfg = `{"clusterStrategy": {"enable": true},
  "nodeStrategies": [{"name": "gpu", "nodeSelector": {"matchLabels": {"gpu": "true"}}, "cpuSuppressThresholdPercent": 40}]}`

func node(name string, nodeLabels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid"), Labels: nodeLabels}}
}

// wantSpec is the NodeSLO spec of a node under thresholdCfg.
func wantSpec(gpu bool) slov1alpha1.NodeSLOSpec {
	threshold := configuration.DefaultResourceThresholdStrategy()
	threshold.Enable = ptr.To(true)
	if gpu {
		threshold.CPUSuppressThresholdPercent = ptr.To[int64](40)
	}
	return slov1alpha1.NodeSLOSpec{
		ResourceUsedThresholdWithBE: threshold,
		ResourceQOSStrategy:         configuration.DefaultResourceQOSStrategy(),
		CPUBurstStrategy:            configuration.DefaultCPUBurstStrategy(),
		SystemStrategy:              configuration.DefaultSystemStrategy(),
	}
}

func ownedBy(n *corev1.Node) []metav1.OwnerReference {
	return []metav1.OwnerReference{sloconfig.NodeOwnerReference(n)}
}

// writes counts the writes a client makes.
type writes struct{ creates, updates, deletes int }

func TestReconcile(t *testing.T) {
	gpuNode := node("gpu-1", map[string]string{"gpu": "true"})
	cpuNode := node("cpu-1", nil)
	staleSpec := wantSpec(false)
	staleSpec.CPUBurstStrategy = &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{Policy: slov1alpha1.CPUBurstAuto}}
	tests := map[string]struct {
		objects    []client.Object
		notSynced  bool
		request    string
		want       *slov1alpha1.NodeSLO
		wantWrites writes
	}{
		"configuration not loaded yet: nothing is written": {
			objects:   []client.Object{gpuNode},
			notSynced: true,
			request:   "gpu-1",
		},
		"created for a node, with the node strategy that selects it": {
			objects:    []client.Object{gpuNode},
			request:    "gpu-1",
			want:       &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", OwnerReferences: ownedBy(gpuNode)}, Spec: wantSpec(true)},
			wantWrites: writes{creates: 1},
		},
		"created with the cluster strategy": {
			objects:    []client.Object{cpuNode},
			request:    "cpu-1",
			want:       &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", OwnerReferences: ownedBy(cpuNode)}, Spec: wantSpec(false)},
			wantWrites: writes{creates: 1},
		},
		"up to date: no write": {
			objects: []client.Object{cpuNode, &slov1alpha1.NodeSLO{
				ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", OwnerReferences: ownedBy(cpuNode)}, Spec: wantSpec(false),
			}},
			request: "cpu-1",
			want:    &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", OwnerReferences: ownedBy(cpuNode)}, Spec: wantSpec(false)},
		},
		"drift is repaired": {
			objects: []client.Object{cpuNode, &slov1alpha1.NodeSLO{
				ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", OwnerReferences: ownedBy(cpuNode)}, Spec: staleSpec,
			}},
			request:    "cpu-1",
			want:       &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", OwnerReferences: ownedBy(cpuNode)}, Spec: wantSpec(false)},
			wantWrites: writes{updates: 1},
		},
		"a NodeSLO without an owner gets one": {
			objects: []client.Object{cpuNode, &slov1alpha1.NodeSLO{
				ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", Labels: map[string]string{"keep": "me"}}, Spec: wantSpec(false),
			}},
			request: "cpu-1",
			want: &slov1alpha1.NodeSLO{
				ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", Labels: map[string]string{"keep": "me"}, OwnerReferences: ownedBy(cpuNode)}, Spec: wantSpec(false),
			},
			wantWrites: writes{updates: 1},
		},
		"node deleted: its NodeSLO is deleted": {
			objects:    []client.Object{&slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "gone", UID: "slo-uid"}}},
			request:    "gone",
			wantWrites: writes{deletes: 1},
		},
		"node and NodeSLO gone: nothing to do": {
			request: "gone",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var w writes
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(tc.objects...).
				WithInterceptorFuncs(countWrites(&w)).Build()
			store := sloconfig.NewStore()
			if !tc.notSynced {
				store.Install(snapshot(t, "1", thresholdCfg), &corev1.ConfigMap{})
			}
			r := NewReconciler(c, store)
			if _, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: tc.request}}); err != nil {
				t.Fatalf("Reconcile() = %v", err)
			}
			if diff := cmp.Diff(tc.wantWrites, w, cmp.AllowUnexported(writes{})); diff != "" {
				t.Errorf("writes (-want,+got):\n%s", diff)
			}
			got := getNodeSLO(t, c, tc.request)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NodeSLO (-want,+got):\n%s", diff)
			}
			// A second pass over the same inputs writes nothing: restarts and resyncs are no-ops.
			w = writes{}
			if _, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: tc.request}}); err != nil {
				t.Fatalf("second Reconcile() = %v", err)
			}
			if diff := cmp.Diff(writes{}, w, cmp.AllowUnexported(writes{})); diff != "" {
				t.Errorf("second pass writes (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestReconcileFollowsChanges checks that a NodeSLO follows a new configuration and the node's labels.
func TestReconcileFollowsChanges(t *testing.T) {
	n := node("n", nil)
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(n).Build()
	store := sloconfig.NewStore()
	store.Install(snapshot(t, "1", thresholdCfg), &corev1.ConfigMap{})
	r := NewReconciler(c, store)
	reconcileAndCheck := func(step string, want slov1alpha1.NodeSLOSpec) {
		t.Helper()
		if _, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "n"}}); err != nil {
			t.Fatalf("%s: Reconcile() = %v", step, err)
		}
		if diff := cmp.Diff(want, getNodeSLO(t, c, "n").Spec); diff != "" {
			t.Errorf("%s: spec (-want,+got):\n%s", step, diff)
		}
	}
	reconcileAndCheck("created", wantSpec(false))

	n.Labels = map[string]string{"gpu": "true"}
	if err := c.Update(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	reconcileAndCheck("relabelled", wantSpec(true))

	store.Install(snapshot(t, "2", `{"clusterStrategy": {"enable": false}}`), &corev1.ConfigMap{})
	want := wantSpec(false)
	want.ResourceUsedThresholdWithBE.Enable = ptr.To(false)
	reconcileAndCheck("new configuration", want)
}

func TestReconcileConflict(t *testing.T) {
	n := node("n", nil)
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).
		WithObjects(n, &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "n"}}).
		WithInterceptorFuncs(interceptor.Funcs{
			Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
				return apierrors.NewConflict(slov1alpha1.Resource("nodeslos"), "n", nil)
			},
		}).Build()
	store := sloconfig.NewStore()
	store.Install(sloconfig.DefaultSnapshot(), &corev1.ConfigMap{})
	_, err := NewReconciler(c, store).Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "n"}})
	if !apierrors.IsConflict(err) {
		t.Errorf("Reconcile() = %v, want the conflict returned for a retry", err)
	}
}

func TestLabelsChanged(t *testing.T) {
	p := labelsChanged()
	tests := map[string]struct {
		old, new map[string]string
		want     bool
	}{
		"same labels":   {old: map[string]string{"a": "1"}, new: map[string]string{"a": "1"}},
		"label changed": {old: map[string]string{"a": "1"}, new: map[string]string{"a": "2"}, want: true},
		"label added":   {new: map[string]string{"a": "1"}, want: true},
		"nil and empty": {old: map[string]string{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := p.Update(event.UpdateEvent{ObjectOld: node("n", tc.old), ObjectNew: node("n", tc.new)})
			if got != tc.want {
				t.Errorf("Update() = %v, want %v", got, tc.want)
			}
		})
	}
	if !p.Create(event.CreateEvent{Object: node("n", nil)}) || !p.Delete(event.DeleteEvent{Object: node("n", nil)}) {
		t.Errorf("node creations and deletions must pass")
	}
}

func countWrites(w *writes) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			w.creates++
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			w.updates++
			return c.Update(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			w.deletes++
			return c.Delete(ctx, obj, opts...)
		},
	}
}

// getNodeSLO returns the NodeSLO named name without its server-set fields, or nil.
func getNodeSLO(t *testing.T, c client.Client, name string) *slov1alpha1.NodeSLO {
	t.Helper()
	slo := &slov1alpha1.NodeSLO{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, slo); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	slo.ResourceVersion, slo.TypeMeta = "", metav1.TypeMeta{}
	return slo
}
