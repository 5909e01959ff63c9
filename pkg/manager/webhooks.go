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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
	"github.com/koord-dev/koord/pkg/manager/webhook"
	"github.com/koord-dev/koord/pkg/manager/webhook/colocationprofile"
	"github.com/koord-dev/koord/pkg/manager/webhook/configmap"
	"github.com/koord-dev/koord/pkg/manager/webhook/elasticquota"
	"github.com/koord-dev/koord/pkg/manager/webhook/pod"
)

// webhookKinds are the kinds --webhook-failure-policy sets a policy for.
var webhookKinds = []string{"pods", "elasticquotas", "clustercolocationprofiles", "configmaps"}

// webhookHooks returns the webhooks whose feature gates are on, with how the apiserver should call them:
// Ignore on pods, so that a koord-manager outage never blocks workloads, and Fail on Koord's own kinds and
// configuration, so that nothing invalid gets in while it is down. Pod webhooks skip kube-system and Koord's
// own namespace.
func webhookHooks(mgr ctrl.Manager, o Options) []webhook.Hook {
	decoder := admission.NewDecoder(mgr.GetScheme())
	reader := mgr.GetClient()
	gates := o.FeatureGates

	excluded := sets.List(sets.New(metav1.NamespaceSystem, o.SLOConfigNamespace, o.Webhook.ServiceNamespace))
	podNamespaces := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: excluded,
	}}}
	rule := func(group, version, resource string, ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{
			Operations: ops,
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}},
		}}
	}
	const (
		create = admissionregistrationv1.Create
		update = admissionregistrationv1.Update
		del    = admissionregistrationv1.Delete
		ignore = admissionregistrationv1.Ignore
		fail   = admissionregistrationv1.Fail
	)

	// policy is the failure policy of the kind's webhooks: --webhook-failure-policy's, else def.
	policy := func(kind string, def admissionregistrationv1.FailurePolicyType) admissionregistrationv1.FailurePolicyType {
		if p, ok := o.WebhookFailurePolicies[kind]; ok {
			return admissionregistrationv1.FailurePolicyType(p)
		}
		return def
	}

	var hooks []webhook.Hook
	if gates.Enabled(features.PodMutatingWebhook) {
		var opts []pod.Option
		if gates.Enabled(features.MultiQuotaTree) {
			opts = append(opts, pod.WithMultiQuotaTree())
		}
		hooks = append(hooks, webhook.Hook{
			Name: "mpod.koord.dev", Path: pod.MutatingPath, Mutating: true,
			Handler:       pod.NewMutatingWebhook(reader, decoder, opts...),
			Rules:         rule("", "v1", "pods", create),
			FailurePolicy: policy("pods", ignore), NamespaceSelector: podNamespaces,
		})
	}
	if gates.Enabled(features.PodValidatingWebhook) {
		hooks = append(hooks, webhook.Hook{
			Name: "vpod.koord.dev", Path: pod.ValidatingPath,
			Handler:       pod.NewValidatingWebhook(reader, decoder),
			Rules:         rule("", "v1", "pods", create, update),
			FailurePolicy: policy("pods", ignore), NamespaceSelector: podNamespaces,
		})
	}
	if gates.Enabled(features.ColocationProfileValidatingWebhook) {
		hooks = append(hooks, webhook.Hook{
			Name: "vclustercolocationprofile.koord.dev", Path: colocationprofile.ValidatingPath,
			Handler:       colocationprofile.NewValidatingWebhook(reader, decoder),
			Rules:         rule(configv1alpha1.GroupName, "v1alpha1", "clustercolocationprofiles", create, update),
			FailurePolicy: policy("clustercolocationprofiles", fail),
		})
	}
	if gates.Enabled(features.ElasticQuotaMutatingWebhook) {
		hooks = append(hooks, webhook.Hook{
			Name: "melasticquota.koord.dev", Path: elasticquota.MutatingPath, Mutating: true,
			Handler:       elasticquota.NewMutatingWebhook(reader, decoder),
			Rules:         rule(schedulingsigsv1alpha1.GroupName, "v1alpha1", "elasticquotas", create),
			FailurePolicy: policy("elasticquotas", ignore),
		})
	}
	if gates.Enabled(features.ElasticQuotaValidatingWebhook) {
		hooks = append(hooks, webhook.Hook{
			Name: "velasticquota.koord.dev", Path: elasticquota.ValidatingPath,
			Handler: elasticquota.NewValidatingWebhook(reader, decoder, elasticquota.Options{
				MaxKeysIncluded: gates.Enabled(features.ElasticQuotaEnableUpdateResourceKey),
			}),
			Rules:         rule(schedulingsigsv1alpha1.GroupName, "v1alpha1", "elasticquotas", create, update, del),
			FailurePolicy: policy("elasticquotas", ignore),
		})
	}
	if gates.Enabled(features.ConfigMapValidatingWebhook) {
		hooks = append(hooks, webhook.Hook{
			Name: "vconfigmap.koord.dev", Path: configmap.Path,
			Handler:       configmap.NewValidator(decoder, sloconfig.LoaderOptions{Namespace: o.SLOConfigNamespace, Name: o.SLOConfigName}),
			Rules:         rule("", "v1", "configmaps", create, update),
			FailurePolicy: policy("configmaps", fail),
			// Only the SLO ConfigMap: every other ConfigMap write never reaches koord-manager.
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: o.SLOConfigNamespace}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "slo-controller-config-only", Expression: "object.metadata.name == '" + o.SLOConfigName + "'",
			}},
		})
	}
	return hooks
}
