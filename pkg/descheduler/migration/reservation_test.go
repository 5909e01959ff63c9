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
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

func TestBuildReservation(t *testing.T) {
	_, rs := makeDeployment("web", 3)
	job := &schedv1alpha1.PodMigrationJob{ObjectMeta: metav1.ObjectMeta{Name: "job", UID: "job-uid"}}
	rsRef := *metav1.NewControllerRef(rs, rs.GroupVersionKind())
	rsRef.APIVersion, rsRef.Kind = "apps/v1", "ReplicaSet"
	order := strconv.FormatInt(testNow.UnixMilli(), 10)
	jobOwner := []metav1.OwnerReference{{APIVersion: "scheduling.koordinator.sh/v1alpha1", Kind: "PodMigrationJob", Name: "job", UID: "job-uid", Controller: ptr.To(true)}}
	notOnN1 := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n1"}}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	tests := map[string]struct {
		job  *schedv1alpha1.PodMigrationJob
		pod  *corev1.Pod
		want *schedv1alpha1.Reservation
	}{
		"pod of a ReplicaSet": {
			job: job,
			pod: makePod("p", ownedBy(rs), func(p *corev1.Pod) {
				p.Labels = map[string]string{"app": "web"}
				p.Annotations = map[string]string{"a": "b", extension.AnnotationReservationAllocated: `{"name":"old","uid":"old"}`}
			}),
			want: &schedv1alpha1.Reservation{
				ObjectMeta: metav1.ObjectMeta{
					Name:            "job-uid",
					Labels:          map[string]string{LabelCreatedBy: Creator, extension.LabelReservationOrder: order},
					OwnerReferences: jobOwner,
				},
				Spec: schedv1alpha1.ReservationSpec{
					Template: &corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}},
						Spec: corev1.PodSpec{
							SchedulerName: "koord-scheduler",
							Containers:    []corev1.Container{{Name: "c", Image: "i"}},
							Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
								NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{notOnN1}}},
							}}},
						},
					},
					Owners:       []schedv1alpha1.ReservationOwner{{Controller: &schedv1alpha1.ReservationControllerReference{OwnerReference: rsRef, Namespace: "ns"}}},
					TTL:          &metav1.Duration{Duration: 5 * time.Minute},
					AllocateOnce: ptr.To(true),
				},
			},
		},
		"existing node affinity terms each avoid the node": {
			job: job,
			pod: makePod("p", ownedBy(rs), func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}, {}},
				}}}
			}),
			want: &schedv1alpha1.Reservation{
				ObjectMeta: metav1.ObjectMeta{
					Name:            "job-uid",
					Labels:          map[string]string{LabelCreatedBy: Creator, extension.LabelReservationOrder: order},
					OwnerReferences: jobOwner,
				},
				Spec: schedv1alpha1.ReservationSpec{
					Template: &corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Namespace: "ns"},
						Spec: corev1.PodSpec{
							SchedulerName: "koord-scheduler",
							Containers:    []corev1.Container{{Name: "c", Image: "i"}},
							Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
								NodeSelectorTerms: []corev1.NodeSelectorTerm{
									{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: []corev1.NodeSelectorRequirement{notOnN1}},
									{MatchFields: []corev1.NodeSelectorRequirement{notOnN1}},
								},
							}}},
						},
					},
					Owners:       []schedv1alpha1.ReservationOwner{{Controller: &schedv1alpha1.ReservationControllerReference{OwnerReference: rsRef, Namespace: "ns"}}},
					TTL:          &metav1.Duration{Duration: 5 * time.Minute},
					AllocateOnce: ptr.To(true),
				},
			},
		},
		"unscheduled pod owns its reservation; template ttl kept": {
			job: &schedv1alpha1.PodMigrationJob{
				ObjectMeta: metav1.ObjectMeta{Name: "job", UID: "job-uid"},
				Spec: schedv1alpha1.PodMigrationJobSpec{ReservationOptions: &schedv1alpha1.PodMigrateReservationOptions{
					Template: &schedv1alpha1.ReservationTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Name: "mine", Labels: map[string]string{"x": "y"}},
						Spec:       schedv1alpha1.ReservationSpec{TTL: &metav1.Duration{Duration: time.Hour}},
					},
				}},
			},
			pod: makePod("p", ownedBy(rs), func(p *corev1.Pod) {
				p.Spec.NodeName = ""
				p.Status = corev1.PodStatus{Phase: corev1.PodPending}
			}),
			want: &schedv1alpha1.Reservation{
				ObjectMeta: metav1.ObjectMeta{
					Name:            "mine",
					Labels:          map[string]string{"x": "y", LabelCreatedBy: Creator, extension.LabelReservationOrder: order},
					OwnerReferences: jobOwner,
				},
				Spec: schedv1alpha1.ReservationSpec{
					Template: &corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Namespace: "ns"},
						Spec:       corev1.PodSpec{SchedulerName: "koord-scheduler", Containers: []corev1.Container{{Name: "c", Image: "i"}}},
					},
					Owners:       []schedv1alpha1.ReservationOwner{{Object: &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p", UID: "uid-p"}}},
					TTL:          &metav1.Duration{Duration: time.Hour},
					AllocateOnce: ptr.To(true),
				},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := buildReservation(tc.job, tc.pod, 5*time.Minute, testNow)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("buildReservation (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestBuildReservationAttempt: a job's later Reservation is its first, named with "-<attempt>" (after the job's
// UID, or the template's name).
func TestBuildReservationAttempt(t *testing.T) {
	_, rs := makeDeployment("web", 3)
	pod := makePod("p", ownedBy(rs))
	for name, tc := range map[string]struct {
		template *schedv1alpha1.PodMigrateReservationOptions
		want     string
	}{
		"named after the job":      {want: "job-uid-3"},
		"named after the template": {template: &schedv1alpha1.PodMigrateReservationOptions{Template: &schedv1alpha1.ReservationTemplateSpec{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}}, want: "mine-3"},
	} {
		t.Run(name, func(t *testing.T) {
			job := &schedv1alpha1.PodMigrationJob{ObjectMeta: metav1.ObjectMeta{Name: "job", UID: "job-uid"},
				Spec: schedv1alpha1.PodMigrationJobSpec{ReservationOptions: tc.template}}
			first := buildReservation(job, pod, 5*time.Minute, testNow)
			metav1.SetMetaDataAnnotation(&job.ObjectMeta, AnnotationReservationAttempt, "3")
			third := buildReservation(job, pod, 5*time.Minute, testNow)
			if third.Name != tc.want {
				t.Errorf("third Reservation named %q, want %q", third.Name, tc.want)
			}
			third.Name = first.Name
			if diff := cmp.Diff(first, third); diff != "" {
				t.Errorf("the third Reservation differs from the first beyond its name (-first,+third):\n%s", diff)
			}
		})
	}
}

func TestStateOf(t *testing.T) {
	cond := func(t schedv1alpha1.ReservationConditionType, s schedv1alpha1.ConditionStatus, reason, msg string) []schedv1alpha1.ReservationCondition {
		return []schedv1alpha1.ReservationCondition{{Type: t, Status: s, Reason: reason, Message: msg}}
	}
	tests := map[string]struct {
		status  schedv1alpha1.ReservationStatus
		want    reservationState
		wantMsg string
	}{
		"new":       {want: reservationWaiting},
		"pending":   {status: schedv1alpha1.ReservationStatus{Phase: schedv1alpha1.ReservationPending}, want: reservationWaiting},
		"available": {status: schedv1alpha1.ReservationStatus{Phase: schedv1alpha1.ReservationAvailable, NodeName: "n2"}, want: reservationScheduled},
		"succeeded": {status: schedv1alpha1.ReservationStatus{Phase: schedv1alpha1.ReservationSucceeded, NodeName: "n2"}, want: reservationScheduled},
		"unschedulable": {
			status: schedv1alpha1.ReservationStatus{Phase: schedv1alpha1.ReservationPending,
				Conditions: cond(schedv1alpha1.ReservationConditionScheduled, schedv1alpha1.ConditionStatusFalse, schedv1alpha1.ReasonReservationUnschedulable, "0/2 nodes are available")},
			want: reservationUnschedulable, wantMsg: "0/2 nodes are available",
		},
		"expired": {
			status: schedv1alpha1.ReservationStatus{Phase: schedv1alpha1.ReservationFailed,
				Conditions: cond(schedv1alpha1.ReservationConditionReady, schedv1alpha1.ConditionStatusFalse, schedv1alpha1.ReasonReservationExpired, "expired")},
			want: reservationExpired, wantMsg: "expired",
		},
		"failed": {status: schedv1alpha1.ReservationStatus{Phase: schedv1alpha1.ReservationFailed}, want: reservationFailed},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, msg := stateOf(&schedv1alpha1.Reservation{Status: tc.status})
			if got != tc.want || msg != tc.wantMsg {
				t.Errorf("stateOf = %v, %q; want %v, %q", got, msg, tc.want, tc.wantMsg)
			}
		})
	}
}
