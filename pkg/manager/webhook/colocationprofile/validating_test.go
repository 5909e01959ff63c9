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
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
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

// newReader returns a fake client with Koordinator's PriorityClasses.
func newReader() client.WithWatch {
	var objs []client.Object
	for name, value := range map[string]int32{"koord-prod": 9000, "koord-mid": 7000, "koord-batch": 5000, "koord-free": 3000} {
		objs = append(objs, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	return fake.NewClientBuilder().WithScheme(testScheme).WithObjects(objs...).Build()
}

// validSpec sets every field of a profile to a valid value.
func validSpec() configv1alpha1.ClusterColocationProfileSpec {
	return configv1alpha1.ClusterColocationProfileSpec{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "on"}},
		Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"spark", "flink"}},
		}},
		Probability:           ptr.To(intstr.FromString("30%")),
		QoSClass:              "BE",
		PriorityClassName:     "koord-batch",
		KoordinatorPriority:   ptr.To[int32](1000),
		Labels:                map[string]string{"koordinator.sh/mutated": "true"},
		Annotations:           map[string]string{"Example.com/Note": "any value"},
		LabelKeysMapping:      map[string]string{"app": "example.com/app"},
		AnnotationKeysMapping: map[string]string{"a": "B"},
		LabelSuffixes:         map[string]string{"app": "-batch_1.0"},
		SchedulerName:         "koord-scheduler",
		Patch:                 runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"x":"y"}},"spec":{"tolerations":[{"key":"k","operator":"Exists"}]}}`)},
	}
}

// withSpec returns validSpec changed by fn.
func withSpec(fn func(*configv1alpha1.ClusterColocationProfileSpec)) configv1alpha1.ClusterColocationProfileSpec {
	spec := validSpec()
	fn(&spec)
	return spec
}

func TestValidatingHandler(t *testing.T) {
	tests := map[string]struct {
		op      admissionv1.Operation
		spec    configv1alpha1.ClusterColocationProfileSpec
		wantMsg string // "" means allowed
	}{
		"valid profile": {
			spec: validSpec(),
		},
		"empty profile": {},
		"integer probability": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.Probability = ptr.To(intstr.FromInt32(100)) }),
		},
		"LS with batch": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.QoSClass = "LS" }),
		},
		"QoS class without priority class": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.QoSClass, s.PriorityClassName = "LSR", "" }),
		},
		"invalid selector operator": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) {
				s.Selector.MatchExpressions[0].Operator = "Bogus"
			}),
			wantMsg: `spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator`,
		},
		"invalid namespace selector value": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) {
				s.NamespaceSelector.MatchLabels["colocation"] = "on off"
			}),
			wantMsg: `spec.namespaceSelector.matchLabels: Invalid value: "on off": a valid label must be`,
		},
		"probability above 100": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.Probability = ptr.To(intstr.FromInt32(150)) }),
			wantMsg: `spec.probability: Invalid value: 150: must be an integer from 0 to 100 or a percentage from "0%" to "100%"`,
		},
		"negative probability": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.Probability = ptr.To(intstr.FromInt32(-1)) }),
			wantMsg: `spec.probability: Invalid value: -1: must be an integer from 0 to 100 or a percentage from "0%" to "100%"`,
		},
		"percentage above 100": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) {
				s.Probability = ptr.To(intstr.FromString("101%"))
			}),
			wantMsg: `spec.probability: Invalid value: "101%": must be an integer from 0 to 100 or a percentage from "0%" to "100%"`,
		},
		"string that is not a percentage": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.Probability = ptr.To(intstr.FromString("50")) }),
			wantMsg: `spec.probability: Invalid value: "50": must be an integer from 0 to 100 or a percentage from "0%" to "100%"`,
		},
		"unknown QoS class": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.QoSClass = "Batch" }),
			wantMsg: `spec.qosClass: Unsupported value: "Batch": supported values: "LSE", "LSR", "LS", "BE", "SYSTEM"`,
		},
		"invalid scheduler name": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.SchedulerName = "Koord_Scheduler" }),
			wantMsg: `spec.schedulerName: Invalid value: "Koord_Scheduler": a lowercase RFC 1123 subdomain must consist of`,
		},
		"invalid label key": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.Labels["bad key"] = "v" }),
			wantMsg: `spec.labels: Invalid value: "bad key": name part must consist of`,
		},
		"invalid annotation key": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.Annotations["/x"] = "v" }),
			wantMsg: `spec.annotations: Invalid value: "/x": prefix part must be non-empty`,
		},
		"invalid label mapping target": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.LabelKeysMapping["app"] = "app copy" }),
			wantMsg: `spec.labelKeysMapping[app]: Invalid value: "app copy": name part must consist of`,
		},
		"invalid annotation mapping source": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) {
				s.AnnotationKeysMapping = map[string]string{"a b": "c"}
			}),
			wantMsg: `spec.annotationKeysMapping[a b]: Invalid value: "a b": name part must consist of`,
		},
		"invalid label suffix": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.LabelSuffixes["app"] = "/x" }),
			wantMsg: `spec.labelSuffixes[app]: Invalid value: "/x": must consist of alphanumeric characters, '-', '_' or '.', and be at most 63 characters`,
		},
		"patch that is not an object": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.Patch.Raw = []byte(`[1]`) }),
			wantMsg: `spec.patch: Invalid value: must be a JSON object`,
		},
		"patch with the wrong shape": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) {
				s.Patch.Raw = []byte(`{"spec":{"containers":{"name":"c"}}}`)
			}),
			wantMsg: `spec.patch: Invalid value: is not a strategic merge patch of a Pod: `,
		},
		"patch with an unknown field": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) {
				s.Patch.Raw = []byte(`{"spec":{"tolerationz":[]}}`)
			}),
			wantMsg: `spec.patch: Invalid value: is not a strategic merge patch of a Pod: unknown field "spec.tolerationz"`,
		},
		"missing PriorityClass": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.PriorityClassName = "koord-gold" }),
			wantMsg: `spec.priorityClassName: Not found: "koord-gold"`,
		},
		"BE with prod": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.PriorityClassName = "koord-prod" }),
			wantMsg: `spec.qosClass: Forbidden: koordinator.sh/qosClass=BE and priorityClass=koord-prod cannot be used in combination`,
		},
		"LSR with batch": {
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.QoSClass = "LSR" }),
			wantMsg: `spec.qosClass: Forbidden: koordinator.sh/qosClass=LSR and priorityClass=koord-batch cannot be used in combination`,
		},
		"LSE with free": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) {
				s.QoSClass, s.PriorityClassName = "LSE", "koord-free"
			}),
			wantMsg: `spec.qosClass: Forbidden: koordinator.sh/qosClass=LSE and priorityClass=koord-free cannot be used in combination`,
		},
		"several problems at once": {
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) {
				s.Probability = ptr.To(intstr.FromInt32(101))
				s.PriorityClassName = "koord-gold"
			}),
			wantMsg: `[spec.probability: Invalid value: 101: must be an integer from 0 to 100 or a percentage from "0%" to "100%", spec.priorityClassName: Not found: "koord-gold"]`,
		},
		"update is checked too": {
			op:      admissionv1.Update,
			spec:    withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.QoSClass = "Batch" }),
			wantMsg: `spec.qosClass: Unsupported value: "Batch"`,
		},
		"delete is not checked": {
			op:   admissionv1.Delete,
			spec: withSpec(func(s *configv1alpha1.ClusterColocationProfileSpec) { s.QoSClass = "Batch" }),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			op := tc.op
			if op == "" {
				op = admissionv1.Create
			}
			handler := NewValidatingWebhook(newReader(), admission.NewDecoder(testScheme)).Handler
			resp := handler.Handle(ctx, request(t, op, tc.spec))
			if tc.wantMsg == "" {
				if !resp.Allowed {
					t.Fatalf("profile denied: %s", resp.Result.Message)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("profile allowed, want denial %q", tc.wantMsg)
			}
			got := resp.Result.Message
			if len(tc.wantMsg) < len(got) && !strings.HasSuffix(tc.wantMsg, "]") {
				got = got[:len(tc.wantMsg)] // the validation library's own wording follows
			}
			if diff := cmp.Diff(tc.wantMsg, got); diff != "" {
				t.Errorf("message (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidatingHandlerErrors(t *testing.T) {
	tests := map[string]struct {
		reader   client.Reader
		raw      []byte
		wantCode int32
	}{
		"object that does not decode": {
			reader:   newReader(),
			raw:      []byte(`{"spec":{"labels":[]}}`),
			wantCode: http.StatusBadRequest,
		},
		"PriorityClass cannot be read": {
			reader: interceptor.NewClient(newReader(), interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return errors.New("cache not started")
				},
			}),
			raw:      mustJSON(t, &configv1alpha1.ClusterColocationProfile{Spec: validSpec()}),
			wantCode: http.StatusInternalServerError,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			handler := NewValidatingWebhook(tc.reader, admission.NewDecoder(testScheme)).Handler
			resp := handler.Handle(ctx, admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: tc.raw},
			}})
			if diff := cmp.Diff(tc.wantCode, resp.Result.Code); diff != "" || resp.Allowed {
				t.Errorf("allowed=%v, code (-want,+got):\n%s", resp.Allowed, diff)
			}
		})
	}
}

// request builds an admission request for a profile with spec.
func request(t *testing.T, op admissionv1.Operation, spec configv1alpha1.ClusterColocationProfileSpec) admission.Request {
	profile := &configv1alpha1.ClusterColocationProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: configv1alpha1.SchemeGroupVersion.String(), Kind: "ClusterColocationProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: "profile"},
		Spec:       spec,
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op, Name: profile.Name}}
	if op == admissionv1.Delete {
		req.OldObject = runtime.RawExtension{Raw: mustJSON(t, profile)}
	} else {
		req.Object = runtime.RawExtension{Raw: mustJSON(t, profile)}
	}
	return req
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return data
}
