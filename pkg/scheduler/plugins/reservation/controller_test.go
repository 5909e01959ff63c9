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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// reconcile runs the controller once for the reservation name and returns when it asks to look again.
func (f *fixture) reconcile(t *testing.T, name string) time.Duration {
	t.Helper()
	after, err := f.plugin.reconcile(f.Ctx, name)
	if err != nil {
		t.Fatalf("reconcile(%s): %v", name, err)
	}
	return after
}

// get reads the reservation from the fake API.
func (f *fixture) get(t *testing.T, name string) *schedv1alpha1.Reservation {
	t.Helper()
	r, err := f.Koord.SchedulingV1alpha1().Reservations().Get(f.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get reservation %s: %v", name, err)
	}
	return r
}

// synced waits until the plugin's lister has the reservation's current resourceVersion.
func (f *fixture) synced(t *testing.T, name string) {
	t.Helper()
	want := f.get(t, name).ResourceVersion
	plugintest.Eventually(t, func() bool {
		r, err := f.plugin.reservationLister.Get(name)
		return err == nil && r.ResourceVersion == want
	})
}

// conditionOf summarizes the reservation's condition of type ct as "Status/Reason: Message".
func conditionOf(r *schedv1alpha1.Reservation, ct schedv1alpha1.ReservationConditionType) string {
	c := getCondition(r.Status.Conditions, ct)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason + ": " + c.Message
}

func TestControllerReservePod(t *testing.T) {
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{reservation("r1", "", utiltesting.Resources("cpu", "1"), byLabel("web"))}, nil, nil)
	f.reconcile(t, "r1")
	pod, err := f.Kube.CoreV1().Pods(DefaultReservePodNamespace).Get(f.Ctx, "r1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reserve pod: %v", err)
	}
	if !extension.IsReservePod(pod) || pod.Labels[extension.LabelReservationUID] != "r1" {
		t.Errorf("reserve pod labels = %v", pod.Labels)
	}

	// The scheduler cannot place it: the reservation says why.
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu."}}
	if _, err := f.Kube.CoreV1().Pods(pod.Namespace).UpdateStatus(f.Ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	plugintest.Eventually(t, func() bool {
		p, err := f.plugin.pods.Pods(pod.Namespace).Get("r1")
		return err == nil && len(p.Status.Conditions) == 1
	})
	f.synced(t, "r1")
	f.reconcile(t, "r1")
	got := f.get(t, "r1")
	want := []string{"Pending", "False/Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."}
	if diff := cmp.Diff(want, []string{string(got.Status.Phase), conditionOf(got, schedv1alpha1.ReservationConditionScheduled)}); diff != "" {
		t.Errorf("pending reservation (-want,+got):\n%s", diff)
	}

	// Reservation deleted: its reserve pod goes.
	if err := f.Koord.SchedulingV1alpha1().Reservations().Delete(f.Ctx, "r1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	plugintest.Eventually(t, func() bool { _, err := f.plugin.reservationLister.Get("r1"); return apierrors.IsNotFound(err) })
	f.reconcile(t, "r1")
	if _, err := f.Kube.CoreV1().Pods(pod.Namespace).Get(f.Ctx, "r1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("stray reserve pod: %v", err)
	}
}

func TestControllerStatus(t *testing.T) {
	owner := allocating(utiltesting.MakePod("web-0").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Node("n1").Obj(), "r1")
	n1 := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8")).Obj()
	tests := map[string]struct {
		resv *schedv1alpha1.Reservation
		// deleteOwner deletes the owner pod after the first reconcile.
		deleteOwner   bool
		wantPhase     schedv1alpha1.ReservationPhase
		wantOwners    []string
		wantAllocated corev1.ResourceList
		wantReady     string
		wantCached    bool
	}{
		"allocate once: Succeeded after the first owner": {
			resv:          reservation("r1", "n1", utiltesting.Resources("cpu", "2"), byLabel("web")),
			wantPhase:     schedv1alpha1.ReservationSucceeded,
			wantOwners:    []string{"default/web-0"},
			wantAllocated: utiltesting.Resources("cpu", "1"),
			wantReady:     "False/Succeeded: Reservation is allocated by pod default/web-0",
		},
		"multi-use stays Available": {
			resv:          edited(reservation("r1", "n1", utiltesting.Resources("cpu", "2"), byLabel("web")), multiUse),
			wantPhase:     schedv1alpha1.ReservationAvailable,
			wantOwners:    []string{"default/web-0"},
			wantAllocated: utiltesting.Resources("cpu", "1"),
			wantCached:    true,
		},
		"owner deleted releases": {
			resv:        edited(reservation("r1", "n1", utiltesting.Resources("cpu", "2"), byLabel("web")), multiUse),
			deleteOwner: true,
			wantPhase:   schedv1alpha1.ReservationAvailable,
			wantCached:  true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, []*schedv1alpha1.Reservation{tc.resv}, []*corev1.Node{n1}, []*corev1.Pod{owner})
			f.reconcile(t, "r1")
			if tc.deleteOwner {
				if err := f.Kube.CoreV1().Pods("default").Delete(f.Ctx, "web-0", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				plugintest.Eventually(t, func() bool { return f.view("r1").Owners == 0 })
				f.synced(t, "r1")
				f.reconcile(t, "r1")
			}
			got := f.get(t, "r1")
			var owners []string
			for _, o := range got.Status.CurrentOwners {
				owners = append(owners, o.Namespace+"/"+o.Name)
			}
			if diff := cmp.Diff(tc.wantPhase, got.Status.Phase); diff != "" {
				t.Errorf("phase (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOwners, owners); diff != "" {
				t.Errorf("currentOwners (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAllocated, got.Status.Allocated); diff != "" {
				t.Errorf("allocated (-want,+got):\n%s", diff)
			}
			if tc.wantReady != "" {
				if diff := cmp.Diff(tc.wantReady, conditionOf(got, schedv1alpha1.ReservationConditionReady)); diff != "" {
					t.Errorf("Ready (-want,+got):\n%s", diff)
				}
			}
			if _, cached := f.plugin.cache.Placed("r1"); cached != tc.wantCached {
				t.Errorf("held in cache = %v, want %v", cached, tc.wantCached)
			}
		})
	}
}

func TestControllerRebuildsAllocationsOnStart(t *testing.T) {
	owners := []*corev1.Pod{
		allocating(utiltesting.MakePod("web-0").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "1")).Node("n1").Obj(), "r1"),
		allocating(utiltesting.MakePod("web-1").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "500m")).Node("n1").Obj(), "r1"),
		// Not bound yet: its allocation was only assumed by the scheduler that stopped.
		allocating(utiltesting.MakePod("web-2").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "500m")).Obj(), "r1"),
	}
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{edited(reservation("r1", "n1", utiltesting.Resources("cpu", "4"), byLabel("web")), multiUse)}, []*corev1.Node{utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8")).Obj()}, owners)
	plugintest.Eventually(t, func() bool { return f.view("r1").Owners == 2 })
	if diff := cmp.Diff(resvView{Allocated: "cpu=1500m", Held: "cpu=2500m", Owners: 2}, f.view("r1")); diff != "" {
		t.Errorf("rebuilt reservation (-want,+got):\n%s", diff)
	}
}

func TestControllerExpiry(t *testing.T) {
	tests := map[string]struct {
		resv      *schedv1alpha1.Reservation
		wantAfter time.Duration
		step      time.Duration
		wantPhase schedv1alpha1.ReservationPhase
		wantReady string
	}{
		"ttl": {
			resv:      edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1"), byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Spec.TTL = &metav1.Duration{Duration: time.Hour} }),
			wantAfter: time.Hour,
			step:      time.Hour,
			wantPhase: schedv1alpha1.ReservationFailed,
			wantReady: "False/Expired: Reservation expired at 2026-07-01T13:00:00Z",
		},
		"expires wins over ttl": {
			resv: edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1"), byLabel("web")), func(r *schedv1alpha1.Reservation) {
				r.Spec.Expires = &metav1.Time{Time: utiltesting.Now.Add(10 * time.Minute)}
			}),
			wantAfter: 10 * time.Minute,
			step:      10 * time.Minute,
			wantPhase: schedv1alpha1.ReservationFailed,
			wantReady: "False/Expired: Reservation expired at 2026-07-01T12:10:00Z",
		},
		"ttl 0 never expires": {
			resv:      edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1"), byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Spec.TTL = &metav1.Duration{} }),
			step:      1000 * time.Hour,
			wantPhase: schedv1alpha1.ReservationAvailable,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, []*schedv1alpha1.Reservation{tc.resv}, []*corev1.Node{utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8")).Obj()}, nil)
			if diff := cmp.Diff(tc.wantAfter, f.reconcile(t, "r1")); diff != "" {
				t.Errorf("requeue after (-want,+got):\n%s", diff)
			}
			f.Clock.Step(tc.step)
			f.reconcile(t, "r1")
			got := f.get(t, "r1")
			if diff := cmp.Diff([]string{string(tc.wantPhase), tc.wantReady}, []string{string(got.Status.Phase), conditionOf(got, schedv1alpha1.ReservationConditionReady)}); diff != "" {
				t.Errorf("status (-want,+got):\n%s", diff)
			}
			_, held := f.plugin.cache.Placed("r1")
			if want := tc.wantPhase == schedv1alpha1.ReservationAvailable; held != want {
				t.Errorf("held in cache = %v, want %v", held, want)
			}
		})
	}
}

func TestControllerExpiryDeletesReservePod(t *testing.T) {
	r := edited(reservation("r1", "", utiltesting.Resources("cpu", "1"), byLabel("web")), func(r *schedv1alpha1.Reservation) { r.Spec.TTL = &metav1.Duration{Duration: time.Minute} })
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{r}, nil, nil)
	f.reconcile(t, "r1")
	plugintest.Eventually(t, func() bool { _, err := f.plugin.pods.Pods(DefaultReservePodNamespace).Get("r1"); return err == nil })
	f.synced(t, "r1")
	f.Clock.Step(time.Minute)
	f.reconcile(t, "r1")
	if got := f.get(t, "r1").Status.Phase; got != schedv1alpha1.ReservationFailed {
		t.Errorf("phase = %s, want Failed", got)
	}
	if _, err := f.Kube.CoreV1().Pods(DefaultReservePodNamespace).Get(f.Ctx, "r1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("reserve pod of an expired reservation: %v", err)
	}
}

func TestControllerNodeDeleted(t *testing.T) {
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{reservation("r1", "gone", utiltesting.Resources("cpu", "1"), byLabel("web"))}, []*corev1.Node{utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "8")).Obj()}, nil)
	f.reconcile(t, "r1")
	got := f.get(t, "r1")
	if diff := cmp.Diff([]string{"Failed", "False/NodeDeleted: node gone was deleted"}, []string{string(got.Status.Phase), conditionOf(got, schedv1alpha1.ReservationConditionReady)}); diff != "" {
		t.Errorf("status (-want,+got):\n%s", diff)
	}
}

func TestControllerGC(t *testing.T) {
	ended := edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1"), byLabel("web")), func(r *schedv1alpha1.Reservation) {
		r.Status.Phase = schedv1alpha1.ReservationSucceeded
		r.Status.Conditions = []schedv1alpha1.ReservationCondition{{
			Type: schedv1alpha1.ReservationConditionReady, Status: schedv1alpha1.ConditionStatusFalse, Reason: schedv1alpha1.ReasonReservationSucceeded,
			LastTransitionTime: metav1.NewTime(utiltesting.Now.Add(-time.Hour)),
		}}
	})
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{ended}, nil, nil)
	if diff := cmp.Diff(23*time.Hour, f.reconcile(t, "r1")); diff != "" {
		t.Errorf("requeue after (-want,+got):\n%s", diff)
	}
	f.get(t, "r1")
	f.Clock.Step(23 * time.Hour)
	f.reconcile(t, "r1")
	if _, err := f.Koord.SchedulingV1alpha1().Reservations().Get(f.Ctx, "r1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("reservation after gcDurationSeconds: %v", err)
	}
}

// TestControllerGCDisabled: with disableGarbageCollection an ended Reservation is kept past gcDurationSeconds.
func TestControllerGCDisabled(t *testing.T) {
	ended := edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1"), byLabel("web")), func(r *schedv1alpha1.Reservation) {
		r.Status.Phase = schedv1alpha1.ReservationFailed
		r.Status.Conditions = []schedv1alpha1.ReservationCondition{{
			Type: schedv1alpha1.ReservationConditionReady, Status: schedv1alpha1.ConditionStatusFalse, Reason: schedv1alpha1.ReasonReservationExpired,
			LastTransitionTime: metav1.NewTime(utiltesting.Now.Add(-48 * time.Hour)),
		}}
	})
	args := plugintest.Args[config.ReservationArgs](t, func(a *configv1.ReservationArgs) { a.DisableGarbageCollection = true })
	f := newFixture(t, args, []*schedv1alpha1.Reservation{ended}, nil, nil)
	if got := f.reconcile(t, "r1"); got != 0 {
		t.Errorf("requeue after %s, want none", got)
	}
	if _, err := f.Koord.SchedulingV1alpha1().Reservations().Get(f.Ctx, "r1", metav1.GetOptions{}); err != nil {
		t.Errorf("reservation with garbage collection off: %v", err)
	}
}

func TestControllerDoesNotRecreateAfterBind(t *testing.T) {
	r := reservation("r1", "", utiltesting.Resources("cpu", "1"), byLabel("web"))
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{r}, nil, nil)
	// Bind placed the reservation and deleted its pod; the informer still has the Pending copy.
	placed := f.get(t, "r1")
	placed.Status.NodeName, placed.Status.Phase = "n1", schedv1alpha1.ReservationAvailable
	if _, err := f.Koord.SchedulingV1alpha1().Reservations().UpdateStatus(f.Ctx, placed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.plugin.ensureReservePod(f.Ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Kube.CoreV1().Pods(DefaultReservePodNamespace).Get(f.Ctx, "r1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("reserve pod recreated for a placed reservation: %v", err)
	}
}
