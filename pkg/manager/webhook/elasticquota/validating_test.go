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

package elasticquota

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/extension"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/scheme"
)

// testScheme knows the Koord API groups.
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

// rl builds a resource list from name/quantity pairs.
func rl(pairs ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return list
}

// quota builds an ElasticQuota with min, max and labels given as key/value pairs.
func quota(namespace, name string, min, max corev1.ResourceList, labels ...string) *schedulingsigsv1alpha1.ElasticQuota {
	q := &schedulingsigsv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{}},
		Spec:       schedulingsigsv1alpha1.ElasticQuotaSpec{Min: min, Max: max},
	}
	for i := 0; i+1 < len(labels); i += 2 {
		q.Labels[labels[i]] = labels[i+1]
	}
	return q
}

// withAnnotation returns q with the annotation key set to value.
func withAnnotation(q *schedulingsigsv1alpha1.ElasticQuota, key, value string) *schedulingsigsv1alpha1.ElasticQuota {
	q.Annotations = map[string]string{key: value}
	return q
}

const (
	parent   = extension.LabelQuotaParent
	isParent = extension.LabelQuotaIsParent
	treeID   = extension.LabelQuotaTreeID
)

// fixture is a tree: team-a (a parent, min cpu 10) with children a-1 and a-2 (min cpu 4 each; a-1 is a
// parent without children), and the leaf quota solo.
func fixture() []client.Object {
	return []client.Object{
		quota("a", "team-a", rl("cpu", "10", "memory", "10Gi"), rl("cpu", "20", "memory", "20Gi"), isParent, "true"),
		quota("a", "a-1", rl("cpu", "4"), rl("cpu", "10", "memory", "10Gi"), parent, "team-a", isParent, "true"),
		quota("a", "a-2", rl("cpu", "4"), rl("cpu", "10", "memory", "10Gi"), parent, "team-a"),
		quota("b", "solo", rl("cpu", "1"), rl("cpu", "2")),
	}
}

func TestValidatingHandler(t *testing.T) {
	tests := map[string]struct {
		op      admissionv1.Operation
		quota   *schedulingsigsv1alpha1.ElasticQuota
		old     *schedulingsigsv1alpha1.ElasticQuota
		wantMsg string // "" means allowed
	}{
		"child that fits": {
			quota: quota("a", "a-3", rl("cpu", "2", "memory", "1Gi"), rl("cpu", "2", "memory", "1Gi"), parent, "team-a"),
		},
		"quota under the root": {
			quota: quota("c", "top", rl("cpu", "100"), rl("cpu", "100"), parent, extension.RootQuotaName),
		},
		"quota without min": {
			quota: quota("c", "top", nil, rl("cpu", "100")),
		},
		"root quota is only checked on its own": {
			quota: quota("koordinator-system", extension.RootQuotaName, rl("cpu", "1"), rl("cpu", "1"), parent, "nowhere"),
		},
		"children's min above the parent's": {
			quota:   quota("a", "a-3", rl("cpu", "4"), rl("cpu", "4", "memory", "4Gi"), parent, "team-a"),
			wantMsg: `spec.min[cpu]: Invalid value: "4": sum of children's min (12) exceeds parent "team-a" min (10)`,
		},
		"resource the parent does not guarantee": {
			quota: quota("a", "a-3", rl("nvidia.com/gpu", "1"), rl("cpu", "1", "memory", "1Gi", "nvidia.com/gpu", "1"), parent, "team-a"),
			wantMsg: `[spec.max: Invalid value: "cpu, memory, nvidia.com/gpu": must name exactly the resources of the max of parent quota "team-a" (cpu, memory), ` +
				`spec.min[nvidia.com/gpu]: Invalid value: "1": sum of children's min (1) exceeds parent "team-a" min (0)]`,
		},
		"child max names fewer resources than its parent's": {
			quota:   quota("a", "a-3", rl("cpu", "1"), rl("cpu", "1"), parent, "team-a"),
			wantMsg: `spec.max: Invalid value: "cpu": must name exactly the resources of the max of parent quota "team-a" (cpu, memory)`,
		},
		"a parent's max keeps its children's resources": {
			op:      admissionv1.Update,
			old:     fixture()[0].(*schedulingsigsv1alpha1.ElasticQuota),
			quota:   quota("a", "team-a", rl("cpu", "10"), rl("cpu", "20"), isParent, "true"),
			wantMsg: `[spec.max: Invalid value: "cpu": must name exactly the resources of the max of its child quota "a-1" (cpu, memory), spec.max: Invalid value: "cpu": must name exactly the resources of the max of its child quota "a-2" (cpu, memory)]`,
		},
		"delete a built-in quota": {
			op:      admissionv1.Delete,
			old:     quota("koordinator-system", extension.DefaultQuotaName, nil, rl("cpu", "1000")),
			wantMsg: `metadata.name: Forbidden: quota "koordinator-default-quota" is built in: koord-scheduler keeps it, and it cannot be deleted`,
		},
		"child in another tree than its parent": {
			quota:   quota("a", "a-3", rl("cpu", "1"), rl("cpu", "2", "memory", "1Gi"), parent, "team-a", treeID, "t1"),
			wantMsg: `metadata.labels[quota.scheduling.koordinator.sh/tree-id]: Invalid value: "t1": must be the tree of its parent quota "team-a" ("")`,
		},
		"parent moved to another tree than its children": {
			op:    admissionv1.Update,
			old:   fixture()[0].(*schedulingsigsv1alpha1.ElasticQuota),
			quota: quota("a", "team-a", rl("cpu", "10", "memory", "10Gi"), rl("cpu", "20", "memory", "20Gi"), isParent, "true", treeID, "t1"),
			wantMsg: `[metadata.labels[quota.scheduling.koordinator.sh/tree-id]: Forbidden: cannot change from "" to "t1": a quota stays in its tree, ` +
				`metadata.labels[quota.scheduling.koordinator.sh/tree-id]: Invalid value: "t1": must be the tree of its child quota "a-1" (""), ` +
				`metadata.labels[quota.scheduling.koordinator.sh/tree-id]: Invalid value: "t1": must be the tree of its child quota "a-2" ("")]`,
		},
		"a new quota in a tree of its own": {
			quota: quota("c", "top", nil, rl("cpu", "2"), treeID, "t1", extension.LabelQuotaIsRoot, "true"),
		},
		"min above max": {
			quota:   quota("c", "top", rl("cpu", "3"), rl("cpu", "2")),
			wantMsg: `spec.min[cpu]: Invalid value: "3": must not exceed spec.max[cpu] (2)`,
		},
		"min resource missing from max": {
			quota:   quota("c", "top", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "2")),
			wantMsg: `spec.min[memory]: Invalid value: "1Gi": is not in spec.max; every resource of spec.min must also be in spec.max`,
		},
		"negative min and max": {
			quota: quota("c", "top", rl("cpu", "-1"), rl("cpu", "2", "memory", "-1Gi")),
			wantMsg: `[spec.min[cpu]: Invalid value: "-1": must not be negative, ` +
				`spec.max[memory]: Invalid value: "-1Gi": must not be negative]`,
		},
		"malformed shared weight": {
			quota:   withAnnotation(quota("c", "top", nil, rl("cpu", "2")), extension.AnnotationSharedWeight, `{"cpu":"x"}`),
			wantMsg: `metadata.annotations[quota.scheduling.koordinator.sh/shared-weight]: Invalid value: "{\"cpu\":\"x\"}": quantities must match the regular expression`,
		},
		"negative shared weight": {
			quota:   withAnnotation(quota("c", "top", nil, rl("cpu", "2")), extension.AnnotationSharedWeight, `{"cpu":"-1"}`),
			wantMsg: `metadata.annotations[quota.scheduling.koordinator.sh/shared-weight]: Invalid value: "{\"cpu\":\"-1\"}": the weight of cpu (-1) must not be negative`,
		},
		"missing parent": {
			quota:   quota("a", "a-3", nil, rl("cpu", "2"), parent, "team-x"),
			wantMsg: `metadata.labels[quota.scheduling.koordinator.sh/parent]: Invalid value: "team-x": parent quota "team-x" does not exist`,
		},
		"parent that is not a parent": {
			quota:   quota("b", "solo-1", nil, rl("cpu", "2"), parent, "solo"),
			wantMsg: `metadata.labels[quota.scheduling.koordinator.sh/parent]: Invalid value: "solo": parent quota "solo" is not a parent (label quota.scheduling.koordinator.sh/is-parent is not "true")`,
		},
		"own parent": {
			quota:   quota("c", "self", nil, rl("cpu", "2"), parent, "self", isParent, "true"),
			wantMsg: `metadata.labels[quota.scheduling.koordinator.sh/parent]: Invalid value: "self": a quota cannot be its own parent`,
		},
		"name taken in another namespace": {
			quota:   quota("c", "solo", nil, rl("cpu", "2")),
			wantMsg: `metadata.name: Invalid value: "solo": an ElasticQuota named "solo" already exists in namespace "b"; quota names must be unique across namespaces`,
		},
		"parent min below its children's": {
			op:      admissionv1.Update,
			old:     fixture()[0].(*schedulingsigsv1alpha1.ElasticQuota),
			quota:   quota("a", "team-a", rl("cpu", "6", "memory", "10Gi"), rl("cpu", "20", "memory", "20Gi"), isParent, "true"),
			wantMsg: `spec.min[cpu]: Invalid value: "6": sum of children's min (8) exceeds parent "team-a" min (6)`,
		},
		"child grows within its parent": {
			op:    admissionv1.Update,
			old:   fixture()[1].(*schedulingsigsv1alpha1.ElasticQuota),
			quota: quota("a", "a-1", rl("cpu", "6"), rl("cpu", "10", "memory", "10Gi"), parent, "team-a", isParent, "true"),
		},
		"child grows beyond its parent": {
			op:      admissionv1.Update,
			old:     fixture()[1].(*schedulingsigsv1alpha1.ElasticQuota),
			quota:   quota("a", "a-1", rl("cpu", "7"), rl("cpu", "10", "memory", "10Gi"), parent, "team-a", isParent, "true"),
			wantMsg: `spec.min[cpu]: Invalid value: "7": sum of children's min (11) exceeds parent "team-a" min (10)`,
		},
		"parent with children stops being a parent": {
			op:      admissionv1.Update,
			old:     fixture()[0].(*schedulingsigsv1alpha1.ElasticQuota),
			quota:   quota("a", "team-a", rl("cpu", "10", "memory", "10Gi"), rl("cpu", "20", "memory", "20Gi")),
			wantMsg: `metadata.labels[quota.scheduling.koordinator.sh/is-parent]: Forbidden: cannot stop being "true" while the quota has child quotas: a-1, a-2`,
		},
		"parent without children stops being a parent": {
			op:    admissionv1.Update,
			old:   fixture()[1].(*schedulingsigsv1alpha1.ElasticQuota),
			quota: quota("a", "a-1", rl("cpu", "4"), rl("cpu", "10", "memory", "10Gi"), parent, "team-a"),
		},
		"cycle": {
			op:      admissionv1.Update,
			old:     fixture()[0].(*schedulingsigsv1alpha1.ElasticQuota),
			quota:   quota("a", "team-a", rl("cpu", "10", "memory", "10Gi"), rl("cpu", "20", "memory", "20Gi"), isParent, "true", parent, "a-1"),
			wantMsg: `metadata.labels[quota.scheduling.koordinator.sh/parent]: Invalid value: "a-1": makes a cycle: team-a -> a-1 -> team-a`,
		},
		"update of status annotations only": {
			op:    admissionv1.Update,
			old:   quota("b", "broken", rl("cpu", "3"), rl("cpu", "2")),
			quota: withAnnotation(quota("b", "broken", rl("cpu", "3"), rl("cpu", "2")), extension.AnnotationRuntime, `{"cpu":"1"}`),
		},
		"delete a parent with children": {
			op:      admissionv1.Delete,
			old:     fixture()[0].(*schedulingsigsv1alpha1.ElasticQuota),
			wantMsg: `metadata.name: Forbidden: quota "team-a" cannot be deleted while it has child quotas: a-1, a-2`,
		},
		"delete a leaf": {
			op:  admissionv1.Delete,
			old: fixture()[2].(*schedulingsigsv1alpha1.ElasticQuota),
		},
		"delete a parent without children": {
			op:  admissionv1.Delete,
			old: fixture()[1].(*schedulingsigsv1alpha1.ElasticQuota),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			op := tc.op
			if op == "" {
				op = admissionv1.Create
			}
			reader := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(fixture()...).Build()
			handler := NewValidatingWebhook(reader, admission.NewDecoder(testScheme), Options{}).Handler
			resp := handler.Handle(ctx, request(t, op, tc.quota, tc.old))
			if tc.wantMsg == "" {
				if !resp.Allowed {
					t.Fatalf("quota denied: %s", resp.Result.Message)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("quota allowed, want denial %q", tc.wantMsg)
			}
			got := resp.Result.Message
			if len(tc.wantMsg) < len(got) && tc.wantMsg[len(tc.wantMsg)-1] != ']' {
				got = got[:len(tc.wantMsg)] // the quantity parser's own wording follows
			}
			if diff := cmp.Diff(tc.wantMsg, got); diff != "" {
				t.Errorf("message (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidatingHandlerErrors(t *testing.T) {
	valid := mustJSON(t, quota("c", "top", nil, rl("cpu", "1")))
	tests := map[string]struct {
		reader   client.Reader
		req      admissionv1.AdmissionRequest
		wantCode int32
	}{
		"object that does not decode": {
			reader:   fake.NewClientBuilder().WithScheme(testScheme).Build(),
			req:      admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(`{"spec":{"min":[]}}`)}},
			wantCode: http.StatusBadRequest,
		},
		"delete without the old object": {
			reader:   fake.NewClientBuilder().WithScheme(testScheme).Build(),
			req:      admissionv1.AdmissionRequest{Operation: admissionv1.Delete},
			wantCode: http.StatusBadRequest,
		},
		"quotas cannot be listed": {
			reader: interceptor.NewClient(fake.NewClientBuilder().WithScheme(testScheme).Build(), interceptor.Funcs{
				List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
					return errors.New("cache not started")
				},
			}),
			req:      admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: valid}},
			wantCode: http.StatusInternalServerError,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			handler := NewValidatingWebhook(tc.reader, admission.NewDecoder(testScheme), Options{}).Handler
			resp := handler.Handle(ctx, admission.Request{AdmissionRequest: tc.req})
			if diff := cmp.Diff(tc.wantCode, resp.Result.Code); diff != "" || resp.Allowed {
				t.Errorf("allowed=%v, code (-want,+got):\n%s", resp.Allowed, diff)
			}
		})
	}
}

// request builds an admission request: quota is the new object (nil on DELETE), old the old one (nil on CREATE).
func request(t *testing.T, op admissionv1.Operation, quota, old *schedulingsigsv1alpha1.ElasticQuota) admission.Request {
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op}}
	if quota != nil {
		req.Namespace, req.Name = quota.Namespace, quota.Name
		req.Object = runtime.RawExtension{Raw: mustJSON(t, quota)}
	}
	if old != nil {
		req.Namespace, req.Name = old.Namespace, old.Name
		req.OldObject = runtime.RawExtension{Raw: mustJSON(t, old)}
	}
	return req
}

// mustJSON encodes q with its type meta.
func mustJSON(t *testing.T, q *schedulingsigsv1alpha1.ElasticQuota) []byte {
	t.Helper()
	q = q.DeepCopy()
	q.APIVersion, q.Kind = schedulingsigsv1alpha1.SchemeGroupVersion.String(), "ElasticQuota"
	data, err := json.Marshal(q)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return data
}

// TestDelete: a quota that pods are charged to (labelled, or unlabelled in the namespace it is named after) is
// not deleted, pods that are done do not count, and any quota goes when its namespace is being deleted.
func TestDelete(t *testing.T) {
	pod := func(ns, name string, phase corev1.PodPhase, labels ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}}, Status: corev1.PodStatus{Phase: phase}}
		for i := 0; i+1 < len(labels); i += 2 {
			p.Labels[labels[i]] = labels[i+1]
		}
		return p
	}
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gone", DeletionTimestamp: &metav1.Time{Time: time.Unix(1, 0)}, Finalizers: []string{"test"}}}
	tests := map[string]struct {
		objs    []client.Object
		old     *schedulingsigsv1alpha1.ElasticQuota
		wantMsg string
	}{
		"labelled pods": {
			objs: []client.Object{pod("x", "p1", corev1.PodRunning, extension.LabelQuotaName, "solo"),
				pod("y", "p2", corev1.PodPending, extension.LabelQuotaName, "solo"), pod("x", "done", corev1.PodSucceeded, extension.LabelQuotaName, "solo")},
			old:     quota("b", "solo", rl("cpu", "1"), rl("cpu", "2")),
			wantMsg: `metadata.name: Forbidden: quota "solo" cannot be deleted while 2 pods are charged to it: x/p1, y/p2`,
		},
		"unlabelled pods of the namespace it is named after": {
			objs:    []client.Object{pod("b", "p1", corev1.PodRunning), pod("b", "other", corev1.PodRunning, extension.LabelQuotaName, "solo")},
			old:     quota("b", "b", rl("cpu", "1"), rl("cpu", "2")),
			wantMsg: `metadata.name: Forbidden: quota "b" cannot be deleted while 1 pods are charged to it: b/p1`,
		},
		"only done pods": {
			objs: []client.Object{pod("x", "done", corev1.PodFailed, extension.LabelQuotaName, "solo")},
			old:  quota("b", "solo", rl("cpu", "1"), rl("cpu", "2")),
		},
		"the namespace is being deleted": {
			objs: []client.Object{terminating, pod("gone", "p1", corev1.PodRunning, extension.LabelQuotaName, extension.DefaultQuotaName)},
			old:  quota("gone", extension.DefaultQuotaName, nil, rl("cpu", "1000")),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			reader := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(append(fixture(), tc.objs...)...).Build()
			resp := NewValidatingWebhook(reader, admission.NewDecoder(testScheme), Options{}).Handler.Handle(ctx, request(t, admissionv1.Delete, nil, tc.old))
			got := ""
			if !resp.Allowed {
				got = resp.Result.Message
			}
			if diff := cmp.Diff(tc.wantMsg, got); diff != "" {
				t.Errorf("denial (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestMaxKeysIncluded: with Koordinator's gate ElasticQuotaEnableUpdateResourceKey a child's max may name a
// subset of its parent's resources, never one the parent's does not name.
func TestMaxKeysIncluded(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	reader := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(fixture()...).Build()
	handler := NewValidatingWebhook(reader, admission.NewDecoder(testScheme), Options{MaxKeysIncluded: true}).Handler
	if resp := handler.Handle(ctx, request(t, admissionv1.Create, quota("a", "a-3", rl("cpu", "1"), rl("cpu", "1"), parent, "team-a"), nil)); !resp.Allowed {
		t.Errorf("a subset of the parent's resources: denied: %s", resp.Result.Message)
	}
	resp := handler.Handle(ctx, request(t, admissionv1.Create, quota("a", "a-3", nil, rl("cpu", "1", "pods", "1"), parent, "team-a"), nil))
	if want := `spec.max: Invalid value: "cpu, pods": must name only the resources of the max of parent quota "team-a" (cpu, memory)`; resp.Allowed || resp.Result.Message != want {
		t.Errorf("a resource the parent does not name: allowed %v, %q; want %q", resp.Allowed, resp.Result.Message, want)
	}
}
