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

// Package elasticquota holds koord-manager's validating admission handler for ElasticQuotas (ValidatingPath).
//
// Quotas form trees through the quota.scheduling.koordinator.sh/parent label; names are unique across
// namespaces, as Koordinator keys quotas by name. The handler checks a quota on its own (min and max
// non-negative, every min resource also in max and not above it, a valid shared weight) and in its tree (the
// parent exists and is a parent, no cycle, the children's min fits in their parent's min, a quota's max names the
// same resources as its parent's, a quota is in its parent's and its children's tree (label
// quota.scheduling.koordinator.sh/tree-id) and never changes tree, a parent with children stays a parent and
// is not deleted). The built-in
// koordinator-root-quota is only checked on its own. A DELETE is refused for the built-in quotas and for a
// quota that pods are still charged to, as Koordinator refuses them, unless the quota's namespace is being
// deleted (so that deleting the namespace, as helm uninstall does, never hangs).
//
// An UPDATE that changes neither spec, the parent, is-parent and tree-id labels nor the shared weight is let through
// unchecked, so that controllers can keep writing their status annotations to a tree that became inconsistent.
package elasticquota

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/extension"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// ValidatingPath is where the webhook server serves the ElasticQuota validating handler.
const ValidatingPath = "/validate-elasticquota"

// Options change the handler's rules.
type Options struct {
	// MaxKeysIncluded lets a child quota's max name a subset of its parent's max resources, instead of exactly
	// the same ones (Koordinator's gate ElasticQuotaEnableUpdateResourceKey).
	MaxKeysIncluded bool
}

// NewValidatingWebhook returns the ElasticQuota validating webhook. reader (the manager's cache) must serve
// ElasticQuotas, pods and namespaces in all namespaces; decoder must know the scheduling.sigs.k8s.io types.
func NewValidatingWebhook(reader client.Reader, decoder admission.Decoder, opts Options) *admission.Webhook {
	return &admission.Webhook{Handler: &validator{reader: reader, decoder: decoder, opts: opts}}
}

// validator is the ElasticQuota validating handler.
type validator struct {
	reader  client.Reader
	decoder admission.Decoder
	opts    Options
}

// Handle validates an ElasticQuota being created, updated or deleted.
func (v *validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	quota, old := &schedulingsigsv1alpha1.ElasticQuota{}, &schedulingsigsv1alpha1.ElasticQuota{}
	switch req.Operation {
	case admissionv1.Create:
		if err := v.decoder.DecodeRaw(req.Object, quota); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding ElasticQuota: %w", err))
		}
		old = nil
	case admissionv1.Update:
		if err := v.decoder.DecodeRaw(req.Object, quota); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding ElasticQuota: %w", err))
		}
		if err := v.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding old ElasticQuota: %w", err))
		}
		if !relevantChange(old, quota) {
			return admission.Allowed("")
		}
	case admissionv1.Delete:
		if err := v.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding ElasticQuota: %w", err))
		}
		quota = nil
	default:
		return admission.Allowed("")
	}
	list := &schedulingsigsv1alpha1.ElasticQuotaList{}
	if err := v.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("listing ElasticQuotas: %w", err))
	}
	t := newTree(list.Items)
	var errs field.ErrorList
	if quota == nil {
		if terminating, err := v.namespaceTerminating(ctx, old.Namespace); err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		} else if terminating {
			return admission.Allowed("the quota's namespace is being deleted")
		}
		if errs = t.validateDelete(old); len(errs) == 0 {
			pods, err := v.chargedPods(ctx, old)
			if err != nil {
				return admission.Errored(http.StatusInternalServerError, err)
			}
			errs = validateNoPods(old, pods)
		}
	} else {
		errs = ValidateElasticQuota(quota)
		errs = append(errs, t.validateTopology(quota, old, v.opts)...)
	}
	if len(errs) > 0 {
		return admission.Denied(errs.ToAggregate().Error())
	}
	return admission.Allowed("")
}

// relevantChange reports whether an update touches what the handler checks.
func relevantChange(old, quota *schedulingsigsv1alpha1.ElasticQuota) bool {
	for _, key := range []string{extension.LabelQuotaParent, extension.LabelQuotaIsParent, extension.LabelQuotaTreeID} {
		if old.Labels[key] != quota.Labels[key] {
			return true
		}
	}
	return old.Annotations[extension.AnnotationSharedWeight] != quota.Annotations[extension.AnnotationSharedWeight] ||
		!equality.Semantic.DeepEqual(old.Spec, quota.Spec)
}

// ValidateElasticQuota checks a quota on its own: min and max are non-negative, every resource in min is also
// in max and not above it, and the shared-weight annotation parses and is non-negative.
func ValidateElasticQuota(quota *schedulingsigsv1alpha1.ElasticQuota) field.ErrorList {
	minPath, maxPath := field.NewPath("spec", "min"), field.NewPath("spec", "max")
	errs := validateNonNegative(minPath, quota.Spec.Min)
	errs = append(errs, validateNonNegative(maxPath, quota.Spec.Max)...)
	for _, name := range sortedNames(quota.Spec.Min) {
		minQ := quota.Spec.Min[name]
		maxQ, ok := quota.Spec.Max[name]
		switch {
		case !ok:
			errs = append(errs, field.Invalid(minPath.Key(string(name)), minQ.String(), "is not in spec.max; every resource of spec.min must also be in spec.max"))
		case minQ.Cmp(maxQ) > 0:
			errs = append(errs, field.Invalid(minPath.Key(string(name)), minQ.String(), fmt.Sprintf("must not exceed spec.max[%s] (%s)", name, maxQ.String())))
		}
	}
	weightPath := field.NewPath("metadata", "annotations").Key(extension.AnnotationSharedWeight)
	weight, err := extension.GetSharedWeight(quota)
	if err != nil {
		detail := err.Error()
		if ae, ok := errors.AsType[*extension.AnnotationError](err); ok {
			detail = ae.Err.Error()
		}
		return append(errs, field.Invalid(weightPath, quota.Annotations[extension.AnnotationSharedWeight], detail))
	}
	for _, name := range sortedNames(weight) {
		if q := weight[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(weightPath, quota.Annotations[extension.AnnotationSharedWeight], fmt.Sprintf("the weight of %s (%s) must not be negative", name, q.String())))
		}
	}
	return errs
}

// validateNonNegative reports the negative quantities of list.
func validateNonNegative(path *field.Path, list corev1.ResourceList) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(list) {
		if q := list[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return errs
}

// sortedNames returns the resource names of list in order.
func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(list))
}

// tree indexes the ElasticQuotas by name and by parent.
type tree struct {
	byName   map[string]*schedulingsigsv1alpha1.ElasticQuota
	children map[string][]*schedulingsigsv1alpha1.ElasticQuota
}

// newTree indexes quotas. Should two quotas share a name (which the handler prevents), the one in the first
// namespace in order wins.
func newTree(quotas []schedulingsigsv1alpha1.ElasticQuota) *tree {
	byName := make(map[string]*schedulingsigsv1alpha1.ElasticQuota, len(quotas))
	for i := range quotas {
		q := &quotas[i]
		if cur, ok := byName[q.Name]; !ok || q.Namespace < cur.Namespace {
			byName[q.Name] = q
		}
	}
	return indexChildren(byName)
}

// with returns the tree with quota in place of the quota of the same name.
func (t *tree) with(quota *schedulingsigsv1alpha1.ElasticQuota) *tree {
	byName := maps.Clone(t.byName)
	byName[quota.Name] = quota
	return indexChildren(byName)
}

// indexChildren returns the tree of the quotas in byName.
func indexChildren(byName map[string]*schedulingsigsv1alpha1.ElasticQuota) *tree {
	t := &tree{byName: byName, children: map[string][]*schedulingsigsv1alpha1.ElasticQuota{}}
	for _, q := range byName {
		if parent := extension.GetParentQuotaName(q); parent != "" && parent != q.Name {
			t.children[parent] = append(t.children[parent], q)
		}
	}
	// Children in name order, so that messages naming several are the same every time.
	for _, children := range t.children {
		slices.SortFunc(children, func(a, b *schedulingsigsv1alpha1.ElasticQuota) int { return strings.Compare(a.Name, b.Name) })
	}
	return t
}

// childNames returns the sorted names of the children of the quota name.
func (t *tree) childNames(name string) []string {
	names := make([]string, 0, len(t.children[name]))
	for _, c := range t.children[name] {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return names
}

// builtinQuotas are the quotas koord-scheduler creates and keeps.
var builtinQuotas = []string{extension.RootQuotaName, extension.SystemQuotaName, extension.DefaultQuotaName}

// validateDelete refuses to delete a built-in quota, or a quota that still has children.
func (t *tree) validateDelete(quota *schedulingsigsv1alpha1.ElasticQuota) field.ErrorList {
	if slices.Contains(builtinQuotas, quota.Name) {
		return field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"),
			fmt.Sprintf("quota %q is built in: koord-scheduler keeps it, and it cannot be deleted", quota.Name))}
	}
	if cur, ok := t.byName[quota.Name]; !ok || cur.Namespace != quota.Namespace {
		return nil // another quota of that name is the one in the tree
	}
	if children := t.childNames(quota.Name); len(children) > 0 {
		return field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"),
			fmt.Sprintf("quota %q cannot be deleted while it has child quotas: %s", quota.Name, strings.Join(children, ", ")))}
	}
	return nil
}

// validateTopology checks quota (old is its previous version on UPDATE, nil on CREATE) in the tree it would
// make.
func (t *tree) validateTopology(quota, old *schedulingsigsv1alpha1.ElasticQuota, opts Options) field.ErrorList {
	namePath := field.NewPath("metadata", "name")
	labelsPath := field.NewPath("metadata", "labels")
	if cur, ok := t.byName[quota.Name]; ok && old == nil && cur.Namespace != quota.Namespace {
		return field.ErrorList{field.Invalid(namePath, quota.Name, fmt.Sprintf(
			"an ElasticQuota named %q already exists in namespace %q; quota names must be unique across namespaces", quota.Name, cur.Namespace))}
	}
	if quota.Name == extension.RootQuotaName {
		return nil
	}
	t = t.with(quota)
	var errs field.ErrorList
	children := t.childNames(quota.Name)
	if old != nil && extension.IsParentQuota(old) && !extension.IsParentQuota(quota) && len(children) > 0 {
		errs = append(errs, field.Forbidden(labelsPath.Key(extension.LabelQuotaIsParent),
			fmt.Sprintf("cannot stop being \"true\" while the quota has child quotas: %s", strings.Join(children, ", "))))
	}

	treePath := labelsPath.Key(extension.LabelQuotaTreeID)
	treeID := extension.GetQuotaTreeID(quota)
	if old != nil && extension.GetQuotaTreeID(old) != treeID {
		errs = append(errs, field.Forbidden(treePath, fmt.Sprintf("cannot change from %q to %q: a quota stays in its tree", extension.GetQuotaTreeID(old), treeID)))
	}
	for _, c := range t.children[quota.Name] {
		if id := extension.GetQuotaTreeID(c); id != treeID {
			errs = append(errs, field.Invalid(treePath, treeID, fmt.Sprintf("must be the tree of its child quota %q (%q)", c.Name, id)))
		}
	}

	parentPath := labelsPath.Key(extension.LabelQuotaParent)
	parentName := extension.GetParentQuotaName(quota)
	switch parent, ok := t.byName[parentName]; {
	case parentName == quota.Name:
		errs = append(errs, field.Invalid(parentPath, parentName, "a quota cannot be its own parent"))
	case parentName == extension.RootQuotaName:
	case !ok:
		errs = append(errs, field.Invalid(parentPath, parentName, fmt.Sprintf("parent quota %q does not exist", parentName)))
	case !extension.IsParentQuota(parent):
		errs = append(errs, field.Invalid(parentPath, parentName, fmt.Sprintf("parent quota %q is not a parent (label %s is not \"true\")", parentName, extension.LabelQuotaIsParent)))
	default:
		if cycle := t.cycle(quota.Name); cycle != nil {
			errs = append(errs, field.Invalid(parentPath, parentName, fmt.Sprintf("makes a cycle: %s", strings.Join(cycle, " -> "))))
			break
		}
		if id := extension.GetQuotaTreeID(parent); id != treeID {
			errs = append(errs, field.Invalid(treePath, treeID, fmt.Sprintf("must be the tree of its parent quota %q (%q)", parentName, id)))
		}
		errs = append(errs, maxKeys(quota, parent, opts)...)
		// Only resources this quota guarantees are checked: a sum already above the parent's min without
		// them is not this quota's doing.
		sum := t.childrenMin(parentName)
		for _, name := range sortedNames(quota.Spec.Min) {
			if q := quota.Spec.Min[name]; q.Sign() > 0 {
				errs = append(errs, exceeds(name, q, sum, parent)...)
			}
		}
	}
	if len(children) > 0 {
		for _, c := range t.children[quota.Name] {
			if !keysMatch(c.Spec.Max, quota.Spec.Max, opts) {
				errs = append(errs, field.Invalid(field.NewPath("spec", "max"), keyList(quota.Spec.Max), fmt.Sprintf(
					"must name %s the resources of the max of its child quota %q (%s)", keysWanted(opts), c.Name, keyList(c.Spec.Max))))
			}
		}
		sum := t.childrenMin(quota.Name)
		for _, name := range sortedNames(sum) {
			errs = append(errs, exceeds(name, quota.Spec.Min[name], sum, quota)...)
		}
	}
	return errs
}

// maxKeys requires quota's max to name the resources its parent's max names, as Koordinator does (with
// opts.MaxKeysIncluded, no resource the parent's does not name): a child that limits a resource its parent
// does not leaves its share of that resource undefined.
func maxKeys(quota, parent *schedulingsigsv1alpha1.ElasticQuota, opts Options) field.ErrorList {
	if keysMatch(quota.Spec.Max, parent.Spec.Max, opts) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "max"), keyList(quota.Spec.Max), fmt.Sprintf(
		"must name %s the resources of the max of parent quota %q (%s)", keysWanted(opts), parent.Name, keyList(parent.Spec.Max)))}
}

// keysMatch reports whether child names the same resources as parent, or only resources of parent with
// opts.MaxKeysIncluded.
func keysMatch(child, parent corev1.ResourceList, opts Options) bool {
	for name := range child {
		if _, ok := parent[name]; !ok {
			return false
		}
	}
	return opts.MaxKeysIncluded || len(child) == len(parent)
}

func keysWanted(opts Options) string {
	if opts.MaxKeysIncluded {
		return "only"
	}
	return "exactly"
}

func keyList(l corev1.ResourceList) string {
	names := sortedNames(l)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = string(n)
	}
	return strings.Join(out, ", ")
}

// validateNoPods refuses to delete a quota that pods are charged to, naming a few of them.
func validateNoPods(quota *schedulingsigsv1alpha1.ElasticQuota, pods []string) field.ErrorList {
	if len(pods) == 0 {
		return nil
	}
	shown := pods
	if len(shown) > 3 {
		shown = append(slices.Clone(shown[:3]), "...")
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"), fmt.Sprintf(
		"quota %q cannot be deleted while %d pods are charged to it: %s", quota.Name, len(pods), strings.Join(shown, ", ")))}
}

// chargedPods returns namespace/name of the pods that are not done and are charged to quota: those labelled
// with its name and, when the quota is named after its namespace, the unlabelled pods of that namespace, as
// koord-scheduler charges them.
func (v *validator) chargedPods(ctx context.Context, quota *schedulingsigsv1alpha1.ElasticQuota) ([]string, error) {
	var names []string
	add := func(pods []corev1.Pod, unlabelledOnly bool) {
		for i := range pods {
			p := &pods[i]
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
				continue
			}
			if unlabelledOnly && extension.GetQuotaName(p) != "" {
				continue
			}
			names = append(names, p.Namespace+"/"+p.Name)
		}
	}
	labelled := &corev1.PodList{}
	if err := v.reader.List(ctx, labelled, client.MatchingLabels{extension.LabelQuotaName: quota.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the pods of quota %s: %w", quota.Name, err)
	}
	add(labelled.Items, false)
	if quota.Name == quota.Namespace {
		inNamespace := &corev1.PodList{}
		if err := v.reader.List(ctx, inNamespace, client.InNamespace(quota.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing the pods of namespace %s: %w", quota.Namespace, err)
		}
		add(inNamespace.Items, true)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// namespaceTerminating reports whether the namespace is being deleted.
func (v *validator) namespaceTerminating(ctx context.Context, name string) (bool, error) {
	ns := &corev1.Namespace{}
	if err := v.reader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("getting namespace %s: %w", name, err)
	}
	return ns.DeletionTimestamp != nil, nil
}

// exceeds reports resource name when the children's min sum is above the min of parent. value is the min of
// the quota under validation, the value the error names.
func exceeds(name corev1.ResourceName, value resource.Quantity, sum corev1.ResourceList, parent *schedulingsigsv1alpha1.ElasticQuota) field.ErrorList {
	total, limit := sum[name], parent.Spec.Min[name]
	if total.Cmp(limit) <= 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "min").Key(string(name)), value.String(),
		fmt.Sprintf("sum of children's min (%s) exceeds parent %q min (%s)", total.String(), parent.Name, limit.String()))}
}

// childrenMin returns the sum of the min of the children of the quota name.
func (t *tree) childrenMin(name string) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range t.children[name] {
		for r, q := range c.Spec.Min {
			total := sum[r]
			total.Add(q)
			sum[r] = total
		}
	}
	return sum
}

// cycle returns the chain of parents from name back to name, or nil when walking up from name reaches the
// root, a missing quota or a cycle that does not pass through name.
func (t *tree) cycle(name string) []string {
	chain := []string{name}
	seen := map[string]bool{name: true}
	for p := extension.GetParentQuotaName(t.byName[name]); p != "" && p != extension.RootQuotaName; {
		chain = append(chain, p)
		if p == name {
			return chain
		}
		q, ok := t.byName[p]
		if !ok || seen[p] {
			return nil
		}
		seen[p] = true
		p = extension.GetParentQuotaName(q)
	}
	return nil
}
