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
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
)

// MutatingPath is where the webhook server serves the pod mutating handler.
const MutatingPath = "/mutate-pod"

// excludedNamespaces are the namespaces whose pods the handlers leave alone.
var excludedNamespaces = sets.New(metav1.NamespaceSystem, configuration.ConfigNamespace)

// ExcludedNamespace reports whether namespace is one whose pods ClusterColocationProfiles never apply to
// (kube-system and koordinator-system).
func ExcludedNamespace(namespace string) bool {
	return excludedNamespaces.Has(namespace)
}

// Option configures the mutating handler.
type Option func(*mutator)

// WithRandom sets the source of the random numbers that decide whether a profile with a probability below
// 100 applies: random must return an integer in [0, 100). The default is math/rand/v2.
func WithRandom(random func() int) Option {
	return func(m *mutator) { m.random = random }
}

// NewMutatingWebhook returns the pod mutating webhook. reader (the manager's cache) must serve
// ClusterColocationProfiles, Namespaces and PriorityClasses (and, WithMultiQuotaTree, ElasticQuotas and
// ElasticQuotaProfiles); decoder must know the core types.
func NewMutatingWebhook(reader client.Reader, decoder admission.Decoder, opts ...Option) *admission.Webhook {
	m := &mutator{reader: reader, decoder: decoder, random: func() int { return rand.IntN(100) }}
	for _, opt := range opts {
		opt(m)
	}
	return &admission.Webhook{Handler: m}
}

// mutator is the pod mutating handler.
type mutator struct {
	reader  client.Reader
	decoder admission.Decoder
	random  func() int
	// multiQuotaTree is WithMultiQuotaTree.
	multiQuotaTree bool
}

// Handle mutates a pod being created. The patch is computed against the raw object of the request, and no
// patch is returned when the mutation leaves the pod semantically unchanged.
func (m *mutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create || excludedNamespaces.Has(req.Namespace) {
		return admission.Allowed("")
	}
	pod := &corev1.Pod{}
	if err := m.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding pod: %w", err))
	}
	if extension.IsReservePod(pod) {
		// koord-scheduler's own pod for placing a Reservation: it never runs, and its resources are the
		// Reservation's, which no profile may change.
		return admission.Allowed("reserve pod")
	}
	original := pod.DeepCopy()
	applied, denied, err := m.mutate(ctx, cmp.Or(req.Namespace, pod.Namespace), pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	podRef := klog.KRef(cmp.Or(req.Namespace, pod.Namespace), cmp.Or(pod.Name, pod.GenerateName))
	if len(denied) > 0 {
		msg := denied.ToAggregate().Error()
		ctrl.LoggerFrom(ctx).V(2).Info("Denied pod", "pod", podRef, "reason", msg)
		return admission.Denied(msg)
	}
	if equality.Semantic.DeepEqual(original, pod) {
		return admission.Allowed("")
	}
	current, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encoding mutated pod: %w", err))
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, current)
	if logger := ctrl.LoggerFrom(ctx).V(2); logger.Enabled() && resp.Allowed {
		changes := make([]string, 0, len(resp.Patches))
		for _, op := range resp.Patches {
			changes = append(changes, op.Operation+" "+op.Path)
		}
		logger.Info("Mutated pod", "pod", podRef, "profiles", applied, "changes", changes)
	}
	return resp
}

// mutate applies the matching profiles to pod, then the batch/mid resource translation (only when a profile
// matched), the extended resource spec, the device resources (normalizeDeviceResources) and, with
// WithMultiQuotaTree, its quota tree's node affinity. It returns the names of the profiles applied, the reasons to deny
// the pod, and an error when the mutation could not be computed. The names applied are recorded in the
// pod's koord.dev/colocation-profiles annotation.
func (m *mutator) mutate(ctx context.Context, namespace string, pod *corev1.Pod) ([]string, field.ErrorList, error) {
	matched, err := m.matchingProfiles(ctx, namespace, pod)
	if err != nil {
		return nil, nil, err
	}
	var applied []string
	translate := len(matched) > 0
	for _, profile := range matched {
		if profile.Annotations[extension.AnnotationSkipUpdateResources] == "true" {
			translate = false
		}
		selected, err := m.selected(profile.Spec.Probability)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Skipped profile with an invalid probability", "profile", profile.Name)
			continue
		}
		if !selected {
			continue
		}
		denied, err := m.applyProfile(ctx, pod, profile)
		if err != nil || len(denied) > 0 {
			return nil, denied, err
		}
		applied = append(applied, profile.Name)
	}
	if len(applied) > 0 {
		pod.Annotations = merge(pod.Annotations, map[string]string{extension.AnnotationColocationProfiles: strings.Join(applied, ",")})
	}
	if translate {
		translateResources(pod)
	}
	if err := updateExtendedResourceSpec(pod); err != nil {
		return nil, nil, err
	}
	normalizeDeviceResources(pod)
	if m.multiQuotaTree {
		if _, err := m.addQuotaTreeAffinity(ctx, namespace, pod); err != nil {
			return nil, nil, err
		}
	}
	return applied, nil, nil
}
