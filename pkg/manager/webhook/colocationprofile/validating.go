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

// Package colocationprofile holds koord-manager's validating admission handler for ClusterColocationProfiles
// (ValidatingPath). It checks what the CRD schema cannot: that the selectors parse, that the labels,
// annotations and key mappings a profile injects are valid keys and values, that the probability is a
// percentage, that the patch is a strategic merge patch of a Pod made only of known fields, and that the
// PriorityClass exists and can be used with the profile's QoS class.
package colocationprofile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsjson "sigs.k8s.io/json"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/manager/webhook/pod"
)

// ValidatingPath is where the webhook server serves the ClusterColocationProfile validating handler.
const ValidatingPath = "/validate-clustercolocationprofile"

// NewValidatingWebhook returns the ClusterColocationProfile validating webhook. reader (the manager's cache)
// must serve PriorityClasses; decoder must know the config.koordinator.sh types.
func NewValidatingWebhook(reader client.Reader, decoder admission.Decoder) *admission.Webhook {
	return &admission.Webhook{Handler: &validator{reader: reader, decoder: decoder}}
}

// validator is the ClusterColocationProfile validating handler.
type validator struct {
	reader  client.Reader
	decoder admission.Decoder
}

// Handle validates a ClusterColocationProfile being created or updated.
func (v *validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	profile := &configv1alpha1.ClusterColocationProfile{}
	if err := v.decoder.DecodeRaw(req.Object, profile); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding ClusterColocationProfile: %w", err))
	}
	path := field.NewPath("spec")
	errs := ValidateClusterColocationProfileSpec(path, &profile.Spec)
	pcErrs, err := v.validatePriorityClass(ctx, path, &profile.Spec)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if errs = append(errs, pcErrs...); len(errs) > 0 {
		return admission.Denied(errs.ToAggregate().Error())
	}
	return admission.Allowed("")
}

// validatePriorityClass checks that the PriorityClass of spec exists and, when spec also sets a QoS class,
// that a pod may have both. It returns an error when the PriorityClass cannot be read.
func (v *validator) validatePriorityClass(ctx context.Context, path *field.Path, spec *configv1alpha1.ClusterColocationProfileSpec) (field.ErrorList, error) {
	if spec.PriorityClassName == "" || len(content.IsDNS1123Subdomain(spec.PriorityClassName)) > 0 {
		return nil, nil // nothing to look up, or already reported as invalid
	}
	pc := &schedulingv1.PriorityClass{}
	if err := v.reader.Get(ctx, client.ObjectKey{Name: spec.PriorityClassName}, pc); err != nil {
		if apierrors.IsNotFound(err) {
			return field.ErrorList{field.NotFound(path.Child("priorityClassName"), spec.PriorityClassName)}, nil
		}
		return nil, fmt.Errorf("reading PriorityClass %q: %w", spec.PriorityClassName, err)
	}
	qos := extension.GetQoSClassByName(spec.QoSClass)
	if qos == extension.QoSNone {
		return nil, nil
	}
	return pod.ValidateQoSPriorityCombination(path.Child("qosClass"), qos, extension.GetPriorityClassByValue(pc.Value)), nil
}

// probabilityPercent matches a percentage.
var probabilityPercent = regexp.MustCompile(`^([0-9]+)%$`)

// labelSuffix matches the characters a label value may contain.
var labelSuffix = regexp.MustCompile(`^[-A-Za-z0-9_.]*$`)

// maxLabelValueLength is the longest label value Kubernetes accepts.
const maxLabelValueLength = 63

// ValidateClusterColocationProfileSpec checks the parts of a profile spec that need no other object: the
// selectors, the probability, the QoS class, the names of the PriorityClass and scheduler, the labels and
// annotations to inject, the key mappings, the label suffixes and the patch.
func ValidateClusterColocationProfileSpec(path *field.Path, spec *configv1alpha1.ClusterColocationProfileSpec) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("namespaceSelector"))...)
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	errs = append(errs, validateProbability(path.Child("probability"), spec.Probability)...)
	if spec.QoSClass != "" && extension.GetQoSClassByName(spec.QoSClass) == extension.QoSNone {
		errs = append(errs, field.NotSupported(path.Child("qosClass"), spec.QoSClass,
			[]extension.QoSClass{extension.QoSLSE, extension.QoSLSR, extension.QoSLS, extension.QoSBE, extension.QoSSystem}))
	}
	for _, name := range []struct{ field, value string }{
		{"priorityClassName", spec.PriorityClassName}, {"schedulerName", spec.SchedulerName},
	} {
		if name.value == "" {
			continue
		}
		for _, msg := range content.IsDNS1123Subdomain(name.value) {
			errs = append(errs, field.Invalid(path.Child(name.field), name.value, msg))
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.Labels, path.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(spec.Annotations, path.Child("annotations"))...)
	errs = append(errs, validateKeyMapping(path.Child("labelKeysMapping"), spec.LabelKeysMapping, content.IsLabelKey)...)
	errs = append(errs, validateKeyMapping(path.Child("annotationKeysMapping"), spec.AnnotationKeysMapping, isAnnotationKey)...)
	for _, key := range slices.Sorted(maps.Keys(spec.LabelSuffixes)) {
		keyPath := path.Child("labelSuffixes").Key(key)
		errs = append(errs, metav1validation.ValidateLabelName(key, keyPath)...)
		if suffix := spec.LabelSuffixes[key]; !labelSuffix.MatchString(suffix) || len(suffix) > maxLabelValueLength {
			errs = append(errs, field.Invalid(keyPath, suffix,
				fmt.Sprintf("must consist of alphanumeric characters, '-', '_' or '.', and be at most %d characters", maxLabelValueLength)))
		}
	}
	errs = append(errs, validatePatch(path.Child("patch"), spec.Patch.Raw)...)
	return errs
}

// validateProbability checks that p is an integer from 0 to 100 or a percentage from "0%" to "100%".
func validateProbability(path *field.Path, p *intstr.IntOrString) field.ErrorList {
	if p == nil {
		return nil
	}
	const detail = `must be an integer from 0 to 100 or a percentage from "0%" to "100%"`
	switch p.Type {
	case intstr.Int:
		if p.IntVal < 0 || p.IntVal > 100 {
			return field.ErrorList{field.Invalid(path, p.IntVal, detail)}
		}
	case intstr.String:
		m := probabilityPercent.FindStringSubmatch(p.StrVal)
		if m == nil {
			return field.ErrorList{field.Invalid(path, p.StrVal, detail)}
		}
		if n, err := strconv.Atoi(m[1]); err != nil || n > 100 {
			return field.ErrorList{field.Invalid(path, p.StrVal, detail)}
		}
	default:
		return field.ErrorList{field.Invalid(path, p.String(), detail)}
	}
	return nil
}

// isAnnotationKey checks an annotation key: a label key, except that case does not matter.
func isAnnotationKey(key string) []string {
	return content.IsLabelKey(strings.ToLower(key))
}

// validateKeyMapping checks that the keys and the values of mapping are valid keys.
func validateKeyMapping(path *field.Path, mapping map[string]string, isKey func(string) []string) field.ErrorList {
	var errs field.ErrorList
	for _, from := range slices.Sorted(maps.Keys(mapping)) {
		keyPath := path.Key(from)
		for _, msg := range isKey(from) {
			errs = append(errs, field.Invalid(keyPath, from, msg))
		}
		to := mapping[from]
		for _, msg := range isKey(to) {
			errs = append(errs, field.Invalid(keyPath, to, msg))
		}
	}
	return errs
}

// validatePatch checks that raw is a JSON object that, applied as a strategic merge patch to an empty Pod,
// gives a Pod made only of known fields.
func validatePatch(path *field.Path, raw []byte) field.ErrorList {
	if len(raw) == 0 {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, "must be a JSON object")}
	}
	merged, err := strategicpatch.StrategicMergePatch([]byte("{}"), raw, &corev1.Pod{})
	if err != nil {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("is not a strategic merge patch of a Pod: %v", err))}
	}
	strict, err := sigsjson.UnmarshalStrict(merged, &corev1.Pod{})
	if err = errors.Join(append(strict, err)...); err != nil {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("is not a strategic merge patch of a Pod: %v", err))}
	}
	return nil
}
