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

// Package configmap holds koord-manager's validating admission handler for the slo-controller-config ConfigMap
// (Path). It rejects a version that sloconfig.Parse rejects, with the same message, so a bad edit fails at
// kubectl apply instead of being reported later as an Event. Every other ConfigMap, and every deletion, is
// admitted.
package configmap

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/pkg/manager/sloconfig"
)

// Path is where the webhook server serves the handler.
const Path = "/validate-configmap"

// NewValidator returns the webhook for the ConfigMap that opts locates (by default
// koordinator-system/slo-controller-config). decoder decodes the admitted objects.
func NewValidator(decoder admission.Decoder, opts sloconfig.LoaderOptions) *admission.Webhook {
	return &admission.Webhook{Handler: &validator{decoder: decoder, key: opts.Key()}}
}

// validator checks the SLO ConfigMap on CREATE and UPDATE.
type validator struct {
	decoder admission.Decoder
	key     types.NamespacedName
}

var _ admission.Handler = (*validator)(nil)

// Handle admits the request unless it creates or updates the SLO ConfigMap with a value that does not parse or
// validate.
func (v *validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Kind.Group != "" || req.Kind.Kind != "ConfigMap" || req.Namespace != v.key.Namespace {
		return admission.Allowed("")
	}
	log := ctrl.LoggerFrom(ctx).WithValues("configMap", klog.KRef(req.Namespace, req.Name), "operation", req.Operation)
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	case admissionv1.Delete:
		if req.Name == v.key.Name {
			log.Info("Admitted the deletion of the SLO ConfigMap, the default SLO configuration will be in force", "user", req.UserInfo.Username)
		}
		return admission.Allowed("")
	default:
		return admission.Allowed("")
	}
	cm := &corev1.ConfigMap{}
	if err := v.decoder.DecodeRaw(req.Object, cm); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	name := req.Name
	if name == "" {
		name = cm.Name
	}
	if name != v.key.Name {
		return admission.Allowed("")
	}
	if _, err := sloconfig.Parse(cm); err != nil {
		log.Info("Rejected an invalid SLO ConfigMap", "user", req.UserInfo.Username, "err", err.Error())
		return admission.Denied("the SLO configuration is invalid and was not applied:\n" + err.Error())
	}
	return admission.Allowed("")
}
