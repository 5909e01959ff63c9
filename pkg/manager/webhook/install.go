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

// Package webhook serves koord-manager's admission webhooks and keeps their registration in place: the serving
// certificate (through package cert) and the MutatingWebhookConfiguration and ValidatingWebhookConfiguration,
// which koord-manager writes itself with the CA bundle injected, so an install needs no cert-manager and no
// hand-made configuration.
package webhook

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/pkg/manager/webhook/cert"
)

// Hook is one admission endpoint and how the apiserver should call it.
type Hook struct {
	// Name is the webhook's name in its configuration, a fully qualified name such as "vpod.koord.dev".
	Name string
	// Path is where the server serves it.
	Path string
	// Mutating puts the hook in the MutatingWebhookConfiguration, else the validating one.
	Mutating bool
	// Handler serves the admission reviews.
	Handler http.Handler
	// Rules say which requests the apiserver sends.
	Rules []admissionregistrationv1.RuleWithOperations
	// FailurePolicy is Fail for Koord's own kinds and configuration, Ignore for pods.
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// NamespaceSelector limits the namespaces; nil means all.
	NamespaceSelector *metav1.LabelSelector
	// MatchConditions narrow the requests further (CEL).
	MatchConditions []admissionregistrationv1.MatchCondition
}

// Options configure how the webhooks are reached and where their certificates live.
type Options struct {
	// Port the webhook server listens on.
	Port int
	// CertDir receives the serving certificate.
	CertDir string
	// Host, when set, registers the webhooks by URL (https://Host:Port/path) instead of by Service; for
	// managers running outside the cluster, such as local clusters and tests.
	Host string
	// URLPort, when set, is the port of the URL instead of Port: the port of a proxy in front of several
	// replicas, each listening on its own Port. Only with Host.
	URLPort int
	// ServiceNamespace, ServiceName and ServicePort locate the Service in front of the webhook server.
	ServiceNamespace, ServiceName string
	ServicePort                   int32
	// SecretName is the Secret in ServiceNamespace that stores the certificates.
	SecretName string
	// MutatingConfigName and ValidatingConfigName name the configurations koord-manager writes.
	MutatingConfigName, ValidatingConfigName string
	// TimeoutSeconds is how long the apiserver waits for an answer.
	TimeoutSeconds int32
	// SyncInterval is how often certificates and configurations are checked and repaired.
	SyncInterval time.Duration
	// OwnedByNamespace makes both configurations dependents of the ServiceNamespace Namespace, so that
	// deleting the namespace (as helm uninstall does) deletes them too.
	OwnedByNamespace bool
}

// DefaultOptions are the defaults, with Koordinator's names so that its Helm values keep working.
func DefaultOptions() Options {
	return Options{
		Port:                 9876,
		ServiceNamespace:     "koordinator-system",
		ServiceName:          "koordinator-webhook-service",
		ServicePort:          443,
		SecretName:           "koordinator-webhook-certs",
		MutatingConfigName:   "koordinator-mutating-webhook-configuration",
		ValidatingConfigName: "koordinator-validating-webhook-configuration",
		TimeoutSeconds:       10,
		SyncInterval:         10 * time.Minute,
	}
}

// hosts are the names the serving certificate must cover.
func (o Options) hosts() cert.Hosts {
	if o.Host != "" {
		if ip := net.ParseIP(o.Host); ip != nil {
			return cert.Hosts{IPAddresses: []net.IP{ip}, DNSNames: []string{"localhost"}}
		}
		return cert.Hosts{DNSNames: []string{o.Host}}
	}
	svc := o.ServiceName + "." + o.ServiceNamespace + ".svc"
	return cert.Hosts{DNSNames: []string{svc, svc + ".cluster.local"}}
}

func (o Options) clientConfig(path string, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	if o.Host != "" {
		port := o.Port
		if o.URLPort > 0 {
			port = o.URLPort
		}
		u := "https://" + net.JoinHostPort(o.Host, strconv.Itoa(port)) + path
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
	}
	return admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{
			Namespace: o.ServiceNamespace, Name: o.ServiceName, Path: ptr.To(path), Port: ptr.To(o.ServicePort),
		},
		CABundle: caBundle,
	}
}

// Installer keeps the certificate and both webhook configurations in place. It runs in every replica, not
// only the leader: each replica serves webhooks and needs the certificate files.
type Installer struct {
	opts    Options
	client  client.Client
	keeper  *cert.Keeper
	hooks   []Hook
	clock   clock.WithTicker
	metrics *Metrics
}

// NewInstaller returns an installer for hooks that records its metrics in m (private ones when nil). c must be
// a direct (uncached) client.
func NewInstaller(c client.Client, opts Options, hooks []Hook, clk clock.WithTicker, m *Metrics) *Installer {
	return &Installer{
		metrics: m.orNew(),
		opts:    opts,
		client:  c,
		keeper:  &cert.Keeper{Client: c, Namespace: opts.ServiceNamespace, SecretName: opts.SecretName, Hosts: opts.hosts(), CertDir: opts.CertDir, Clock: clk},
		hooks:   hooks,
		clock:   clk,
	}
}

// Sync ensures the certificate, writes it to the certificate directory, and creates or updates both
// configurations with the CA bundle. Configurations are rewritten only when they differ from the desired ones.
func (i *Installer) Sync(ctx context.Context) error {
	b, err := i.keeper.Ensure(ctx)
	if err != nil {
		i.metrics.syncErrors.Inc()
		return err
	}
	if notAfter, err := b.NotAfter(); err == nil {
		i.metrics.certificateExpiry.Set(float64(notAfter.Unix()))
	}
	mutating, validating := i.configurations(b.CACert)
	if i.opts.OwnedByNamespace {
		ns := &corev1.Namespace{}
		if err := i.client.Get(ctx, client.ObjectKey{Name: i.opts.ServiceNamespace}, ns); err != nil {
			i.metrics.syncErrors.Inc()
			return fmt.Errorf("get namespace %s, the owner of the webhook configurations: %w", i.opts.ServiceNamespace, err)
		}
		owner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID}}
		mutating.OwnerReferences, validating.OwnerReferences = owner, owner
	}
	if err := i.apply(ctx, mutating); err != nil {
		i.metrics.syncErrors.Inc()
		return err
	}
	if err := i.apply(ctx, validating); err != nil {
		i.metrics.syncErrors.Inc()
		return err
	}
	return nil
}

// Start re-syncs every SyncInterval until ctx ends, repairing deleted or edited configurations and renewing
// the certificate before it expires. Errors are logged and retried at the next tick.
func (i *Installer) Start(ctx context.Context) error {
	logger := ctrl.LoggerFrom(ctx).WithName("webhook-installer")
	ticker := i.clock.NewTicker(i.opts.SyncInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
			if err := i.Sync(ctx); err != nil {
				logger.Error(err, "Webhook registration sync failed; retrying at the next interval", "interval", i.opts.SyncInterval)
			}
		}
	}
}

// NeedLeaderElection tells the manager to run the installer in every replica.
func (i *Installer) NeedLeaderElection() bool { return false }

func (i *Installer) configurations(caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	labels := map[string]string{"app.kubernetes.io/part-of": "koord", "app.kubernetes.io/managed-by": "koord-manager"}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: i.opts.MutatingConfigName, Labels: labels}}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: i.opts.ValidatingConfigName, Labels: labels}}
	none := admissionregistrationv1.SideEffectClassNone
	for _, h := range i.hooks {
		policy := h.FailurePolicy
		cc := i.opts.clientConfig(h.Path, caBundle)
		nsSelector := h.NamespaceSelector
		if nsSelector == nil {
			nsSelector = &metav1.LabelSelector{}
		}
		// Spell out what the apiserver would default, so that the stored object equals the desired one and
		// an unchanged registration is never rewritten.
		rules := make([]admissionregistrationv1.RuleWithOperations, len(h.Rules))
		for r := range h.Rules {
			rules[r] = *h.Rules[r].DeepCopy()
			if rules[r].Scope == nil {
				rules[r].Scope = ptr.To(admissionregistrationv1.AllScopes)
			}
		}
		if h.Mutating {
			m.Webhooks = append(m.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name: h.Name, ClientConfig: cc, Rules: rules, FailurePolicy: &policy,
				MatchPolicy: ptr.To(admissionregistrationv1.Equivalent), NamespaceSelector: nsSelector,
				ObjectSelector: &metav1.LabelSelector{}, SideEffects: &none, TimeoutSeconds: ptr.To(i.opts.TimeoutSeconds),
				AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
				MatchConditions: h.MatchConditions,
			})
			continue
		}
		v.Webhooks = append(v.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name: h.Name, ClientConfig: cc, Rules: rules, FailurePolicy: &policy,
			MatchPolicy: ptr.To(admissionregistrationv1.Equivalent), NamespaceSelector: nsSelector,
			ObjectSelector: &metav1.LabelSelector{}, SideEffects: &none, TimeoutSeconds: ptr.To(i.opts.TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"}, MatchConditions: h.MatchConditions,
		})
	}
	return m, v
}

// apply creates obj or updates the existing object's labels and webhooks when they differ.
func (i *Installer) apply(ctx context.Context, desired client.Object) error {
	logger := ctrl.LoggerFrom(ctx)
	current := desired.DeepCopyObject().(client.Object)
	err := i.client.Get(ctx, client.ObjectKeyFromObject(desired), current)
	if apierrors.IsNotFound(err) {
		if err := i.client.Create(ctx, desired); err != nil {
			return fmt.Errorf("create %s: %w", desired.GetName(), err)
		}
		logger.Info("Registered webhooks", "configuration", desired.GetName())
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s: %w", desired.GetName(), err)
	}
	changed := false
	switch cur := current.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		want := desired.(*admissionregistrationv1.MutatingWebhookConfiguration)
		if !equality.Semantic.DeepEqual(cur.Webhooks, want.Webhooks) {
			cur.Webhooks, changed = want.Webhooks, true
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		want := desired.(*admissionregistrationv1.ValidatingWebhookConfiguration)
		if !equality.Semantic.DeepEqual(cur.Webhooks, want.Webhooks) {
			cur.Webhooks, changed = want.Webhooks, true
		}
	}
	if want := desired.GetOwnerReferences(); want != nil && !equality.Semantic.DeepEqual(current.GetOwnerReferences(), want) {
		current.SetOwnerReferences(want)
		changed = true
	}
	labels := current.GetLabels()
	for k, v := range desired.GetLabels() {
		if labels[k] != v {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[k], changed = v, true
		}
	}
	if !changed {
		return nil
	}
	current.SetLabels(labels)
	if err := i.client.Update(ctx, current); err != nil {
		return fmt.Errorf("update %s: %w", desired.GetName(), err)
	}
	logger.Info("Updated webhook registration", "configuration", desired.GetName())
	return nil
}

// HookNames lists the names of the hooks, for logs.
func HookNames(hooks []Hook) []string {
	names := make([]string, 0, len(hooks))
	for _, h := range hooks {
		names = append(names, h.Name)
	}
	slices.Sort(names)
	return names
}
