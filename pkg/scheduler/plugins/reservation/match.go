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

package reservation

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// ownerMatcher is one entry of spec.owners, with its label selector parsed. The fields that are set are
// ANDed; an entry with none set matches no pod.
type ownerMatcher struct {
	object     *corev1.ObjectReference
	controller *schedv1alpha1.ReservationControllerReference
	selector   labels.Selector
}

// newOwnerMatchers parses spec.owners. An entry whose label selector does not parse is left out and reported
// in the error, so that a typo makes the reservation match fewer pods, never more.
func newOwnerMatchers(owners []schedv1alpha1.ReservationOwner) ([]ownerMatcher, error) {
	var errs []error
	out := make([]ownerMatcher, 0, len(owners))
	for i, o := range owners {
		m := ownerMatcher{object: o.Object, controller: o.Controller}
		if o.LabelSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(o.LabelSelector)
			if err != nil {
				errs = append(errs, fmt.Errorf("spec.owners[%d].labelSelector: %w", i, err))
				continue
			}
			m.selector = sel
		}
		out = append(out, m)
	}
	return out, errors.Join(errs...)
}

// matches reports whether pod is selected by every field of m that is set.
func (m ownerMatcher) matches(pod *corev1.Pod) bool {
	if m.object == nil && m.controller == nil && m.selector == nil {
		return false
	}
	if o := m.object; o != nil && !objectMatches(o, pod) {
		return false
	}
	if c := m.controller; c != nil && !controllerMatches(c, pod) {
		return false
	}
	if m.selector != nil && !m.selector.Matches(labels.Set(pod.Labels)) {
		return false
	}
	return true
}

// objectMatches matches a pod reference by UID when it has one, else by namespace and name.
func objectMatches(o *corev1.ObjectReference, pod *corev1.Pod) bool {
	if o.Kind != "" && o.Kind != "Pod" {
		return false
	}
	if o.UID != "" {
		return o.UID == pod.UID
	}
	return o.Name != "" && o.Name == pod.Name && (o.Namespace == "" || o.Namespace == pod.Namespace)
}

// controllerMatches matches the pod's controller by UID when the reference has one, else by name, and kind
// and namespace when set.
func controllerMatches(c *schedv1alpha1.ReservationControllerReference, pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return false
	}
	if c.UID != "" {
		return c.UID == ref.UID
	}
	if c.Name == "" || c.Name != ref.Name {
		return false
	}
	if c.Kind != "" && c.Kind != ref.Kind {
		return false
	}
	return c.Namespace == "" || c.Namespace == pod.Namespace
}

// isOwner reports whether pod matches one of the reservation's owners.
func (r *resvInfo) isOwner(pod *corev1.Pod) bool {
	for _, m := range r.owners {
		if m.matches(pod) {
			return true
		}
	}
	return false
}

// affinity is a pod's parsed reservation-affinity annotation.
type affinity struct {
	raw      *extension.ReservationAffinity
	selector *nodeaffinity.NodeSelector
}

// newAffinity parses the pod's reservation-affinity annotation; nil when the pod has none.
func newAffinity(pod *corev1.Pod) (*affinity, error) {
	a, err := extension.GetReservationAffinity(pod.Annotations)
	if err != nil || a == nil {
		return nil, err
	}
	out := &affinity{raw: a}
	if a.Name == "" && a.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		sel, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: a.RequiredDuringSchedulingIgnoredDuringExecution.ReservationSelectorTerms})
		if err != nil {
			return nil, fmt.Errorf("annotation %s: requiredDuringSchedulingIgnoredDuringExecution: %w", extension.AnnotationReservationAffinity, err)
		}
		out.selector = sel
	}
	return out, nil
}

// selects reports whether the affinity allows the reservation: by name, else by its selector terms (against
// the reservation's labels, and metadata.name for matchFields) and its reservationSelector.
func (a *affinity) selects(r *resvInfo) bool {
	if a == nil {
		return true
	}
	if a.raw.Name != "" {
		return a.raw.Name == r.name
	}
	if a.selector != nil && !a.selector.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: r.name, Labels: r.labels}}) {
		return false
	}
	for k, v := range a.raw.ReservationSelector {
		if got, ok := r.labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// tolerates reports whether the affinity's tolerations tolerate every NoSchedule and NoExecute taint of the
// reservation.
func (a *affinity) tolerates(logger klog.Logger, r *resvInfo) bool {
	var tolerations []corev1.Toleration
	if a != nil {
		tolerations = a.raw.Tolerations
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, r.taints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	return !untolerated
}

// matchesPod reports whether pod may allocate the reservation: an owner, the reservation still takes owners,
// its taints are tolerated and the pod's reservation-affinity selects it.
func (r *resvInfo) matchesPod(logger klog.Logger, pod *corev1.Pod, a *affinity) bool {
	return r.acceptsOwners() && r.isOwner(pod) && a.selects(r) && a.tolerates(logger, r)
}
