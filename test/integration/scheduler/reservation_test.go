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

package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// TestReservation: a Reservation is placed on a node and becomes Available; a pod that is not its owner cannot
// take what it holds and says so; its owner's pod lands in it; a Reservation whose TTL runs out is Failed and
// frees what it held.
func TestReservation(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	node := f.node("a", "0", 0, nil)
	transitions := func() [3]float64 {
		var v [3]float64
		for i, phase := range []schedulingv1alpha1.ReservationPhase{schedulingv1alpha1.ReservationAvailable, schedulingv1alpha1.ReservationSucceeded, schedulingv1alpha1.ReservationFailed} {
			v[i] = counter(t, "koord_scheduler_reservation_transitions_total", "phase", string(phase))
		}
		return v
	}
	before := transitions()

	// 6 of the node's 10 cpus, for pods labelled app=owner.
	owned := f.reservation("owned", "6", nil)
	f.eventuallyReservation(owned, schedulingv1alpha1.ReservationAvailable, node)

	stranger := f.pod("stranger", cpu("6"), nil)
	if msg := f.unschedulable(stranger); !strings.Contains(msg, fmt.Sprintf("held by reservation %q", owned)) {
		t.Errorf("PodScheduled message of a non-owner %q does not name reservation %q", msg, owned)
	}
	if err := env.Client.Delete(t.Context(), stranger, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	owner := f.pod("owner", cpu("6"), func(p *corev1.Pod) { p.Labels = map[string]string{"app": "owner"} })
	if got := f.boundNode(owner); got != node {
		t.Errorf("owner pod bound to %s, want %s, the reservation's node", got, node)
	}
	f.eventually("the owner pod has no reservation-allocated annotation", func(ctx context.Context) (bool, error) {
		got := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(owner), got); err != nil {
			return false, err
		}
		return strings.Contains(got.Annotations[extension.AnnotationReservationAllocated], owned), nil
	})
	// Allocate-once (the default): the owner used it up.
	f.eventuallyReservation(owned, schedulingv1alpha1.ReservationSucceeded, node)

	// The remaining 4 cpus, held for 8 seconds: long enough for the pod below to be found unschedulable first,
	// even on a busy machine.
	expiring := f.reservation("expiring", "4", &metav1.Duration{Duration: 8 * time.Second})
	f.eventuallyReservation(expiring, schedulingv1alpha1.ReservationAvailable, node)
	late := f.pod("late", cpu("3"), nil)
	if msg := f.unschedulable(late); !strings.Contains(msg, fmt.Sprintf("held by reservation %q", expiring)) {
		t.Errorf("PodScheduled message %q does not name reservation %q", msg, expiring)
	}
	f.eventuallyReservation(expiring, schedulingv1alpha1.ReservationFailed, node)
	if got := f.boundNode(late); got != node {
		t.Errorf("pod bound to %s after the reservation expired, want %s", got, node)
	}
	after := transitions()
	if got, want := [3]float64{after[0] - before[0], after[1] - before[1], after[2] - before[2]}, [3]float64{2, 1, 1}; got != want {
		t.Errorf("koord_scheduler_reservation_transitions_total grew by %v (Available, Succeeded, Failed), want %v", got, want)
	}
}

// TestReservationPreAllocation: a pre-allocating Reservation is placed on the resources of a running owner pod
// (the node's free resources are not enough), the pod becomes its owner, and when the pod goes the Reservation
// keeps what it used: a stranger cannot take it, the next owner lands in it.
func TestReservationPreAllocation(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	node := f.node("a", "0", 0, nil)
	owner := func(p *corev1.Pod) { p.Labels = map[string]string{"app": "owner"} }

	// 8 of the node's 10 cpus are used by a running owner pod: 2 are free.
	first := f.pod("first", cpu("8"), owner)
	if got := f.boundNode(first); got != node {
		t.Fatalf("pod bound to %s, want %s", got, node)
	}
	pre := f.reservationWith("pre", "8", func(r *schedulingv1alpha1.Reservation) {
		r.Spec.PreAllocation = true
		r.Spec.AllocatePolicy = schedulingv1alpha1.ReservationAllocatePolicyRestricted
		r.Spec.AllocateOnce = new(false)
	})
	f.eventuallyReservation(pre, schedulingv1alpha1.ReservationAvailable, node)
	f.eventually("the running pod is not the pre-allocating Reservation's owner", func(ctx context.Context) (bool, error) {
		r := &schedulingv1alpha1.Reservation{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: pre}, r); err != nil {
			return false, err
		}
		return len(r.Status.CurrentOwners) == 1 && r.Status.CurrentOwners[0].Name == first.Name && r.Status.Allocated.Cpu().String() == "8", nil
	})

	// The running pod goes: the Reservation holds its 8 cpus.
	if err := env.Client.Delete(t.Context(), first, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	f.eventually("the Reservation still counts the deleted pod", func(ctx context.Context) (bool, error) {
		r := &schedulingv1alpha1.Reservation{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: pre}, r); err != nil {
			return false, err
		}
		return len(r.Status.CurrentOwners) == 0, nil
	})
	stranger := f.pod("stranger", cpu("3"), nil)
	if msg := f.unschedulable(stranger); !strings.Contains(msg, fmt.Sprintf("held by reservation %q", pre)) {
		t.Errorf("PodScheduled message of a non-owner %q does not name reservation %q", msg, pre)
	}
	next := f.pod("next", cpu("8"), owner)
	if got := f.boundNode(next); got != node {
		t.Errorf("the next owner bound to %s, want %s", got, node)
	}
}

// reservation creates a Reservation of cpus cpus on the test's nodes for pods labelled app=owner, with ttl
// when not nil, deleted when the test ends, and returns its name.
func (f *fixture) reservation(name, cpus string, ttl *metav1.Duration) string {
	f.t.Helper()
	return f.reservationWith(name, cpus, func(r *schedulingv1alpha1.Reservation) { r.Spec.TTL = ttl })
}

// reservationWith is reservation with the Reservation edited before it is created.
func (f *fixture) reservationWith(name, cpus string, edit func(*schedulingv1alpha1.Reservation)) string {
	f.t.Helper()
	r := &schedulingv1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Name: f.namespace + "-" + name},
		Spec: schedulingv1alpha1.ReservationSpec{
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace},
				Spec: corev1.PodSpec{
					SchedulerName: schedulerName,
					NodeSelector:  map[string]string{"test": f.label},
					Containers: []corev1.Container{{
						Name:      "main",
						Image:     "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: cpu(cpus)},
					}},
				},
			},
			Owners: []schedulingv1alpha1.ReservationOwner{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "owner"}}}},
		},
	}
	edit(r)
	if err := env.Client.Create(f.t.Context(), r); err != nil {
		f.t.Fatalf("create Reservation %s: %v", r.Name, err)
	}
	f.t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), r); err != nil && !apierrors.IsNotFound(err) {
			f.t.Errorf("delete Reservation %s: %v", r.Name, err)
		}
	})
	return r.Name
}

// eventuallyReservation waits until the Reservation is in phase on node.
func (f *fixture) eventuallyReservation(name string, phase schedulingv1alpha1.ReservationPhase, node string) {
	f.t.Helper()
	var last schedulingv1alpha1.ReservationStatus
	err := wait.PollUntilContextTimeout(f.t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		r := &schedulingv1alpha1.Reservation{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, r); err != nil {
			return false, err
		}
		last = r.Status
		return r.Status.Phase == phase && r.Status.NodeName == node, nil
	})
	if err != nil {
		f.t.Fatalf("Reservation %s did not reach %s on %s; its status: %+v: %v", name, phase, node, last, err)
	}
}
