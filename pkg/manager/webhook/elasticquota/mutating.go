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
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/extension"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// MutatingPath is where the webhook server serves the ElasticQuota mutating handler.
const MutatingPath = "/mutate-elasticquota"

// NewMutatingWebhook returns the ElasticQuota mutating webhook, which fills in what Koordinator's fills in on
// CREATE: the parent label (the root quota when missing), the tree ID of the parent's tree, and the shared
// weight (the quota's max, as JSON) when missing. reader (the manager's cache) serves the parent quotas.
func NewMutatingWebhook(reader client.Reader, decoder admission.Decoder) *admission.Webhook {
	return &admission.Webhook{Handler: &mutator{reader: reader, decoder: decoder}}
}

type mutator struct {
	reader  client.Reader
	decoder admission.Decoder
}

// Handle fills in the defaults of an ElasticQuota being created.
func (m *mutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	quota := &schedulingsigsv1alpha1.ElasticQuota{}
	if err := m.decoder.DecodeRaw(req.Object, quota); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding ElasticQuota: %w", err))
	}
	if quota.Name == extension.RootQuotaName {
		return admission.Allowed("")
	}
	if err := m.fillDefaults(ctx, quota); err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	current, err := json.Marshal(quota)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encoding ElasticQuota: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, current)
}

func (m *mutator) fillDefaults(ctx context.Context, quota *schedulingsigsv1alpha1.ElasticQuota) error {
	if quota.Labels == nil {
		quota.Labels = map[string]string{}
	}
	if quota.Labels[extension.LabelQuotaParent] == "" {
		quota.Labels[extension.LabelQuotaParent] = extension.RootQuotaName
	}
	if parent := quota.Labels[extension.LabelQuotaParent]; quota.Labels[extension.LabelQuotaTreeID] == "" && parent != extension.RootQuotaName {
		quotas := &schedulingsigsv1alpha1.ElasticQuotaList{}
		if err := m.reader.List(ctx, quotas, client.UnsafeDisableDeepCopy); err != nil {
			return fmt.Errorf("listing ElasticQuotas: %w", err)
		}
		// A missing parent is the validating webhook's to refuse.
		for i := range quotas.Items {
			if p := &quotas.Items[i]; p.Name == parent {
				if id := extension.GetQuotaTreeID(p); id != "" {
					quota.Labels[extension.LabelQuotaTreeID] = id
				}
				break
			}
		}
	}
	if quota.Annotations[extension.AnnotationSharedWeight] == "" && len(quota.Spec.Max) > 0 {
		weight, err := json.Marshal(quota.Spec.Max)
		if err != nil {
			return fmt.Errorf("encoding the shared weight: %w", err)
		}
		if quota.Annotations == nil {
			quota.Annotations = map[string]string{}
		}
		quota.Annotations[extension.AnnotationSharedWeight] = string(weight)
	}
	return nil
}
