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

package configmap

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
)

// result is the part of an admission response the tests check.
type result struct {
	Allowed bool
	Code    int32
	Message string
}

func request(op admissionv1.Operation, namespace, name string, obj runtime.RawExtension) admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:       "uid",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespace: namespace,
		Name:      name,
		Operation: op,
		Object:    obj,
	}}
}

func raw(t *testing.T, namespace, name string, data map[string]string) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(&corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       data,
	})
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

func TestValidator(t *testing.T) {
	const ns, name = configuration.ConfigNamespace, configuration.SLOCtrlConfigMap
	valid := map[string]string{configuration.ColocationConfigKey: `{"enable": true}`}
	invalid := map[string]string{
		configuration.ColocationConfigKey: `{"enable": true, "cpuReclaimThresholdPrecent": 50}`,
		configuration.CPUBurstConfigKey:   `{"clusterStrategy": {"cfsQuotaBurstPercent": 50}}`,
	}
	invalidMessage := "the SLO configuration is invalid and was not applied:\n" +
		`colocation-config: unknown field "cpuReclaimThresholdPrecent"` + "\n" +
		"cpu-burst-config.clusterStrategy.cfsQuotaBurstPercent: Invalid value: 50: must be greater than or equal to 100"
	tests := map[string]struct {
		opts sloconfig.LoaderOptions
		req  func(t *testing.T) admission.Request
		want result
	}{
		"valid create": {
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Create, ns, name, raw(t, ns, name, valid))
			},
			want: result{Allowed: true, Code: 200},
		},
		"invalid update is denied with every problem": {
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Update, ns, name, raw(t, ns, name, invalid))
			},
			want: result{Code: 403, Message: invalidMessage},
		},
		"invalid create without a request name": {
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Create, ns, "", raw(t, ns, name, invalid))
			},
			want: result{Code: 403, Message: invalidMessage},
		},
		"delete is allowed": {
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Delete, ns, name, runtime.RawExtension{})
			},
			want: result{Allowed: true, Code: 200},
		},
		"other ConfigMap in the namespace": {
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Update, ns, "other", raw(t, ns, "other", invalid))
			},
			want: result{Allowed: true, Code: 200},
		},
		"same name in another namespace": {
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Update, "default", name, raw(t, "default", name, invalid))
			},
			want: result{Allowed: true, Code: 200},
		},
		"not a ConfigMap": {
			req: func(t *testing.T) admission.Request {
				r := request(admissionv1.Update, ns, name, raw(t, ns, name, invalid))
				r.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "Secret"}
				return r
			},
			want: result{Allowed: true, Code: 200},
		},
		"undecodable object": {
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Update, ns, name, runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","data":[1]}`)})
			},
			want: result{Code: 400, Message: "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"},
		},
		"configured location": {
			opts: sloconfig.LoaderOptions{Namespace: "koord", Name: "slo"},
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Update, "koord", "slo", raw(t, "koord", "slo", invalid))
			},
			want: result{Code: 403, Message: invalidMessage},
		},
		"default location is not checked when another is configured": {
			opts: sloconfig.LoaderOptions{Namespace: "koord", Name: "slo"},
			req: func(t *testing.T) admission.Request {
				return request(admissionv1.Update, ns, name, raw(t, ns, name, invalid))
			},
			want: result{Allowed: true, Code: 200},
		},
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			wh := NewValidator(admission.NewDecoder(scheme), tc.opts)
			resp := wh.Handle(t.Context(), tc.req(t))
			got := result{Allowed: resp.Allowed}
			if resp.Result != nil {
				got.Code, got.Message = resp.Result.Code, resp.Result.Message
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Handle() (-want,+got):\n%s", diff)
			}
		})
	}
}
