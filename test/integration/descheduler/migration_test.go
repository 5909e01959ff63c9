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

package descheduler

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	"github.com/koord-dev/koord/pkg/descheduler/migration"
)

// succeededOn checks that job succeeded with the replacement pod on node, where its Reservation is.
func (f *fixture) succeededOn(j *schedv1alpha1.PodMigrationJob, replacement *corev1.Pod, node string) {
	f.t.Helper()
	if j.Status.Phase != schedv1alpha1.PodMigrationJobSucceeded {
		f.t.Fatalf("job %s ended %s/%s: %s\n%s", j.Name, j.Status.Phase, j.Status.Reason, j.Status.Message, f.describe())
	}
	if j.Status.PodRef == nil || j.Status.PodRef.UID != replacement.UID || j.Status.NodeName != node {
		f.t.Errorf("job status podRef %v nodeName %q, want pod %s on %s\n%s", j.Status.PodRef, j.Status.NodeName, replacement.Name, node, f.describe())
	}
	r := &schedv1alpha1.Reservation{}
	if err := f.c.Get(f.t.Context(), client.ObjectKey{Name: j.Spec.ReservationOptions.ReservationRef.Name}, r); err != nil {
		f.t.Fatal(err)
	}
	if r.Status.NodeName != node {
		f.t.Errorf("Reservation on %q, want %q", r.Status.NodeName, node)
	}
}

func TestReservationFirst(t *testing.T) {
	f := newFixture(t)
	a, b := f.node("a", "4"), f.node("b", "4")
	rs := f.deployment("web", 2)
	p0, _ := f.pod(rs, "web-0", a), f.pod(rs, "web-1", b)
	startScheduler(t)
	startController(t, testArgs())
	j := f.job(p0, "")
	replacement := f.replaceWhenGone(rs, p0, "web-2", "")
	done := f.waitFinished(j.Name)
	f.succeededOn(done, replacement, b)
}

// TestReplacedWithoutReservation: the replacement of the evicted pod is placed without the job's Reservation (as
// when several pods of one workload migrate at once and it takes another job's); once the workload has all its
// replicas scheduled the job ends Succeeded, reason ReplacedWithoutReservation, and its Reservation is deleted
// rather than held until the job's ttl.
func TestReplacedWithoutReservation(t *testing.T) {
	f := newFixture(t)
	a, b, c := f.node("a", "4"), f.node("b", "4"), f.node("c", "4")
	rs := f.deployment("web", 2)
	p0, _ := f.pod(rs, "web-0", a), f.pod(rs, "web-1", b)
	startScheduler(t)
	startController(t, testArgs())
	j := f.job(p0, "")
	f.waitGone(p0.DeepCopy())
	// Played by the test: the ReplicaSet's replacement, bound to c by something other than koord-scheduler.
	f.pod(rs, "web-2", c)
	done := f.waitFinished(j.Name)
	if done.Status.Phase != schedv1alpha1.PodMigrationJobSucceeded || done.Status.Reason != migration.ReasonReplacedWithoutReservation {
		t.Errorf("job ended %s/%s: %s, want Succeeded/%s", done.Status.Phase, done.Status.Reason, done.Status.Message,
			migration.ReasonReplacedWithoutReservation)
	}
	f.noReservations()
}

// TestReservationTaken: two pods of a workload migrate at once; the workload limiter holds back the second
// eviction, and meanwhile another pod of the workload (pinned to the held job's Reservation's node, whose CPU
// the Reservation holds) takes that Reservation. The job does not fail: it deletes the taken Reservation, makes
// a new one, evicts once the limiter allows, and succeeds with its replacement on the new Reservation's node.
func TestReservationTaken(t *testing.T) {
	f := newFixture(t)
	a := f.node("a", "6")
	b, c, d := f.node("b", "2"), f.node("c", "2"), f.node("d", "2")
	rs := f.deployment("web", 3)
	pods := []*corev1.Pod{f.pod(rs, "web-0", a), f.pod(rs, "web-1", a), f.pod(rs, "web-2", a)}
	startScheduler(t)
	startController(t, testArgs(func(a *config.MigrationControllerArgs) {
		a.MaxMigratingPerNode = ptr.To[int32](10)
		a.MaxMigratingPerWorkload = ptr.To(intstr.FromInt32(2))
		a.MaxUnavailablePerWorkload = ptr.To(intstr.FromInt32(2))
		a.ObjectLimiters = config.ObjectLimiterMap{config.MigrationLimitObjectWorkload: {
			Duration: metav1.Duration{Duration: 3 * time.Second}, MaxMigrating: ptr.To(intstr.FromInt32(1)),
		}}
	}))
	jobs := []*schedv1alpha1.PodMigrationJob{f.job(pods[0], ""), f.job(pods[1], "")}

	// One job evicts; the other is held back by the limiter with its Reservation available.
	var held *schedv1alpha1.PodMigrationJob
	var first int
	f.waitJob(jobs[0].Name, "held back with the other", func(*schedv1alpha1.PodMigrationJob) bool {
		for i, j := range jobs {
			got := &schedv1alpha1.PodMigrationJob{}
			if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(j), got); err != nil {
				return false
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == schedv1alpha1.PodMigrationJobConditionEviction && cond.Reason == "ObjectLimiter" && got.Status.NodeName != "" {
					held, first = got, 1-i
					return true
				}
			}
		}
		return false
	})
	taken := held.Spec.ReservationOptions.ReservationRef.Name
	// The first job's replacement can go only to its own Reservation's node: it must not take the held job's
	// Reservation itself (then the pod below could not fit, and stay pending), which both Reservations' owners
	// would allow.
	firstJob := &schedv1alpha1.PodMigrationJob{}
	if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(jobs[first]), firstJob); err != nil {
		t.Fatal(err)
	}
	if firstJob.Status.NodeName == "" || firstJob.Status.NodeName == held.Status.NodeName {
		t.Fatalf("the first job's Reservation is on %q, the held job's on %q: want two nodes", firstJob.Status.NodeName, held.Status.NodeName)
	}
	f.replaceWhenGone(rs, pods[first], "web-3", firstJob.Status.NodeName)

	// Another pod of the workload, which fits the held job's node only through its Reservation.
	sibling := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "web-4", Labels: rs.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
		Spec: f.podSpec(),
	}
	sibling.Spec.NodeSelector[corev1.LabelHostname] = held.Status.NodeName
	if err := f.c.Create(t.Context(), sibling); err != nil {
		t.Fatal(err)
	}
	var heldPod *corev1.Pod
	for _, p := range pods {
		if p.Name == held.Spec.PodRef.Name {
			heldPod = p
		}
	}
	replacement := f.replaceWhenGone(rs, heldPod, "web-5", "")
	done := f.waitFinished(held.Name)
	if done.Status.Phase != schedv1alpha1.PodMigrationJobSucceeded {
		t.Fatalf("job %s ended %s/%s: %s\n%s", done.Name, done.Status.Phase, done.Status.Reason, done.Status.Message, f.describe())
	}
	if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(sibling), sibling); err != nil {
		t.Fatal(err)
	}
	if sibling.Spec.NodeName != held.Status.NodeName {
		t.Errorf("the other pod is on %q, want %q, the taken Reservation's node", sibling.Spec.NodeName, held.Status.NodeName)
	}
	if got, want := done.Spec.ReservationOptions.ReservationRef.Name, taken+"-2"; got != want {
		t.Errorf("the job ended with Reservation %q, want the second one %q", got, want)
	}
	if done.Annotations[migration.AnnotationReservationAttempt] != "2" {
		t.Errorf("reservation attempt %q, want 2", done.Annotations[migration.AnnotationReservationAttempt])
	}
	if !slices.Contains([]string{b, c, d}, replacement.Spec.NodeName) || replacement.Spec.NodeName == held.Status.NodeName {
		t.Errorf("replacement on %q, want a node other than the taken Reservation's %q", replacement.Spec.NodeName, held.Status.NodeName)
	}
	if j := f.waitFinished(jobs[first].Name); j.Status.Phase != schedv1alpha1.PodMigrationJobSucceeded {
		t.Errorf("the first job ended %s/%s: %s", j.Status.Phase, j.Status.Reason, j.Status.Message)
	}
	if err := f.c.Get(t.Context(), client.ObjectKey{Name: taken}, &schedv1alpha1.Reservation{}); !apierrors.IsNotFound(err) {
		t.Errorf("the taken Reservation %s is still there: %v", taken, err)
	}
}

func TestReservationUnschedulable(t *testing.T) {
	f := newFixture(t)
	a := f.node("a", "4")
	f.node("b", "1") // too small for the pod's 2 cpus
	rs := f.deployment("web", 2)
	p0, _ := f.pod(rs, "web-0", a), f.pod(rs, "web-1", a)
	startScheduler(t)
	startController(t, testArgs())
	j := f.waitFinished(f.job(p0, "").Name)
	if j.Status.Phase != schedv1alpha1.PodMigrationJobFailed || j.Status.Reason != schedv1alpha1.PodMigrationJobReasonUnschedulable {
		t.Errorf("job ended %s/%s: %s, want Failed/Unschedulable", j.Status.Phase, j.Status.Reason, j.Status.Message)
	}
	pod := &corev1.Pod{}
	if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(p0), pod); err != nil || pod.UID != p0.UID || pod.DeletionTimestamp != nil {
		t.Errorf("pod was evicted: %v", err)
	}
	f.noReservations()
}

func TestEvictDirectly(t *testing.T) {
	f := newFixture(t)
	a := f.node("a", "4")
	rs := f.deployment("web", 2)
	p0, _ := f.pod(rs, "web-0", a), f.pod(rs, "web-1", a)
	startController(t, testArgs())
	j := f.waitFinished(f.job(p0, schedv1alpha1.PodMigrationJobModeEvictionDirectly).Name)
	if j.Status.Phase != schedv1alpha1.PodMigrationJobSucceeded {
		t.Fatalf("job ended %s/%s: %s", j.Status.Phase, j.Status.Reason, j.Status.Message)
	}
	if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(p0), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod still there: %v", err)
	}
	f.noReservations()
}

func TestMaxMigratingPerWorkload(t *testing.T) {
	f := newFixture(t)
	a := f.node("a", "8")
	rs := f.deployment("web", 3)
	pods := []*corev1.Pod{f.pod(rs, "web-0", a), f.pod(rs, "web-1", a), f.pod(rs, "web-2", a)}
	// EvictDirectly: each job runs until its pod is gone; the test replaces it and marks it ready before the
	// next may start (maxUnavailable 1 too).
	startController(t, testArgs(func(a *config.MigrationControllerArgs) {
		a.DefaultJobMode = string(schedv1alpha1.PodMigrationJobModeEvictionDirectly)
		a.MaxMigratingPerNode = ptr.To[int32](10)
		a.MaxMigratingPerWorkload = ptr.To(intstr.FromInt32(1))
	}))
	var jobs []string
	for _, p := range pods {
		jobs = append(jobs, f.job(p, "").Name)
	}
	passed := func(j *schedv1alpha1.PodMigrationJob) bool {
		return j.Annotations["descheduler.koordinator.sh/passed-arbitration"] == "true"
	}
	handled := map[string]bool{}
	for range pods {
		// Exactly one job not handled yet has passed arbitration: the others wait for its pod's replacement.
		var running string
		var heldBack *schedv1alpha1.PodMigrationJob
		f.waitJob(jobs[0], "", func(*schedv1alpha1.PodMigrationJob) bool {
			running, heldBack = "", nil
			n := 0
			for _, name := range jobs {
				j := &schedv1alpha1.PodMigrationJob{}
				if err := f.c.Get(t.Context(), client.ObjectKey{Name: name}, j); err != nil {
					return false
				}
				switch {
				case handled[name]:
				case passed(j):
					running = name
					n++
				case j.Status.Reason != "":
					heldBack = j
				}
			}
			if n > 1 {
				t.Fatalf("%d jobs of one 3-replica workload run at once", n)
			}
			return n == 1 && (heldBack != nil || len(handled) == len(jobs)-1)
		})
		if heldBack != nil && heldBack.Status.Reason != string(config.EvictionGateMaxMigratingPerWorkload) &&
			heldBack.Status.Reason != string(config.EvictionGateMaxUnavailablePerWorkload) {
			t.Errorf("job %s held back by %s: %s", heldBack.Name, heldBack.Status.Reason, heldBack.Status.Message)
		}
		j := f.waitFinished(running)
		handled[running] = true
		// The controller-manager's part: a new pod, bound and ready.
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: j.Spec.PodRef.Name}}
		f.waitGone(pod)
		f.pod(rs, pod.Name+"-new", a)
	}
	for _, name := range jobs {
		if j := f.waitFinished(name); j.Status.Phase != schedv1alpha1.PodMigrationJobSucceeded {
			t.Errorf("job %s ended %s/%s: %s", name, j.Status.Phase, j.Status.Reason, j.Status.Message)
		}
	}
}

func TestRestartMidJob(t *testing.T) {
	f := newFixture(t)
	a, b := f.node("a", "4"), f.node("b", "4")
	rs := f.deployment("web", 2)
	p0, _ := f.pod(rs, "web-0", a), f.pod(rs, "web-1", b)
	evictions := func() float64 {
		return counter(t, "koord_descheduler_pod_migration_evictions_total", map[string]string{"policy": "Eviction", "result": "success"})
	}
	koordinatorEvictions := func() float64 {
		// A job created by hand names no strategy.
		return counter(t, "descheduler_pods_evicted", map[string]string{"result": "success", "strategy": "", "namespace": f.ns, "node": a})
	}
	before, koordinatorBefore := evictions(), koordinatorEvictions()
	// Stop the first controller as soon as the job records its Reservation.
	stop := startController(t, testArgs())
	j := f.job(p0, "")
	f.waitJob(j.Name, "created its Reservation", func(j *schedv1alpha1.PodMigrationJob) bool {
		for _, c := range j.Status.Conditions {
			if c.Type == schedv1alpha1.PodMigrationJobConditionReservationCreated && c.Status == schedv1alpha1.PodMigrationJobConditionStatusTrue {
				return true
			}
		}
		return false
	})
	stop()
	// The scheduler starts only now, so that the Reservation is scheduled while the second controller runs.
	startScheduler(t)
	startController(t, testArgs())
	replacement := f.replaceWhenGone(rs, p0, "web-2", "")
	done := f.waitFinished(j.Name)
	f.succeededOn(done, replacement, b)
	if got := evictions() - before; got != 1 {
		t.Errorf("%v evictions, want 1", got)
	}
	if got := koordinatorEvictions() - koordinatorBefore; got != 1 {
		t.Errorf("%v evictions counted under Koordinator's descheduler_pods_evicted, want 1", got)
	}
	list := &schedv1alpha1.ReservationList{}
	if err := f.c.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range list.Items {
		if r.Spec.Template != nil && r.Spec.Template.Namespace == f.ns {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d Reservations, want the job's one", n)
	}
}

// TestRestartThenTimeout stops the controller while a job waits for its Reservation (no scheduler places it),
// starts another one, and checks that the job times out there, evicting nothing and leaving no Reservation.
func TestRestartThenTimeout(t *testing.T) {
	f := newFixture(t)
	a := f.node("a", "4")
	rs := f.deployment("web", 2)
	p0, _ := f.pod(rs, "web-0", a), f.pod(rs, "web-1", a)
	shortTTL := func(a *config.MigrationControllerArgs) { a.DefaultJobTTL = &metav1.Duration{Duration: 3 * time.Second} }
	stop := startController(t, testArgs(shortTTL))
	j := f.job(p0, "")
	f.waitJob(j.Name, "created its Reservation", func(j *schedv1alpha1.PodMigrationJob) bool {
		return slices.ContainsFunc(j.Status.Conditions, func(c schedv1alpha1.PodMigrationJobCondition) bool {
			return c.Type == schedv1alpha1.PodMigrationJobConditionReservationCreated && c.Status == schedv1alpha1.PodMigrationJobConditionStatusTrue
		})
	})
	stop()
	startController(t, testArgs(shortTTL))
	done := f.waitFinished(j.Name)
	if done.Status.Phase != schedv1alpha1.PodMigrationJobFailed || done.Status.Reason != schedv1alpha1.PodMigrationJobReasonTimeout {
		t.Errorf("job ended %s/%s: %s, want Failed/Timeout", done.Status.Phase, done.Status.Reason, done.Status.Message)
	}
	pod := &corev1.Pod{}
	if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(p0), pod); err != nil || pod.UID != p0.UID || pod.DeletionTimestamp != nil {
		t.Errorf("pod was evicted: %v", err)
	}
	f.noReservations()
}

// counter returns the value of the counter name with labels among the MigrationControllers' metrics (0 when
// absent).
func counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := migrationRegistry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
