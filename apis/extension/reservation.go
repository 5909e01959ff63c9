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
	"k8s.io/apimachinery/pkg/types"
)

// Pod labels and annotations of resource reservation.
const (
	// AnnotationReservationAffinity constrains the reservations a pod may
	// use; see ReservationAffinity.
	AnnotationReservationAffinity = SchedulingDomainPrefix + "reservation-affinity"
	// AnnotationReservationAllocated is the reservation a pod was allocated
	// from ({"name": ..., "uid": ...}), written by koord-scheduler.
	AnnotationReservationAllocated = SchedulingDomainPrefix + "reservation-allocated"
	// LabelReservationIgnored ("true") schedules a pod as if the node had no
	// reservations.
	LabelReservationIgnored = SchedulingDomainPrefix + "reservation-ignored"
	// LabelReservationOrder orders reservations: lower values are preferred,
	// and 0 leaves the choice to scoring.
	LabelReservationOrder = SchedulingDomainPrefix + "reservation-order"
	// LabelPreAllocationRequired ("true"), on a Reservation with
	// spec.preAllocation (or its template), requires it to take the
	// resources of at least one running pod: it is placed only on nodes with a
	// pre-allocatable pod that fits.
	LabelPreAllocationRequired = SchedulingDomainPrefix + "pre-allocation-required"
	// LabelPodPreAllocatable ("true") marks a running pod whose resources a
	// Reservation with preAllocationPolicy.mode Cluster may take (the
	// Reservation plugin's preAllocationConfig.clusterLabelKey by default).
	LabelPodPreAllocatable = PodDomainPrefix + "is-pre-allocatable"
	// AnnotationPodPreAllocatablePriority orders the pre-allocatable pods of
	// a node in Cluster mode: an integer, higher first (0 when absent or
	// malformed).
	AnnotationPodPreAllocatablePriority = PodDomainPrefix + "pre-allocatable-priority"
)

// ReservationAffinity is the value of AnnotationReservationAffinity: the
// constraints on the reservations a pod may use.
type ReservationAffinity struct {
	// Name names one reservation directly; when set, the other fields are
	// ignored.
	Name string `json:"name,omitempty"`
	// RequiredDuringSchedulingIgnoredDuringExecution selects reservations by
	// their labels; a pod that matches none is not scheduled.
	RequiredDuringSchedulingIgnoredDuringExecution *ReservationAffinitySelector `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	// ReservationSelector must match the labels of the reservation.
	ReservationSelector map[string]string `json:"reservationSelector,omitempty"`
	// Tolerations let the pod use reservations with matching taints.
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// ReservationAffinitySelector selects reservations by label: it matches a
// reservation that matches any of its terms.
type ReservationAffinitySelector struct {
	// ReservationSelectorTerms are ORed; each term is evaluated against the
	// labels of a reservation as a node selector term is against a node.
	ReservationSelectorTerms []corev1.NodeSelectorTerm `json:"reservationSelectorTerms,omitempty"`
}

// validate checks the operators of the selector terms and tolerations.
func (a *ReservationAffinity) validate() error {
	var errs []error
	if sel := a.RequiredDuringSchedulingIgnoredDuringExecution; sel != nil {
		for i, term := range sel.ReservationSelectorTerms {
			for j, req := range term.MatchExpressions {
				if !validSelectorOperator(req.Operator) {
					errs = append(errs, fmt.Errorf("requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms[%d].matchExpressions[%d].operator: unsupported value %q", i, j, req.Operator))
				}
			}
			for j, req := range term.MatchFields {
				if !validSelectorOperator(req.Operator) {
					errs = append(errs, fmt.Errorf("requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms[%d].matchFields[%d].operator: unsupported value %q", i, j, req.Operator))
				}
			}
		}
	}
	for i, t := range a.Tolerations {
		switch t.Operator {
		case "", corev1.TolerationOpEqual, corev1.TolerationOpExists:
		default:
			errs = append(errs, fmt.Errorf("tolerations[%d].operator: unsupported value %q", i, t.Operator))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, fmt.Errorf("tolerations[%d].effect: unsupported value %q", i, t.Effect))
		}
	}
	return errors.Join(errs...)
}

// validSelectorOperator reports whether op is a node selector operator.
func validSelectorOperator(op corev1.NodeSelectorOperator) bool {
	switch op {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		return true
	}
	return false
}

// GetReservationAffinity parses AnnotationReservationAffinity. It returns nil
// and no error when the annotation is missing, and an *AnnotationError when it
// is not valid JSON or uses an unknown selector or toleration operator or an
// unknown taint effect.
func GetReservationAffinity(annotations map[string]string) (*ReservationAffinity, error) {
	return getJSONAnnotation[ReservationAffinity](annotations, AnnotationReservationAffinity)
}

// ReservationAllocated is the value of AnnotationReservationAllocated: the reservation a pod was allocated
// from.
type ReservationAllocated struct {
	// Name is the Reservation's name.
	Name string `json:"name"`
	// UID is the Reservation's UID.
	UID types.UID `json:"uid"`
}

func (a *ReservationAllocated) validate() error {
	if a.UID == "" {
		return errors.New("uid is empty")
	}
	return nil
}

// GetReservationAllocated parses AnnotationReservationAllocated. It returns nil and no error when the
// annotation is missing, and an *AnnotationError naming the annotation when it is malformed or has no UID.
func GetReservationAllocated(annotations map[string]string) (*ReservationAllocated, error) {
	return getJSONAnnotation[ReservationAllocated](annotations, AnnotationReservationAllocated)
}

// SetReservationAllocated stores allocated in AnnotationReservationAllocated on obj, or removes the
// annotation when allocated is nil. It writes nothing and returns an *AnnotationError when allocated has no
// UID.
func SetReservationAllocated(obj metav1.Object, allocated *ReservationAllocated) error {
	return setJSONAnnotation(obj, AnnotationReservationAllocated, allocated)
}

// SetReservationAffinity stores affinity in AnnotationReservationAffinity on
// obj, or removes the annotation when affinity is nil. It writes nothing and
// returns an *AnnotationError when affinity is invalid.
func SetReservationAffinity(obj metav1.Object, affinity *ReservationAffinity) error {
	return setJSONAnnotation(obj, AnnotationReservationAffinity, affinity)
}

// IsReservationIgnored reports whether the pod carries
// LabelReservationIgnored set to "true".
func IsReservationIgnored(pod *corev1.Pod) bool {
	return pod != nil && pod.Labels[LabelReservationIgnored] == "true"
}

// Labels of reserve pods: the pods koord-scheduler's Reservation controller creates so that kube-scheduler
// places Reservations. A reserve pod goes through every scheduler plugin like any pod, but its Bind turns the
// placement into its Reservation's status and deletes it; it never runs. koord-manager's pod webhooks and the
// ElasticQuota plugin leave reserve pods alone; IsReservePod tells them apart.
const (
	// LabelReservePod ("true") marks a reserve pod.
	LabelReservePod = SchedulingDomainPrefix + "reserve-pod"
	// LabelReservationName is the name of the Reservation a reserve pod places.
	LabelReservationName = SchedulingDomainPrefix + "reservation-name"
	// LabelReservationUID is the UID of the Reservation a reserve pod places.
	LabelReservationUID = SchedulingDomainPrefix + "reservation-uid"
	// AnnotationReservePodPreAllocation ("true") marks the reserve pod of a Reservation with
	// spec.preAllocation. Such a reserve pod requests nothing: the Reservation plugin checks the template's
	// requests itself, counting the resources of the running pods the Reservation takes over.
	AnnotationReservePodPreAllocation = SchedulingDomainPrefix + "is-pre-allocation"
)

// IsReservePod reports whether pod is a reserve pod.
func IsReservePod(pod *corev1.Pod) bool {
	return pod != nil && pod.Labels[LabelReservePod] == "true" && pod.Labels[LabelReservationName] != ""
}
