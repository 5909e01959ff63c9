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

package manager

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/pkg/manager/webhook/cert"
)

// TestWebhookRegistration checks that koord-manager registers its webhooks itself: a certificate Secret, both
// configurations with the CA bundle and the expected failure policies, and that a restart reuses all of it.
func TestWebhookRegistration(t *testing.T) {
	ensureSystemNamespace(t)
	opts := testOptions(t)
	opts.Controllers = nil
	rm := startManager(t, opts)
	ctx := t.Context()

	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: opts.Webhook.ServiceNamespace, Name: opts.Webhook.SecretName}, secret); err != nil {
		t.Fatalf("certificate secret: %v", err)
	}
	ca := secret.Data[cert.SecretKeyCACert]

	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: opts.Webhook.MutatingConfigName}, mutating); err != nil {
		t.Fatalf("mutating configuration: %v", err)
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: opts.Webhook.ValidatingConfigName}, validating); err != nil {
		t.Fatalf("validating configuration: %v", err)
	}
	policies := map[string]admissionregistrationv1.FailurePolicyType{}
	for _, w := range mutating.Webhooks {
		policies[w.Name] = *w.FailurePolicy
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("webhook %s has a CA bundle other than the Secret's CA", w.Name)
		}
	}
	for _, w := range validating.Webhooks {
		policies[w.Name] = *w.FailurePolicy
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("webhook %s has a CA bundle other than the Secret's CA", w.Name)
		}
	}
	want := map[string]admissionregistrationv1.FailurePolicyType{
		"mpod.koord.dev": admissionregistrationv1.Ignore, "vpod.koord.dev": admissionregistrationv1.Ignore,
		"vclustercolocationprofile.koord.dev": admissionregistrationv1.Fail, "velasticquota.koord.dev": admissionregistrationv1.Ignore,
		"vconfigmap.koord.dev": admissionregistrationv1.Fail,
	}
	for name, p := range want {
		if policies[name] != p {
			t.Errorf("webhook %s failure policy = %q, want %q", name, policies[name], p)
		}
	}

	// A restart changes nothing: same Secret, same configurations.
	rm.stop(t)
	secretRV := secret.ResourceVersion
	// stop removed the configurations (so that a dead manager's Fail hooks cannot block other tests); put the
	// same ones back, as a running cluster would still have them.
	mutating.ResourceVersion, validating.ResourceVersion = "", ""
	if err := env.Client.Create(ctx, mutating); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, validating); err != nil {
		t.Fatal(err)
	}
	mutatingRV, validatingRV := mutating.ResourceVersion, validating.ResourceVersion
	opts2 := opts
	startManager(t, opts2)
	again := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != secretRV {
		t.Error("a restart rewrote the certificate Secret")
	}
	m2 := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v2 := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(mutating), m2); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(validating), v2); err != nil {
		t.Fatal(err)
	}
	if m2.ResourceVersion != mutatingRV || v2.ResourceVersion != validatingRV {
		t.Error("a restart rewrote unchanged webhook configurations")
	}
}

// TestWebhookRegistrationOwnedByNamespace: with --webhook-owned-by-namespace both configurations are dependents
// of koord-manager's namespace (so that deleting it, as helm uninstall does, deletes them), and
// --webhook-failure-policy overrides the policy of a kind.
func TestWebhookRegistrationOwnedByNamespace(t *testing.T) {
	ensureSystemNamespace(t)
	opts := testOptions(t)
	opts.Controllers = nil
	opts.Webhook.OwnedByNamespace = true
	opts.WebhookFailurePolicies = map[string]string{"elasticquotas": "Fail"}
	startManager(t, opts)
	ctx := t.Context()

	ns := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: opts.Webhook.ServiceNamespace}, ns); err != nil {
		t.Fatal(err)
	}
	want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID}}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: opts.Webhook.MutatingConfigName}, mutating); err != nil {
		t.Fatal(err)
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: opts.Webhook.ValidatingConfigName}, validating); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]metav1.OwnerReference{"mutating": mutating.OwnerReferences, "validating": validating.OwnerReferences} {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s configuration owners (-want +got):\n%s", name, diff)
		}
	}
	for _, w := range validating.Webhooks {
		if w.Name == "velasticquota.koord.dev" && *w.FailurePolicy != admissionregistrationv1.Fail {
			t.Errorf("velasticquota.koord.dev failure policy = %s, want Fail from --webhook-failure-policy", *w.FailurePolicy)
		}
	}
}
