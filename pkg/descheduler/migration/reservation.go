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

package migration

import (
	"maps"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// Labels of the Reservations the controller creates, as Koordinator's.
const (
	// LabelCreatedBy names the creator of a Reservation.
	LabelCreatedBy = "app.kubernetes.io/created-by"
	// Creator is the value of LabelCreatedBy on Reservations of PodMigrationJobs.
	Creator = "koord-descheduler"
)

// nodeNameField is the node field a required node affinity selects the node by name with.
const nodeNameField = "metadata.name"

// buildReservation returns the Reservation job makes for pod: the job's reservationOptions.template, filled in
// as Koordinator does. Its name is the job's UID, so that it can be found again after a restart; the pod
// template is the pod's labels, annotations and spec without nodeName, with a required node affinity that
// keeps it off the pod's node; the owners are the pod's controller (the pod itself while it is unscheduled);
// it is allocated once and lives as long as the job (ttl). The job owns it.
func buildReservation(job *schedv1alpha1.PodMigrationJob, pod *corev1.Pod, ttl time.Duration, now time.Time) *schedv1alpha1.Reservation {
	var tmpl schedv1alpha1.ReservationTemplateSpec
	if o := job.Spec.ReservationOptions; o != nil && o.Template != nil {
		tmpl = *o.Template.DeepCopy()
	}
	r := &schedv1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{
			Name:        string(job.UID),
			Labels:      tmpl.Labels,
			Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: schedv1alpha1.SchemeGroupVersion.String(),
				Kind:       "PodMigrationJob",
				Name:       job.Name,
				UID:        job.UID,
				Controller: ptr.To(true),
			}},
		},
		Spec: tmpl.Spec,
	}
	if tmpl.Name != "" {
		r.Name = tmpl.Name
	}
	if attempt := reservationAttempt(job); attempt > 1 {
		r.Name += "-" + strconv.Itoa(attempt)
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	r.Labels[LabelCreatedBy] = Creator
	r.Labels[extension.LabelReservationOrder] = strconv.FormatInt(now.UnixMilli(), 10)
	if r.Spec.Template == nil {
		r.Spec.Template = &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:   pod.Namespace,
				Labels:      maps.Clone(pod.Labels),
				Annotations: maps.Clone(pod.Annotations),
			},
			Spec: *pod.Spec.DeepCopy(),
		}
		// What the scheduler and the descheduler wrote on the pod is not the replacement's.
		delete(r.Spec.Template.Annotations, extension.AnnotationReservationAllocated)
		delete(r.Spec.Template.Annotations, extension.AnnotationSoftEviction)
	}
	if len(r.Spec.Owners) == 0 {
		r.Spec.Owners = reservationOwners(pod)
	}
	r.Spec.AllocateOnce = ptr.To(true)
	r.Spec.Template.Spec.NodeName = ""
	if r.Spec.TTL == nil && r.Spec.Expires == nil && ttl > 0 {
		r.Spec.TTL = &metav1.Duration{Duration: ttl}
	}
	avoidNode(&r.Spec.Template.Spec, pod.Spec.NodeName)
	return r
}

// reservationOwners returns who may use the Reservation of pod: the pod itself while it waits for a node
// (it will be scheduled into the Reservation), else its controller, whose replacement pod will use it.
func reservationOwners(pod *corev1.Pod) []schedv1alpha1.ReservationOwner {
	if pod.Spec.NodeName == "" && pod.Status.Phase == corev1.PodPending {
		return []schedv1alpha1.ReservationOwner{{Object: &corev1.ObjectReference{
			Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		}}}
	}
	if o := metav1.GetControllerOf(pod); o != nil {
		return []schedv1alpha1.ReservationOwner{{Controller: &schedv1alpha1.ReservationControllerReference{
			OwnerReference: *o, Namespace: pod.Namespace,
		}}}
	}
	return nil
}

// avoidNode adds to every required node selector term of spec a metadata.name NotIn [node] requirement (one
// term with only it when there is none), so that the pod built from spec does not land on node.
func avoidNode(spec *corev1.PodSpec, node string) {
	if node == "" {
		return
	}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	req := corev1.NodeSelectorRequirement{Key: nodeNameField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		terms[i].MatchFields = append(terms[i].MatchFields, req)
	}
	if len(terms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{req}}}
	}
}

// reservationState is what a job makes of its Reservation.
type reservationState int

const (
	reservationWaiting reservationState = iota
	reservationScheduled
	reservationUnschedulable
	reservationExpired
	reservationFailed
)

// stateOf interprets r: expired or failed (phase Failed, by its Ready condition), unschedulable (Pending with
// Scheduled=False/Unschedulable), scheduled (Available or Succeeded on a node), else waiting. It returns the
// condition message that explains a failure.
func stateOf(r *schedv1alpha1.Reservation) (reservationState, string) {
	cond := func(t schedv1alpha1.ReservationConditionType) *schedv1alpha1.ReservationCondition {
		for i := range r.Status.Conditions {
			if r.Status.Conditions[i].Type == t {
				return &r.Status.Conditions[i]
			}
		}
		return nil
	}
	switch r.Status.Phase {
	case schedv1alpha1.ReservationFailed:
		if c := cond(schedv1alpha1.ReservationConditionReady); c != nil {
			if c.Reason == schedv1alpha1.ReasonReservationExpired {
				return reservationExpired, c.Message
			}
			return reservationFailed, c.Message
		}
		return reservationFailed, ""
	case schedv1alpha1.ReservationAvailable, schedv1alpha1.ReservationSucceeded:
		if r.Status.NodeName != "" {
			return reservationScheduled, ""
		}
	case "", schedv1alpha1.ReservationPending:
		if c := cond(schedv1alpha1.ReservationConditionScheduled); c != nil && c.Status == schedv1alpha1.ConditionStatusFalse &&
			c.Reason == schedv1alpha1.ReasonReservationUnschedulable {
			return reservationUnschedulable, c.Message
		}
	}
	return reservationWaiting, ""
}
