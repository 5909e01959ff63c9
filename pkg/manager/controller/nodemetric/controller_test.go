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

package nodemetric

import (
	"context"
	"testing"
	"time"

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
	"github.com/koord-dev/koord/apis/extension"
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

const colocationCfg = `{"metricReportIntervalSeconds": 30,
  "nodeConfigs": [{"name": "fast", "nodeSelector": {"matchLabels": {"pool": "fast"}}, "metricReportIntervalSeconds": 10}]}`

func snapshot(t *testing.T, rv, colocation string) *sloconfig.Snapshot {
	t.Helper()
	snap, err := sloconfig.Parse(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv},
		Data:       map[string]string{configuration.ColocationConfigKey: colocation},
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func node(name string, nodeLabels, annotations map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid"), Labels: nodeLabels, Annotations: annotations}}
}

// policy is the default collection policy with the given report interval.
func policy(reportSeconds int64) *slov1alpha1.NodeMetricCollectPolicy {
	p := configuration.NodeMetricCollectPolicy(configuration.DefaultColocationStrategy())
	p.ReportIntervalSeconds = ptr.To(reportSeconds)
	return p
}

func ownedBy(n *corev1.Node) []metav1.OwnerReference {
	return []metav1.OwnerReference{sloconfig.NodeOwnerReference(n)}
}

var agentStatus = slov1alpha1.NodeMetricStatus{
	UpdateTime: &metav1.Time{Time: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)},
	NodeMetric: &slov1alpha1.NodeMetricInfo{},
}

func TestReconcile(t *testing.T) {
	plain := node("plain", nil, nil)
	fast := node("fast-1", map[string]string{"pool": "fast"}, nil)
	annotated := node("annotated", nil, map[string]string{extension.AnnotationNodeColocationStrategy: `{"metricReportIntervalSeconds": 20}`})
	badAnnotation := node("bad", map[string]string{"pool": "fast"}, map[string]string{extension.AnnotationNodeColocationStrategy: `{"metricReportIntervalSeconds": 0}`})
	tests := map[string]struct {
		objects     []client.Object
		notSynced   bool
		request     string
		want        *slov1alpha1.NodeMetric
		wantPatches []string
		wantCreates int
		wantDeletes int
	}{
		"configuration not loaded yet: nothing is written": {
			objects:   []client.Object{plain},
			notSynced: true,
			request:   "plain",
		},
		"created with the cluster strategy": {
			objects: []client.Object{plain},
			request: "plain",
			want: &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "plain", OwnerReferences: ownedBy(plain)},
				Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: policy(30)}},
			wantCreates: 1,
		},
		"created with the node strategy that selects the node": {
			objects: []client.Object{fast},
			request: "fast-1",
			want: &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "fast-1", OwnerReferences: ownedBy(fast)},
				Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: policy(10)}},
			wantCreates: 1,
		},
		"the node annotation overrides": {
			objects: []client.Object{annotated},
			request: "annotated",
			want: &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "annotated", OwnerReferences: ownedBy(annotated)},
				Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: policy(20)}},
			wantCreates: 1,
		},
		"an invalid annotation is ignored": {
			objects: []client.Object{badAnnotation},
			request: "bad",
			want: &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "bad", OwnerReferences: ownedBy(badAnnotation)},
				Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: policy(10)}},
			wantCreates: 1,
		},
		"up to date: no write, the status is left alone": {
			objects: []client.Object{plain, &slov1alpha1.NodeMetric{
				ObjectMeta: metav1.ObjectMeta{Name: "plain", OwnerReferences: ownedBy(plain)},
				Spec:       slov1alpha1.NodeMetricSpec{CollectPolicy: policy(30)}, Status: agentStatus,
			}},
			request: "plain",
			want: &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "plain", OwnerReferences: ownedBy(plain)},
				Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: policy(30)}, Status: agentStatus},
		},
		"drifted spec: only the spec is patched, with the resourceVersion read": {
			objects: []client.Object{plain, &slov1alpha1.NodeMetric{
				ObjectMeta: metav1.ObjectMeta{Name: "plain", OwnerReferences: ownedBy(plain)},
				Spec:       slov1alpha1.NodeMetricSpec{CollectPolicy: policy(60)}, Status: agentStatus,
			}},
			request: "plain",
			want: &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "plain", OwnerReferences: ownedBy(plain)},
				Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: policy(30)}, Status: agentStatus},
			wantPatches: []string{`{"metadata":{"resourceVersion":"999"},"spec":{"metricCollectPolicy":{"reportIntervalSeconds":30}}}`},
		},
		"a NodeMetric the agent created without a spec or owner": {
			objects: []client.Object{plain, &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Status: agentStatus}},
			request: "plain",
			want: &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "plain", OwnerReferences: ownedBy(plain)},
				Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: policy(30)}, Status: agentStatus},
			wantPatches: []string{`{"metadata":{"ownerReferences":[{"apiVersion":"v1","blockOwnerDeletion":false,"controller":true,"kind":"Node","name":"plain","uid":"plain-uid"}],"resourceVersion":"999"},` +
				`"spec":{"metricCollectPolicy":{"aggregateDurationSeconds":300,"nodeAggregatePolicy":{"durations":["5m0s","10m0s","30m0s"]},"nodeMemoryCollectPolicy":"usageWithoutPageCache","reportIntervalSeconds":30}}}`},
		},
		"node deleted: its NodeMetric is deleted": {
			objects:     []client.Object{&slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "gone"}}},
			request:     "gone",
			wantDeletes: 1,
		},
		"node and NodeMetric gone": {request: "gone"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var patches []string
			var creates, deletes int
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(tc.objects...).
				WithStatusSubresource(&slov1alpha1.NodeMetric{}).
				WithInterceptorFuncs(interceptor.Funcs{
					Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
						creates++
						return c.Create(ctx, obj, opts...)
					},
					Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
						data, err := patch.Data(obj)
						if err != nil {
							return err
						}
						patches = append(patches, string(data))
						return c.Patch(ctx, obj, patch, opts...)
					},
					Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
						deletes++
						return c.Delete(ctx, obj, opts...)
					},
					Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
						t.Errorf("Update called: the controller must patch the spec only")
						return nil
					},
					SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
						t.Errorf("status updated: the node agent owns the status")
						return nil
					},
					SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
						t.Errorf("status patched: the node agent owns the status")
						return nil
					},
				}).Build()
			store := sloconfig.NewStore()
			if !tc.notSynced {
				store.Install(snapshot(t, "1", colocationCfg), &corev1.ConfigMap{})
			}
			r := NewReconciler(c, store)
			for pass := range 2 {
				if _, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: tc.request}}); err != nil {
					t.Fatalf("pass %d: Reconcile() = %v", pass, err)
				}
			}
			// The second pass over the same inputs must have written nothing more.
			if diff := cmp.Diff(tc.wantPatches, patches); diff != "" {
				t.Errorf("patches (-want,+got):\n%s", diff)
			}
			if creates != tc.wantCreates || deletes != tc.wantDeletes {
				t.Errorf("creates, deletes = %d, %d; want %d, %d", creates, deletes, tc.wantCreates, tc.wantDeletes)
			}
			if diff := cmp.Diff(tc.want, getNodeMetric(t, c, tc.request)); diff != "" {
				t.Errorf("NodeMetric (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestReconcileFollowsChanges checks that the policy follows a new configuration and the node's annotation.
func TestReconcileFollowsChanges(t *testing.T) {
	n := node("n", nil, nil)
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(n).WithStatusSubresource(&slov1alpha1.NodeMetric{}).Build()
	store := sloconfig.NewStore()
	store.Install(snapshot(t, "1", colocationCfg), &corev1.ConfigMap{})
	r := NewReconciler(c, store)
	check := func(step string, want *slov1alpha1.NodeMetricCollectPolicy) {
		t.Helper()
		if _, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "n"}}); err != nil {
			t.Fatalf("%s: Reconcile() = %v", step, err)
		}
		if diff := cmp.Diff(want, getNodeMetric(t, c, "n").Spec.CollectPolicy); diff != "" {
			t.Errorf("%s: policy (-want,+got):\n%s", step, diff)
		}
	}
	check("created", policy(30))

	store.Install(snapshot(t, "2", `{"metricReportIntervalSeconds": 45, "metricAggregatePolicy": {"durations": ["1m"]}}`), &corev1.ConfigMap{})
	want := policy(45)
	want.NodeAggregatePolicy.Durations = []metav1.Duration{{Duration: time.Minute}}
	check("new configuration", want)

	n.Annotations = map[string]string{extension.AnnotationNodeColocationStrategy: `{"metricReportIntervalSeconds": 15}`}
	if err := c.Update(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	want = policy(15)
	want.NodeAggregatePolicy.Durations = []metav1.Duration{{Duration: time.Minute}}
	check("annotated", want)
}

func TestReconcileConflict(t *testing.T) {
	n := node("n", nil, nil)
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).
		WithObjects(n, &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "n"}}).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				return apierrors.NewConflict(slov1alpha1.Resource("nodemetrics"), "n", nil)
			},
		}).Build()
	store := sloconfig.NewStore()
	store.Install(sloconfig.DefaultSnapshot(), &corev1.ConfigMap{})
	_, err := NewReconciler(c, store).Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "n"}})
	if !apierrors.IsConflict(err) {
		t.Errorf("Reconcile() = %v, want the conflict returned for a retry", err)
	}
}

func TestPredicates(t *testing.T) {
	inputs := strategyInputsChanged()
	specs := specOrOwnersChanged()
	nm := func(report int64, status slov1alpha1.NodeMetricStatus) *slov1alpha1.NodeMetric {
		return &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: policy(report)}, Status: status}
	}
	tests := map[string]struct {
		p        func(event.UpdateEvent) bool
		old, new client.Object
		want     bool
	}{
		"node status only": {p: inputs.Update, old: node("n", nil, nil), new: node("n", nil, nil)},
		"node label":       {p: inputs.Update, old: node("n", nil, nil), new: node("n", map[string]string{"a": "b"}, nil), want: true},
		"node colocation annotation": {p: inputs.Update, old: node("n", nil, nil),
			new: node("n", nil, map[string]string{extension.AnnotationNodeColocationStrategy: "{}"}), want: true},
		"other node annotation": {p: inputs.Update, old: node("n", nil, nil), new: node("n", nil, map[string]string{"x": "y"})},
		"agent status report":   {p: specs.Update, old: nm(30, slov1alpha1.NodeMetricStatus{}), new: nm(30, agentStatus)},
		"spec edited":           {p: specs.Update, old: nm(30, agentStatus), new: nm(60, agentStatus), want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.p(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("Update() = %v, want %v", got, tc.want)
			}
		})
	}
}

// getNodeMetric returns the NodeMetric named name without its server-set fields, or nil.
func getNodeMetric(t *testing.T, c client.Client, name string) *slov1alpha1.NodeMetric {
	t.Helper()
	nm := &slov1alpha1.NodeMetric{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, nm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	nm.ResourceVersion, nm.TypeMeta = "", metav1.TypeMeta{}
	return nm
}
