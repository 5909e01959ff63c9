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

package cache

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// Owners are a Reservation's spec.owners, parsed once per version of the Reservation.
type Owners []ownerMatcher

// NewOwners parses spec.owners. An entry whose label selector does not parse is left out and reported in the
// error, so that a typo makes the reservation match fewer pods, never more.
func NewOwners(owners []schedv1alpha1.ReservationOwner) (Owners, error) {
	var errs []error
	out := make(Owners, 0, len(owners))
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

// Match reports whether pod matches one of the owners.
func (o Owners) Match(pod *corev1.Pod) bool {
	for _, m := range o {
		if m.matches(pod) {
			return true
		}
	}
	return false
}

// ownerMatcher is one entry of spec.owners, with its label selector parsed. The fields that are set are
// ANDed; an entry with none set matches no pod.
type ownerMatcher struct {
	object     *corev1.ObjectReference
	controller *schedv1alpha1.ReservationControllerReference
	selector   labels.Selector
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
