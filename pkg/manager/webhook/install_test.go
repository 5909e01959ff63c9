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

package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
)

func TestClientConfig(t *testing.T) {
	ca := []byte("ca")
	tests := map[string]struct {
		mutate func(*Options)
		want   admissionregistrationv1.WebhookClientConfig
	}{
		"by Service": {
			mutate: func(*Options) {},
			want: admissionregistrationv1.WebhookClientConfig{CABundle: ca, Service: &admissionregistrationv1.ServiceReference{
				Namespace: "koordinator-system", Name: "koordinator-webhook-service", Path: ptr.To("/mutate-pod"), Port: ptr.To[int32](443)}},
		},
		"by URL on the server's port": {
			mutate: func(o *Options) { o.Host = "127.0.0.1"; o.Port = 9876 },
			want:   admissionregistrationv1.WebhookClientConfig{CABundle: ca, URL: ptr.To("https://127.0.0.1:9876/mutate-pod")},
		},
		"by URL on a proxy's port": {
			mutate: func(o *Options) { o.Host = "127.0.0.1"; o.Port = 9876; o.URLPort = 9443 },
			want:   admissionregistrationv1.WebhookClientConfig{CABundle: ca, URL: ptr.To("https://127.0.0.1:9443/mutate-pod")},
		},
		"IPv6 host": {
			mutate: func(o *Options) { o.Host = "::1"; o.Port = 9876 },
			want:   admissionregistrationv1.WebhookClientConfig{CABundle: ca, URL: ptr.To("https://[::1]:9876/mutate-pod")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mutate(&o)
			if diff := cmp.Diff(tc.want, o.clientConfig("/mutate-pod", ca)); diff != "" {
				t.Errorf("clientConfig (-want,+got):\n%s", diff)
			}
		})
	}
}
