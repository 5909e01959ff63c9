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

package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// The aimed kills: a component killed with SIGKILL at a chosen step of its work rather than at a random time,
// where a restart that loses or repeats the step would show.

// aimedReservations is how many Reservations killSchedulerPlacingReservations creates.
const aimedReservations = 24

// killSchedulerPlacingReservations creates Reservations and kills koord-scheduler's leader with SIGKILL as soon
// as a quarter of them are placed, while the others are still being scheduled and bound (the bind writes the
// Reservation's status, then deletes its reserve pod). It checks that every Reservation becomes Available on
// one node it keeps, that no reserve pod is left behind, and that each owner pod binds on its Reservation's
// node.
func killSchedulerPlacingReservations(ctx context.Context) (_ finding, err error) {
	leader, err := env.c.Leader("koord-scheduler")
	if err != nil {
		return finding{}, err
	}
	names := make([]string, aimedReservations)
	for i := range names {
		names[i] = fmt.Sprintf("aimed-resv-%d", i)
	}
	defer func() {
		bg := context.WithoutCancel(ctx)
		for _, n := range names {
			_ = env.kube.CoreV1().Pods(namespace).Delete(bg, n, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			_ = env.koord.SchedulingV1alpha1().Reservations().Delete(bg, n, metav1.DeleteOptions{})
		}
	}()

	w, err := watchReservations(ctx)
	if err != nil {
		return finding{}, err
	}
	defer w.Stop()
	// nodes holds, for each Reservation, every node its status named, in order: one, once placed.
	var (
		mu           sync.Mutex
		nodes        = map[string][]string{}
		placedAtKill = -1
		killErr      error
	)
	killed := make(chan struct{})
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		for ev := range w.ResultChan() {
			r, ok := ev.Object.(*schedv1alpha1.Reservation)
			if !ok || ev.Type == watch.Deleted || !slices.Contains(names, r.Name) || r.Status.NodeName == "" {
				continue
			}
			mu.Lock()
			if seen := nodes[r.Name]; len(seen) == 0 || seen[len(seen)-1] != r.Status.NodeName {
				nodes[r.Name] = append(seen, r.Status.NodeName)
			}
			kill := placedAtKill < 0 && len(nodes) >= aimedReservations/4
			if kill {
				placedAtKill = len(nodes)
			}
			mu.Unlock()
			if kill {
				killErr = env.c.Restart(ctx, leader)
				close(killed)
			}
		}
	}()

	// All at once, so that the scheduler has many in flight when the kill comes.
	start := time.Now()
	var (
		creates    sync.WaitGroup
		createErrs = make([]error, len(names))
	)
	for i, n := range names {
		creates.Go(func() {
			if _, err := env.koord.SchedulingV1alpha1().Reservations().Create(ctx, reservation(n), metav1.CreateOptions{}); err != nil {
				createErrs[i] = fmt.Errorf("create reservation %s: %w", n, err)
			}
		})
	}
	creates.Wait()
	if err := errors.Join(createErrs...); err != nil {
		return finding{}, err
	}
	select {
	case <-killed:
	case <-time.After(time.Minute):
		return finding{}, errors.New("no reservation was placed within a minute: koord-scheduler was not killed")
	}
	if killErr != nil {
		return finding{}, killErr
	}
	mu.Lock()
	detail := fmt.Sprintf("killed %s with %d of %d reservations placed", leader, placedAtKill, aimedReservations)
	mu.Unlock()

	checks := 1
	var errs []error
	if placedAtKill >= aimedReservations {
		errs = append(errs, fmt.Errorf("every reservation was placed before the kill: it hit no bind"))
	}
	checks += aimedReservations
	available := waitFor(ctx, 90*time.Second, "every reservation Available after the kill", func(ctx context.Context) (bool, error) {
		for _, n := range names {
			r, err := env.koord.SchedulingV1alpha1().Reservations().Get(ctx, n, metav1.GetOptions{})
			if err != nil || r.Status.Phase != schedv1alpha1.ReservationAvailable {
				return false, err
			}
		}
		return true, nil
	})
	if available != nil {
		return finding{checks: checks, detail: detail}, errors.Join(append(errs, available)...)
	}
	detail += fmt.Sprintf("; all Available %v after the first create", time.Since(start).Round(100*time.Millisecond))

	checks++
	errs = append(errs, waitFor(ctx, 30*time.Second, "no reserve pod of the aimed reservations left", func(ctx context.Context) (bool, error) {
		pods, err := env.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: extension.LabelReservePod + "=true"})
		if err != nil {
			return false, err
		}
		var left []string
		for _, p := range pods.Items {
			if slices.Contains(names, p.Labels[extension.LabelReservationName]) {
				left = append(left, p.Name)
			}
		}
		if len(left) > 0 {
			return false, fmt.Errorf("reserve pods %v", left)
		}
		return true, nil
	}))

	for _, n := range names {
		if _, err := env.kube.CoreV1().Pods(namespace).Create(ctx, reservedPod(n), metav1.CreateOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("create owner pod %s: %w", n, err))
		}
	}
	checks += 2 * aimedReservations
	errs = append(errs, waitFor(ctx, time.Minute, "every owner pod bound on its reservation's node", func(ctx context.Context) (bool, error) {
		for _, n := range names {
			r, err := env.koord.SchedulingV1alpha1().Reservations().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			p, err := env.kube.CoreV1().Pods(namespace).Get(ctx, n, metav1.GetOptions{})
			if err != nil || p.Spec.NodeName == "" {
				return false, err
			}
			if p.Spec.NodeName != r.Status.NodeName {
				return false, fmt.Errorf("pod %s bound on %s, its reservation is on %s", n, p.Spec.NodeName, r.Status.NodeName)
			}
		}
		return true, nil
	}))

	w.Stop()
	<-watching
	checks += aimedReservations
	for _, n := range names {
		if seen := nodes[n]; len(seen) > 1 {
			errs = append(errs, fmt.Errorf("reservation %s was placed on %s in turn", n, strings.Join(seen, ", then ")))
		}
	}
	return finding{checks: checks, detail: detail}, errors.Join(errs...)
}

// watchReservations watches every Reservation from now on, resuming after a dropped connection.
func watchReservations(ctx context.Context) (*watchtools.RetryWatcher, error) {
	list, err := env.koord.SchedulingV1alpha1().Reservations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return env.koord.SchedulingV1alpha1().Reservations().Watch(ctx, opts)
		},
	})
}

// killDeschedulerMigrating starts a ReservationFirst migration of a web pod and kills koord-descheduler with
// SIGKILL as soon as the job's Reservation is placed, when the eviction is about to start or under way. It
// checks that the restarted descheduler takes the job to its end, that the job's Reservation holds nothing
// afterwards, and that the web Deployment has every replica ready again.
func killDeschedulerMigrating(ctx context.Context) (_ finding, err error) {
	pods, err := env.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return finding{}, err
	}
	// The last bound one: the churn migrates the first.
	var pod *corev1.Pod
	for i := len(pods.Items) - 1; i >= 0 && pod == nil; i-- {
		if p := &pods.Items[i]; p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			pod = p
		}
	}
	if pod == nil {
		return finding{}, errors.New("no web pod bound to migrate")
	}
	job := &schedv1alpha1.PodMigrationJob{
		ObjectMeta: metav1.ObjectMeta{Name: "aimed-migration"},
		Spec: schedv1alpha1.PodMigrationJobSpec{PodRef: &corev1.ObjectReference{Namespace: namespace, Name: pod.Name},
			Mode: schedv1alpha1.PodMigrationJobModeReservationFirst, TTL: &metav1.Duration{Duration: 2 * time.Minute}},
	}
	jobs := env.koord.SchedulingV1alpha1().PodMigrationJobs()
	list, err := jobs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return finding{}, err
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = "metadata.name=" + job.Name
			return jobs.Watch(ctx, opts)
		},
	})
	if err != nil {
		return finding{}, err
	}
	defer w.Stop()
	if job, err = jobs.Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return finding{}, err
	}
	defer func() { _ = jobs.Delete(context.WithoutCancel(ctx), job.Name, metav1.DeleteOptions{}) }()

	// Kill at the first status that has the Reservation placed.
	var atKill *schedv1alpha1.PodMigrationJob
	timeout := time.After(time.Minute)
	for atKill == nil {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return finding{}, errors.New("the watch of the PodMigrationJob ended")
			}
			j, ok := ev.Object.(*schedv1alpha1.PodMigrationJob)
			if !ok {
				continue
			}
			if c := jobCondition(j, schedv1alpha1.PodMigrationJobConditionReservationScheduled); c != nil && c.Status == schedv1alpha1.PodMigrationJobConditionStatusTrue {
				atKill = j
			} else if jobEnded(j) {
				return finding{}, fmt.Errorf("the PodMigrationJob ended %s before its Reservation was placed: %s", j.Status.Phase, j.Status.Message)
			}
		case <-timeout:
			return finding{}, errors.New("the PodMigrationJob's Reservation was not placed within a minute: koord-descheduler was not killed")
		case <-ctx.Done():
			return finding{}, ctx.Err()
		}
	}
	start := time.Now()
	if err := env.c.Restart(ctx, "koord-descheduler"); err != nil {
		return finding{}, err
	}
	eviction := "not started"
	if c := jobCondition(atKill, schedv1alpha1.PodMigrationJobConditionEviction); c != nil {
		eviction = fmt.Sprintf("%s (%s)", c.Status, c.Reason)
	}
	detail := "killed with the Reservation placed, eviction " + eviction

	checks := 1
	var errs []error
	var end *schedv1alpha1.PodMigrationJob
	err = waitFor(ctx, 2*time.Minute, "the PodMigrationJob ended after the restart", func(ctx context.Context) (bool, error) {
		j, err := jobs.Get(ctx, job.Name, metav1.GetOptions{})
		end = j
		return err == nil && jobEnded(j), err
	})
	if err != nil {
		return finding{checks: checks, detail: detail}, err
	}
	detail += fmt.Sprintf("; %s %v after the kill (%s)", end.Status.Phase, time.Since(start).Round(100*time.Millisecond), end.Status.Message)

	checks++
	if ref := end.Spec.ReservationOptions; ref != nil && ref.ReservationRef != nil {
		errs = append(errs, waitFor(ctx, 30*time.Second, "the job's Reservation "+ref.ReservationRef.Name+" holding nothing", func(ctx context.Context) (bool, error) {
			r, err := env.koord.SchedulingV1alpha1().Reservations().Get(ctx, ref.ReservationRef.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			if r.Status.Phase == schedv1alpha1.ReservationAvailable || r.Status.Phase == schedv1alpha1.ReservationPending || r.Status.Phase == "" {
				return false, fmt.Errorf("phase %q", r.Status.Phase)
			}
			return true, nil
		}))
	} else {
		errs = append(errs, errors.New("the job names no Reservation"))
	}
	if end.Status.Phase == schedv1alpha1.PodMigrationJobSucceeded {
		checks++
		if p, err := env.kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{}); err == nil && p.UID == pod.UID && p.DeletionTimestamp == nil {
			errs = append(errs, fmt.Errorf("the job succeeded and its pod %s was not evicted", pod.Name))
		}
	}
	checks++
	errs = append(errs, waitFor(ctx, time.Minute, "every replica of the web Deployment ready", func(ctx context.Context) (bool, error) {
		d, err := env.kube.AppsV1().Deployments(namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		return d.Status.ObservedGeneration == d.Generation && d.Status.ReadyReplicas == want && d.Status.Replicas == want, nil
	}))
	return finding{checks: checks, detail: detail}, errors.Join(errs...)
}

// jobEnded tells whether job reached a final phase.
func jobEnded(job *schedv1alpha1.PodMigrationJob) bool {
	switch job.Status.Phase {
	case schedv1alpha1.PodMigrationJobSucceeded, schedv1alpha1.PodMigrationJobFailed, schedv1alpha1.PodMigrationJobAborted:
		return true
	}
	return false
}

// jobCondition returns the condition t of job, nil when it has none (or job is nil).
func jobCondition(job *schedv1alpha1.PodMigrationJob, t schedv1alpha1.PodMigrationJobConditionType) *schedv1alpha1.PodMigrationJobCondition {
	if job == nil {
		return nil
	}
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == t {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}
