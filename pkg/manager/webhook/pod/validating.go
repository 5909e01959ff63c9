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
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/extension"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// ValidatingPath is where the webhook server serves the pod validating handler.
const ValidatingPath = "/validate-pod"

// NewValidatingWebhook returns the pod validating webhook. decoder must know the core types; reader (the
// manager's cache) serves the ElasticQuotas a pod names, which it checks the pod may be charged to. The other
// checks need nothing but the pod (and its old version on UPDATE).
func NewValidatingWebhook(reader client.Reader, decoder admission.Decoder) *admission.Webhook {
	return &admission.Webhook{Handler: &validator{reader: reader, decoder: decoder}}
}

// validator is the pod validating handler.
type validator struct {
	reader  client.Reader
	decoder admission.Decoder
}

// Handle validates a pod being created or updated.
func (v *validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) || excludedNamespaces.Has(req.Namespace) {
		return admission.Allowed("")
	}
	pod := &corev1.Pod{}
	if err := v.decoder.DecodeRaw(req.Object, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding pod: %w", err))
	}
	var errs field.ErrorList
	// koord-scheduler's reserve pods never run and carry a Reservation's resources as they are; an update skips
	// validation only when the pod was a reserve pod already, so that labels cannot turn a pod into one.
	if req.Operation == admissionv1.Update {
		old := &corev1.Pod{}
		if err := v.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding old pod: %w", err))
		}
		if extension.IsReservePod(old) && extension.IsReservePod(pod) {
			return admission.Allowed("reserve pod")
		}
		errs = ValidatePodUpdate(pod, old)
	} else {
		if extension.IsReservePod(pod) {
			return admission.Allowed("reserve pod")
		}
		errs = ValidatePod(pod)
	}
	quotaErrs, err := v.validateQuota(ctx, pod, req)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	errs = append(errs, quotaErrs...)
	if len(errs) > 0 {
		return admission.Denied(errs.ToAggregate().Error())
	}
	return admission.Allowed("")
}

// validateQuota refuses a pod charged to a parent ElasticQuota, on CREATE and when an UPDATE changes the quota
// label, as Koordinator does: only quotas without children take pods (koord-scheduler would leave the pod
// pending forever). A quota that does not exist is koord-scheduler's to resolve (the default quota).
func (v *validator) validateQuota(ctx context.Context, pod *corev1.Pod, req admission.Request) (field.ErrorList, error) {
	name := extension.GetQuotaName(pod)
	if name == "" || v.reader == nil {
		return nil, nil
	}
	if req.Operation == admissionv1.Update {
		old := &corev1.Pod{}
		if err := v.decoder.DecodeRaw(req.OldObject, old); err == nil && extension.GetQuotaName(old) == name {
			return nil, nil
		}
	}
	quotas := &schedulingsigsv1alpha1.ElasticQuotaList{}
	if err := v.reader.List(ctx, quotas, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ElasticQuotas: %w", err)
	}
	for i := range quotas.Items {
		if q := &quotas.Items[i]; q.Name == name && extension.IsParentQuota(q) {
			return field.ErrorList{field.Forbidden(field.NewPath("metadata", "labels").Key(extension.LabelQuotaName),
				fmt.Sprintf("quota %q is a parent quota: only quotas without children take pods", name))}, nil
		}
	}
	return nil, nil
}

// ValidatePodUpdate checks an update of old to pod: the QoS class label, the priority class and the
// koordinator.sh/priority label must not change, and the update must not introduce any problem ValidatePod
// reports. Problems old already had are tolerated, so that such pods can still be updated and deleted.
func ValidatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	labelsPath := field.NewPath("metadata", "labels")
	var errs field.ErrorList
	if !labelSetBeforeBinding(pod, old, extension.LabelPodQoS) {
		errs = apivalidation.ValidateImmutableField(pod.Labels[extension.LabelPodQoS], old.Labels[extension.LabelPodQoS], labelsPath.Key(extension.LabelPodQoS))
	}
	pcPath := field.NewPath("spec", "priority")
	if _, ok := pod.Labels[extension.LabelPodPriorityClass]; ok {
		pcPath = labelsPath.Key(extension.LabelPodPriorityClass)
	} else if _, ok := old.Labels[extension.LabelPodPriorityClass]; ok {
		pcPath = labelsPath.Key(extension.LabelPodPriorityClass)
	}
	errs = append(errs, apivalidation.ValidateImmutableField(extension.GetPodPriorityClassRaw(pod), extension.GetPodPriorityClassRaw(old), pcPath)...)
	if !labelSetBeforeBinding(pod, old, extension.LabelPodPriority) {
		errs = append(errs, apivalidation.ValidateImmutableField(pod.Labels[extension.LabelPodPriority], old.Labels[extension.LabelPodPriority], labelsPath.Key(extension.LabelPodPriority))...)
	}

	known := sets.New[string]()
	for _, err := range ValidatePod(old) {
		known.Insert(err.Error())
	}
	for _, err := range ValidatePod(pod) {
		if !known.Has(err.Error()) {
			errs = append(errs, err)
		}
	}
	return errs
}

// labelSetBeforeBinding tells whether an update only adds the label key to a pod that is not bound to a node
// yet. Nothing has acted on such a pod, so the colocationprofile controller may still give it a QoS class or
// sub-priority; once set, or once the pod is bound, the label is immutable.
func labelSetBeforeBinding(pod, old *corev1.Pod, key string) bool {
	_, had := old.Labels[key]
	_, has := pod.Labels[key]
	return !had && has && old.Spec.NodeName == "" && pod.Spec.NodeName == ""
}

// ValidatePod checks a pod against Koordinator's rules: no reserve-pod annotation; well-formed Koordinator
// labels and annotations; batch resources only in BE pods and mid resources only in koord-mid pods; no
// forbidden combination of QoS class and priority class; GPU requests the scheduler can place
// (validateDeviceResources); and, in LSE and LSR pods, a whole number of CPUs
// requested by every container and equal to its limit.
func ValidatePod(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	if _, ok := pod.Annotations[extension.AnnotationReservePod]; ok {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(extension.AnnotationReservePod),
			"is reserved for the pods koord-scheduler makes from Reservations and cannot be set on a pod"))
	}
	errs = append(errs, validateMetadata(pod)...)
	errs = append(errs, validateColocationResources(pod)...)
	errs = append(errs, validateDeviceResources(pod)...)
	qos := extension.GetPodQoSClassRaw(pod)
	errs = append(errs, ValidateQoSPriorityCombination(field.NewPath("metadata", "labels").Key(extension.LabelPodQoS), qos, extension.GetPodPriorityClassRaw(pod))...)
	if qos == extension.QoSLSE || qos == extension.QoSLSR {
		errs = append(errs, validateBoundCPUs(pod, qos)...)
	}
	return errs
}

// forbiddenCombinations are the priority classes each QoS class cannot be used with.
var forbiddenCombinations = map[extension.QoSClass][]extension.PriorityClass{
	extension.QoSBE:  {extension.PriorityNone, extension.PriorityProd},
	extension.QoSLSR: {extension.PriorityNone, extension.PriorityMid, extension.PriorityBatch, extension.PriorityFree},
	extension.QoSLSE: {extension.PriorityMid, extension.PriorityBatch, extension.PriorityFree},
}

// ValidateQoSPriorityCombination reports, at path, a QoS class that cannot be used with the priority class:
// BE with koord-prod or no priority class, LSR with anything but koord-prod, and LSE with koord-mid,
// koord-batch or koord-free.
func ValidateQoSPriorityCombination(path *field.Path, qos extension.QoSClass, pc extension.PriorityClass) field.ErrorList {
	if !slices.Contains(forbiddenCombinations[qos], pc) {
		return nil
	}
	name := string(pc)
	if pc == extension.PriorityNone {
		name = "none"
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s=%s and priorityClass=%s cannot be used in combination", extension.LabelPodQoS, qos, name))}
}

// supportedQoSClasses are the values of the QoS class label.
var supportedQoSClasses = []extension.QoSClass{extension.QoSLSE, extension.QoSLSR, extension.QoSLS, extension.QoSBE, extension.QoSSystem}

// validateMetadata checks the Koordinator labels and annotations of pod with the parsers of apis/extension.
func validateMetadata(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	if v, ok := pod.Labels[extension.LabelPodQoS]; ok && extension.GetQoSClassByName(v) == extension.QoSNone {
		errs = append(errs, field.NotSupported(field.NewPath("metadata", "labels").Key(extension.LabelPodQoS), v, supportedQoSClasses))
	}
	checks := []func() error{
		func() error { _, err := extension.GetPodSubPriority(pod.Labels); return err },
		func() error { _, err := extension.GetResourceSpec(pod.Annotations); return err },
		func() error { _, err := extension.GetResourceStatus(pod.Annotations); return err },
		func() error { _, err := extension.GetDeviceAllocations(pod.Annotations); return err },
		func() error { _, err := extension.GetReservationAffinity(pod.Annotations); return err },
		func() error { _, err := extension.GetExtendedResourceSpec(pod.Annotations); return err },
		func() error { _, err := extension.GetGangMinNum(pod); return err },
		func() error { _, err := extension.GetGangTotalNumber(pod); return err },
		func() error { _, err := extension.GetGangWaitingTime(pod); return err },
		func() error { _, err := extension.GetGangMode(pod); return err },
		func() error { _, err := extension.GetGangMatchPolicy(pod); return err },
		func() error { _, err := extension.GetGangGroups(pod); return err },
	}
	for _, check := range checks {
		if err := check(); err != nil {
			errs = append(errs, metadataError(err))
		}
	}
	return errs
}

// metadataError turns an error of an apis/extension parser into a field error naming the label or annotation.
func metadataError(err error) *field.Error {
	if ae, ok := errors.AsType[*extension.AnnotationError](err); ok {
		return field.Invalid(field.NewPath("metadata", "annotations").Key(ae.Key), field.OmitValueType{}, ae.Err.Error())
	}
	if le, ok := errors.AsType[*extension.LabelError](err); ok {
		return field.Invalid(field.NewPath("metadata", "labels").Key(le.Key), le.Value, le.Err.Error())
	}
	return field.InternalError(field.NewPath("metadata"), err)
}

// resourceList is a resource list of a pod and where it is.
type resourceList struct {
	path *field.Path
	list corev1.ResourceList
}

// resourceLists returns the requests and limits of the init and regular containers and the overhead of pod.
func resourceLists(pod *corev1.Pod) []resourceList {
	var lists []resourceList
	for _, group := range []struct {
		path       *field.Path
		containers []corev1.Container
	}{
		{field.NewPath("spec", "initContainers"), pod.Spec.InitContainers},
		{field.NewPath("spec", "containers"), pod.Spec.Containers},
	} {
		for i := range group.containers {
			r := &group.containers[i].Resources
			p := group.path.Index(i).Child("resources")
			lists = append(lists, resourceList{p.Child("requests"), r.Requests}, resourceList{p.Child("limits"), r.Limits})
		}
	}
	return append(lists, resourceList{field.NewPath("spec", "overhead"), pod.Spec.Overhead})
}

// validateColocationResources checks that only BE pods use batch resources and only koord-mid pods use mid
// resources. Deprecated names count too; zero quantities do not.
func validateColocationResources(pod *corev1.Pod) field.ErrorList {
	var batch, mid *field.Path
	for _, rl := range resourceLists(pod) {
		for _, name := range slices.Sorted(maps.Keys(rl.list)) {
			if q := rl.list[name]; q.IsZero() {
				continue
			}
			switch extension.GetPriorityClassByResourceName(name) {
			case extension.PriorityBatch:
				if batch == nil {
					batch = rl.path.Key(string(name))
				}
			case extension.PriorityMid:
				if mid == nil {
					mid = rl.path.Key(string(name))
				}
			}
		}
	}
	var errs field.ErrorList
	if batch != nil {
		qosPath := field.NewPath("metadata", "labels").Key(extension.LabelPodQoS)
		detail := fmt.Sprintf("must be %s because %s is set", extension.QoSBE, batch)
		if v, ok := pod.Labels[extension.LabelPodQoS]; !ok {
			errs = append(errs, field.Required(qosPath, detail))
		} else if extension.GetQoSClassByName(v) != extension.QoSBE {
			errs = append(errs, field.Invalid(qosPath, v, detail))
		}
	}
	if mid != nil {
		if pc := extension.GetPodPriorityClassRaw(pod); pc != extension.PriorityMid {
			lo, hi, _ := extension.PriorityMid.Range()
			errs = append(errs, field.Forbidden(mid, fmt.Sprintf("can only be requested by a %s pod (spec.priority from %d to %d, or label %s=%s), not by a pod of priority class %s",
				extension.PriorityMid, lo, hi, extension.LabelPodPriorityClass, extension.PriorityMid, priorityClassName(pc))))
		}
	}
	return errs
}

// priorityClassName returns the name of pc for messages.
func priorityClassName(pc extension.PriorityClass) string {
	if pc == extension.PriorityNone {
		return "none"
	}
	return string(pc)
}

// validateBoundCPUs checks that every regular container of an LSE or LSR pod requests a whole, non-zero
// number of CPUs and sets its limit to the same value, so that the pod can get CPUs of its own.
func validateBoundCPUs(pod *corev1.Pod, qos extension.QoSClass) field.ErrorList {
	var errs field.ErrorList
	for i := range pod.Spec.Containers {
		r := &pod.Spec.Containers[i].Resources
		path := field.NewPath("spec", "containers").Index(i).Child("resources")
		request, hasRequest := r.Requests[corev1.ResourceCPU]
		limit, hasLimit := r.Limits[corev1.ResourceCPU]
		if !hasRequest && hasLimit {
			request, hasRequest = limit, true // the apiserver defaults the request to the limit
		}
		switch {
		case !hasRequest || request.IsZero():
			errs = append(errs, field.Required(path.Child("requests").Key(string(corev1.ResourceCPU)),
				fmt.Sprintf("an %s pod must request a whole number of CPUs in every container", qos)))
		case request.MilliValue()%1000 != 0:
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(corev1.ResourceCPU)), request.String(),
				fmt.Sprintf("must be a whole number of CPUs in an %s pod", qos)))
		case !hasLimit:
			errs = append(errs, field.Required(path.Child("limits").Key(string(corev1.ResourceCPU)),
				fmt.Sprintf("must equal the cpu request (%s) in an %s pod", request.String(), qos)))
		case !limit.Equal(request):
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(corev1.ResourceCPU)), limit.String(),
				fmt.Sprintf("must equal the cpu request (%s) in an %s pod", request.String(), qos)))
		}
	}
	return errs
}
