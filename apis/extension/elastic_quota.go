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

package extension

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Built-in ElasticQuotas, all in the koordinator-system namespace.
const (
	// RootQuotaName is the root of the default quota tree.
	RootQuotaName = "koordinator-root-quota"
	// SystemQuotaName is the quota of system pods.
	SystemQuotaName = "koordinator-system-quota"
	// DefaultQuotaName is the quota of pods that name no quota.
	DefaultQuotaName = "koordinator-default-quota"
)

// ElasticQuota labels. Quota trees are expressed by parent labels.
const (
	// LabelQuotaName on a pod names the quota it is charged to.
	LabelQuotaName = QuotaDomainPrefix + "name"
	// LabelQuotaParent names the parent of a quota; it defaults to
	// RootQuotaName.
	LabelQuotaParent = QuotaDomainPrefix + "parent"
	// LabelQuotaIsParent ("true") marks a quota that has children instead
	// of pods.
	LabelQuotaIsParent = QuotaDomainPrefix + "is-parent"
	// LabelAllowLentResource ("false") stops a quota from lending its unused
	// min to others. It defaults to true.
	LabelAllowLentResource = QuotaDomainPrefix + "allow-lent-resource"
	// LabelQuotaIsRoot ("true") marks the root of a quota tree.
	LabelQuotaIsRoot = QuotaDomainPrefix + "is-root"
	// LabelQuotaTreeID identifies the quota tree a quota belongs to.
	LabelQuotaTreeID = QuotaDomainPrefix + "tree-id"
	// LabelQuotaIgnoreDefaultTree ("true") on the root quota of a tree (with
	// the MultiQuotaTree gate) keeps the tree's total in the default tree's:
	// the tree's nodes are not taken out of what the quotas without a tree
	// share.
	LabelQuotaIgnoreDefaultTree = QuotaDomainPrefix + "ignore-default-tree"
	// LabelPreemptible ("false") on a pod requires it to fit within the min
	// of its quota, so that it is never preempted for quota reasons.
	LabelPreemptible = QuotaDomainPrefix + "preemptible"
	// LabelQuotaProfile names the ElasticQuotaProfile that created a quota.
	LabelQuotaProfile = QuotaDomainPrefix + "profile"
)

// ElasticQuota annotations. Those holding resources hold a JSON
// corev1.ResourceList.
const (
	// AnnotationSharedWeight is the weight with which a quota shares spare
	// resources. It defaults to the quota max.
	AnnotationSharedWeight = QuotaDomainPrefix + "shared-weight"
	// AnnotationRuntime is the resources a quota may use now.
	AnnotationRuntime = QuotaDomainPrefix + "runtime"
	// AnnotationRequest is the resources the pods of a quota request.
	AnnotationRequest = QuotaDomainPrefix + "request"
	// AnnotationChildRequest is the resources the children of a quota
	// request.
	AnnotationChildRequest = QuotaDomainPrefix + "child-request"
	// AnnotationGuaranteed is the resources guaranteed to a quota.
	AnnotationGuaranteed = QuotaDomainPrefix + "guaranteed"
	// AnnotationAllocated is the resources allocated to a quota.
	AnnotationAllocated = QuotaDomainPrefix + "allocated"
	// AnnotationNonPreemptibleRequest is the resources non-preemptible pods
	// of a quota request.
	AnnotationNonPreemptibleRequest = QuotaDomainPrefix + "non-preemptible-request"
	// AnnotationNonPreemptibleUsed is the resources non-preemptible pods of
	// a quota use.
	AnnotationNonPreemptibleUsed = QuotaDomainPrefix + "non-preemptible-used"
	// AnnotationTotalResource is the total resources of the nodes of a
	// profile-created root quota.
	AnnotationTotalResource = QuotaDomainPrefix + "total-resource"
	// AnnotationUnschedulableResource is the resources of the unschedulable
	// nodes of a profile-created root quota.
	AnnotationUnschedulableResource = QuotaDomainPrefix + "unschedulable-resource"
	// AnnotationQuotaNamespaces lists, as a JSON list, the namespaces whose
	// pods are charged to a quota.
	AnnotationQuotaNamespaces = QuotaDomainPrefix + "namespaces"
	// AnnotationResourceKeys lists, as a JSON list, the resources a
	// profile-created quota accounts (cpu and memory by default).
	AnnotationResourceKeys = QuotaDomainPrefix + "resource-keys"
)

// GetQuotaName returns the quota a pod is charged to, from LabelQuotaName,
// or "" when the pod is nil or names none.
func GetQuotaName(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	return pod.Labels[LabelQuotaName]
}

// GetParentQuotaName returns the parent of a quota: LabelQuotaParent, or
// RootQuotaName when the label is missing, except for the root itself, whose
// parent is "".
func GetParentQuotaName(quota metav1.Object) string {
	if p := quota.GetLabels()[LabelQuotaParent]; p != "" {
		return p
	}
	if quota.GetName() == RootQuotaName {
		return ""
	}
	return RootQuotaName
}

// IsParentQuota reports whether the quota has LabelQuotaIsParent "true".
func IsParentQuota(quota metav1.Object) bool {
	return quota.GetLabels()[LabelQuotaIsParent] == "true"
}

// IsAllowLentResource reports whether the quota may lend its unused min: true
// unless LabelAllowLentResource is "false".
func IsAllowLentResource(quota metav1.Object) bool {
	return quota.GetLabels()[LabelAllowLentResource] != "false"
}

// IsTreeRootQuota reports whether the quota has LabelQuotaIsRoot "true".
func IsTreeRootQuota(quota metav1.Object) bool {
	return quota.GetLabels()[LabelQuotaIsRoot] == "true"
}

// GetQuotaTreeID returns LabelQuotaTreeID of the quota.
func GetQuotaTreeID(quota metav1.Object) string {
	return quota.GetLabels()[LabelQuotaTreeID]
}

// IsPodNonPreemptible reports whether the pod has LabelPreemptible "false".
func IsPodNonPreemptible(pod *corev1.Pod) bool {
	return pod != nil && pod.Labels[LabelPreemptible] == "false"
}

// getQuotaResourceList parses the JSON resource list in the annotation key of
// quota. It returns nil and no error when the annotation is missing.
func getQuotaResourceList(quota metav1.Object, key string) (corev1.ResourceList, error) {
	value, ok := lookup(quota.GetAnnotations(), key)
	if !ok {
		return nil, nil
	}
	var list corev1.ResourceList
	if err := decodeAnnotation(key, value, &list); err != nil {
		return nil, err
	}
	if list == nil {
		list = corev1.ResourceList{}
	}
	return list, nil
}

// GetSharedWeight parses AnnotationSharedWeight of the quota. It returns nil
// and no error when the annotation is missing; the weight then defaults to
// the quota max, which the caller supplies.
func GetSharedWeight(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationSharedWeight)
}

// GetRuntime parses AnnotationRuntime of the quota; nil when missing.
func GetRuntime(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationRuntime)
}

// GetRequest parses AnnotationRequest of the quota; nil when missing.
func GetRequest(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationRequest)
}

// GetChildRequest parses AnnotationChildRequest of the quota; nil when
// missing.
func GetChildRequest(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationChildRequest)
}

// GetGuaranteed parses AnnotationGuaranteed of the quota; nil when missing.
func GetGuaranteed(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationGuaranteed)
}

// GetAllocated parses AnnotationAllocated of the quota; nil when missing.
func GetAllocated(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationAllocated)
}

// GetNonPreemptibleRequest parses AnnotationNonPreemptibleRequest of the
// quota; nil when missing.
func GetNonPreemptibleRequest(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationNonPreemptibleRequest)
}

// GetNonPreemptibleUsed parses AnnotationNonPreemptibleUsed of the quota; nil
// when missing.
func GetNonPreemptibleUsed(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationNonPreemptibleUsed)
}

// GetTotalResource parses AnnotationTotalResource of the quota; nil when
// missing.
func GetTotalResource(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationTotalResource)
}

// GetUnschedulableResource parses AnnotationUnschedulableResource of the
// quota; nil when missing.
func GetUnschedulableResource(quota metav1.Object) (corev1.ResourceList, error) {
	return getQuotaResourceList(quota, AnnotationUnschedulableResource)
}

// SetQuotaResourceList stores list as JSON in the annotation key of quota (one
// of the resource list annotations above), or removes the annotation when
// list is nil.
func SetQuotaResourceList(quota metav1.Object, key string, list corev1.ResourceList) error {
	if list == nil {
		removeAnnotation(quota, key)
		return nil
	}
	return encodeAnnotation(quota, key, list)
}

// GetAnnotationQuotaNamespaces parses AnnotationQuotaNamespaces of the quota.
// It returns nil and no error when the annotation is missing, and an
// *AnnotationError when it is not a JSON list of strings or an element is not
// a valid namespace name.
func GetAnnotationQuotaNamespaces(quota metav1.Object) ([]string, error) {
	return getStringListAnnotation(quota.GetAnnotations(), AnnotationQuotaNamespaces, validateNamespaces)
}

// SetAnnotationQuotaNamespaces stores namespaces in AnnotationQuotaNamespaces
// on quota, or removes the annotation when namespaces is nil. It writes
// nothing and returns an *AnnotationError when an element is not a valid
// namespace name.
func SetAnnotationQuotaNamespaces(quota metav1.Object, namespaces []string) error {
	return setStringListAnnotation(quota, AnnotationQuotaNamespaces, namespaces, validateNamespaces)
}

// validateNamespaces checks that every element is a DNS-1123 label, the
// syntax of namespace names.
func validateNamespaces(namespaces []string) error {
	var errs []error
	for i, ns := range namespaces {
		if len(validation.IsDNS1123Label(ns)) > 0 {
			errs = append(errs, fmt.Errorf("[%d]: %q is not a valid namespace name (an RFC 1123 label)", i, ns))
		}
	}
	return errors.Join(errs...)
}
