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
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned/scheme"
)

// testScheme knows the core types and every Koord API group.
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

// newReader returns a fake client holding objs.
func newReader(objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(testScheme).WithObjects(objs...).Build()
}

// priorityClasses are Koordinator's shipped PriorityClasses.
func priorityClasses() []client.Object {
	never := corev1.PreemptNever
	lower := corev1.PreemptLowerPriority
	return []client.Object{
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "koord-prod"}, Value: 9000, PreemptionPolicy: &lower},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "koord-mid"}, Value: 7000, PreemptionPolicy: &lower},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "koord-batch"}, Value: 5000, PreemptionPolicy: &never},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "koord-free"}, Value: 3000, PreemptionPolicy: &lower},
	}
}

// namespace returns a Namespace with labels.
func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// rl builds a resource list from name/quantity pairs.
func rl(pairs ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return list
}

// request builds an admission request for pod (and old on UPDATE) as the apiserver would send it.
func request(t testing.TB, op admissionv1.Operation, pod, old *corev1.Pod) admission.Request {
	t.Helper()
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:       "uid",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: pod.Namespace,
		Name:      pod.Name,
		Operation: op,
		Object:    runtime.RawExtension{Raw: encode(t, pod)},
	}}
	if old != nil {
		req.OldObject = runtime.RawExtension{Raw: encode(t, old)}
	}
	return req
}

// encode returns the JSON of pod with its type meta set.
func encode(t testing.TB, pod *corev1.Pod) []byte {
	t.Helper()
	pod = pod.DeepCopy()
	pod.APIVersion, pod.Kind = "v1", "Pod"
	data, err := json.Marshal(pod)
	if err != nil {
		t.Fatalf("encoding pod: %v", err)
	}
	return data
}

// applyResponse applies the JSON patch of resp to raw and returns the result.
func applyResponse(t testing.TB, raw []byte, resp admission.Response) []byte {
	t.Helper()
	if len(resp.Patches) == 0 {
		return raw
	}
	ops, err := json.Marshal(resp.Patches)
	if err != nil {
		t.Fatalf("encoding patch: %v", err)
	}
	patch, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		t.Fatalf("decoding patch %s: %v", ops, err)
	}
	out, err := patch.Apply(raw)
	if err != nil {
		t.Fatalf("applying patch %s: %v", ops, err)
	}
	return out
}

// decodePod decodes a pod from JSON and clears its type meta.
func decodePod(t testing.TB, data []byte) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := json.Unmarshal(data, pod); err != nil {
		t.Fatalf("decoding pod: %v", err)
	}
	pod.APIVersion, pod.Kind = "", ""
	return pod
}
