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
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
)

// matchingProfiles returns the ClusterColocationProfiles whose namespace selector matches the labels of
// namespace and whose selector matches the labels of pod, in ascending name order. A selector that does not
// parse, or a namespace that cannot be read, is no match; the problem is logged.
func (m *mutator) matchingProfiles(ctx context.Context, namespace string, pod *corev1.Pod) ([]*configv1alpha1.ClusterColocationProfile, error) {
	list := &configv1alpha1.ClusterColocationProfileList{}
	if err := m.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ClusterColocationProfiles: %w", err)
	}
	logger := ctrl.LoggerFrom(ctx)
	nsLabels := &namespaceLabels{reader: m.reader, name: namespace}
	var matched []*configv1alpha1.ClusterColocationProfile
	for i := range list.Items {
		profile := &list.Items[i]
		ok, err := MatchProfile(profile, pod.Labels, func() (labels.Set, error) { return nsLabels.get(ctx) })
		if err != nil {
			logger.Error(err, "Skipped profile that could not be matched", "profile", profile.Name, "namespace", namespace)
			continue
		}
		if ok {
			matched = append(matched, profile)
		}
	}
	slices.SortFunc(matched, func(a, b *configv1alpha1.ClusterColocationProfile) int { return strings.Compare(a.Name, b.Name) })
	return matched, nil
}

// MatchProfile reports whether profile applies to a pod with podLabels: its selector must match podLabels and
// its namespace selector the labels namespaceLabels returns. namespaceLabels is called only when the pod
// selector matches and the namespace selector is not empty. A selector that does not parse, or namespace labels
// that cannot be read, is an error naming which selector failed.
func MatchProfile(profile *configv1alpha1.ClusterColocationProfile, podLabels labels.Set, namespaceLabels func() (labels.Set, error)) (bool, error) {
	ok, err := matchSelector(profile.Spec.Selector, func() (labels.Set, error) { return podLabels, nil })
	if err != nil {
		return false, fmt.Errorf("selector: %w", err)
	}
	if !ok {
		return false, nil
	}
	ok, err = matchSelector(profile.Spec.NamespaceSelector, namespaceLabels)
	if err != nil {
		return false, fmt.Errorf("namespace selector: %w", err)
	}
	return ok, nil
}

// matchSelector reports whether selector matches the labels getLabels returns. A nil or empty selector
// matches everything without calling getLabels.
func matchSelector(selector *metav1.LabelSelector, getLabels func() (labels.Set, error)) (bool, error) {
	if selector == nil || len(selector.MatchLabels)+len(selector.MatchExpressions) == 0 {
		return true, nil
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return false, fmt.Errorf("parsing label selector: %w", err)
	}
	set, err := getLabels()
	if err != nil {
		return false, err
	}
	return s.Matches(set), nil
}

// namespaceLabels reads the labels of a namespace once, when first needed.
type namespaceLabels struct {
	reader  client.Reader
	name    string
	fetched bool
	labels  labels.Set
	err     error
}

// get returns the labels of the namespace.
func (n *namespaceLabels) get(ctx context.Context) (labels.Set, error) {
	if !n.fetched {
		n.fetched = true
		ns := &corev1.Namespace{}
		if err := n.reader.Get(ctx, client.ObjectKey{Name: n.name}, ns); err != nil {
			n.err = fmt.Errorf("reading namespace %q: %w", n.name, err)
		}
		n.labels = ns.Labels
	}
	return n.labels, n.err
}

// selected decides with m.random whether a matching profile with the given probability applies; see
// ProbabilitySelects.
func (m *mutator) selected(probability *intstr.IntOrString) (bool, error) {
	return ProbabilitySelects(probability, m.random)
}

// ProbabilitySelects decides whether a matching profile with the given probability applies: always when the
// probability is unset or at least 100%, never when it is 0 or below, and otherwise when draw, which must return
// an integer in [0, 100), returns a number below it. draw is called only in that last case.
func ProbabilitySelects(probability *intstr.IntOrString, draw func() int) (bool, error) {
	if probability == nil {
		return true, nil
	}
	p, err := intstr.GetScaledValueFromIntOrPercent(probability, 100, false)
	if err != nil {
		return false, fmt.Errorf("probability %q: %w", probability.String(), err)
	}
	switch {
	case p <= 0:
		return false, nil
	case p >= 100:
		return true, nil
	}
	return draw() < p, nil
}

// applyProfile injects what profile describes into pod: first the metadata (ApplyProfileMetadata: labels and
// annotations, key mappings, label suffixes, QoS class, sub-priority), then scheduler, priority class and
// finally the patch. The metadata steps only set labels that the later steps do not touch, so the result is
// that of Koordinator's order. It
// returns the reasons to deny the pod (a missing PriorityClass, a patch that does not apply) and an error
// when the PriorityClass could not be read.
func (m *mutator) applyProfile(ctx context.Context, pod *corev1.Pod, profile *configv1alpha1.ClusterColocationProfile) (field.ErrorList, error) {
	spec := &profile.Spec
	ApplyProfileMetadata(pod, profile)
	if spec.SchedulerName != "" {
		pod.Spec.SchedulerName = spec.SchedulerName
	}
	if spec.PriorityClassName != "" {
		pc := &schedulingv1.PriorityClass{}
		if err := m.reader.Get(ctx, client.ObjectKey{Name: spec.PriorityClassName}, pc); err != nil {
			if apierrors.IsNotFound(err) {
				return profileErrors(profile, field.NotFound(field.NewPath("spec", "priorityClassName"), spec.PriorityClassName)), nil
			}
			return nil, fmt.Errorf("reading PriorityClass %q of ClusterColocationProfile %q: %w", spec.PriorityClassName, profile.Name, err)
		}
		pod.Spec.PriorityClassName = pc.Name
		pod.Spec.Priority = &pc.Value
		pod.Spec.PreemptionPolicy = pc.PreemptionPolicy
	}
	if len(spec.Patch.Raw) > 0 {
		patched, err := applyPatch(pod, spec.Patch.Raw)
		if err != nil {
			return profileErrors(profile, field.Invalid(field.NewPath("spec", "patch"), field.OmitValueType{}, err.Error())), nil
		}
		*pod = *patched
	}
	return nil, nil
}

// ApplyProfileMetadata applies the parts of profile that only touch the pod's metadata: labels and
// annotations, label and annotation key mappings, label suffixes, the QoS class label and the Koordinator
// priority label. These are the parts that may still change on an existing pod. Applying a profile twice
// changes nothing the second time.
func ApplyProfileMetadata(pod *corev1.Pod, profile *configv1alpha1.ClusterColocationProfile) {
	spec := &profile.Spec
	pod.Labels = merge(pod.Labels, spec.Labels)
	pod.Annotations = merge(pod.Annotations, spec.Annotations)
	pod.Labels = mapKeys(pod.Labels, spec.LabelKeysMapping, spec.LabelSuffixes)
	pod.Annotations = mapKeys(pod.Annotations, spec.AnnotationKeysMapping, nil)
	for key, suffix := range spec.LabelSuffixes {
		// A value that already ends with the suffix keeps it, so that mutating twice changes nothing.
		if v, ok := pod.Labels[key]; ok && !strings.HasSuffix(v, suffix) {
			pod.Labels[key] = v + suffix
		}
	}
	if spec.QoSClass != "" {
		pod.Labels = merge(pod.Labels, map[string]string{extension.LabelPodQoS: spec.QoSClass})
	}
	if spec.KoordinatorPriority != nil {
		pod.Labels = merge(pod.Labels, map[string]string{extension.LabelPodPriority: strconv.FormatInt(int64(*spec.KoordinatorPriority), 10)})
	}
}

// profileErrors returns err as a list, its field path prefixed with the profile it belongs to.
func profileErrors(profile *configv1alpha1.ClusterColocationProfile, err *field.Error) field.ErrorList {
	err.Field = fmt.Sprintf("ClusterColocationProfile %q: %s", profile.Name, err.Field)
	return field.ErrorList{err}
}

// merge returns dst with the entries of src added, overwriting existing keys; dst is allocated when needed.
func merge(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]string, len(src))
	}
	maps.Copy(dst, src)
	return dst
}

// mapKeys returns m with, for each entry old: new of mapping, the key new set to the value of old ("" when old
// is missing, as Koordinator does). A source value that already ends with the suffix the same profile appends
// to it is copied without that suffix: it is taken to come from an earlier pass of the profile, so that
// mutating twice changes nothing.
func mapKeys(m, mapping, suffixes map[string]string) map[string]string {
	if len(mapping) == 0 {
		return m
	}
	copied := make(map[string]string, len(mapping))
	for from, to := range mapping {
		copied[to] = strings.TrimSuffix(m[from], suffixes[from])
	}
	return merge(m, copied)
}

// applyPatch returns pod with the strategic merge patch applied.
func applyPatch(pod *corev1.Pod, patch []byte) (*corev1.Pod, error) {
	current, err := json.Marshal(pod)
	if err != nil {
		return nil, fmt.Errorf("encoding pod: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(current, patch, &corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("applying strategic merge patch: %w", err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, fmt.Errorf("decoding patched pod: %w", err)
	}
	return out, nil
}
