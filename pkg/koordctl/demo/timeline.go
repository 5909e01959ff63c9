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

package demo

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/pkg/sim"
)

// ActionKind names what an Action of the timeline does.
type ActionKind string

// Action kinds.
const (
	// ActionStartService creates the pods of a service.
	ActionStartService ActionKind = "StartService"
	// ActionStartJob starts a run of a job.
	ActionStartJob ActionKind = "StartJob"
)

// Action is one step of a scenario's timeline.
type Action struct {
	// At is when the action is due, counted from the scenario's start, in simulated time.
	At time.Duration
	// Kind is what the action does.
	Kind ActionKind
	// Index is the service's or job's index in the scenario.
	Index int
	// Name is the service's name, or the job run's: <job>-<n> for its n-th arrival, from 1.
	Name string
}

// Timeline returns the actions of s in the order they are due: the services at the start, in their order,
// then each arrival of each job; actions due at the same time keep the scenario's order.
func (s *Scenario) Timeline() []Action {
	var actions []Action
	for i, svc := range s.Services {
		actions = append(actions, Action{At: 0, Kind: ActionStartService, Index: i, Name: svc.Name})
	}
	for i, j := range s.Jobs {
		n := 1
		for at := j.Arrival.Duration; at < s.Duration.Duration; n++ {
			actions = append(actions, Action{At: at, Kind: ActionStartJob, Index: i, Name: j.Name + "-" + strconv.Itoa(n)})
			if j.Every == nil || j.Every.Duration <= 0 {
				break
			}
			at += j.Every.Duration
		}
	}
	slices.SortStableFunc(actions, func(a, b Action) int { return cmp.Compare(a.At, b.At) })
	return actions
}

// UsageAnnotation returns the sim.koord.dev/usage value for u in a scenario that starts at simulated time
// start, "" for nil. The simulated agents place a diurnal peak in the Unix epoch's clock; the scenario places it
// in its own, whose day begins StartOfDay before start. Each diurnal peak is moved so that it falls at its time
// in the scenario's clock.
func (s *Scenario) UsageAnnotation(u *Usage, start time.Time) (string, error) {
	if u == nil {
		return "", nil
	}
	shifted := Usage{CPU: s.shiftPeak(u.CPU, start), Memory: s.shiftPeak(u.Memory, start)}
	value, err := json.Marshal(shifted)
	if err != nil {
		return "", fmt.Errorf("encode usage: %w", err)
	}
	return string(value), nil
}

// shiftPeak returns p with its diurnal peak moved from the scenario's clock to the Unix epoch's (see
// UsageAnnotation).
func (s *Scenario) shiftPeak(p *Profile, start time.Time) *Profile {
	if p == nil || p.Type != string(sim.ProfileDiurnal) {
		return p
	}
	period := sim.DefaultPeriod
	if p.Period != nil {
		period = p.Period.Duration
	}
	var peak time.Duration
	if p.Peak != nil {
		peak = p.Peak.Duration
	}
	// Scenario time x corresponds to simulated Unix time x + offset, so a peak at x is at x + offset there.
	offset := time.Duration(start.UnixNano()) - s.StartOfDay()
	shifted := (peak + offset%period) % period
	if shifted < 0 {
		shifted += period
	}
	c := *p
	c.Peak = &metav1.Duration{Duration: shifted}
	return &c
}

// PodView is what the cluster says of one pod of a job run.
type PodView struct {
	// Phase is the pod's phase.
	Phase corev1.PodPhase
	// Terminating tells that the pod is being deleted (e.g. evicted).
	Terminating bool
}

// jobRun is one arrival of a job, run like a Job controller would: it keeps Parallelism pods going until Count
// have completed, completes a pod once it has run for RunDuration, and replaces pods that were lost (evicted,
// deleted or failed).
type jobRun struct {
	name string
	job  *Job
	// started is when the run arrived, in simulated time.
	started time.Time
	// next is the index of the next pod to create.
	next int
	// pods are the pods created and not finished, by name.
	pods map[string]*runPod
	// succeeded and lost count the pods that completed and those lost.
	succeeded, lost int
}

// runPod is what a run remembers of one of its pods.
type runPod struct {
	// seen tells that the cluster has shown the pod, so that its absence means it is gone.
	seen bool
	// runningSince is when the pod was first seen Running; zero before.
	runningSince time.Time
}

// newJobRun returns the run name of job, arrived at now.
func newJobRun(name string, job *Job, now time.Time) *jobRun {
	return &jobRun{name: name, job: job, started: now, pods: map[string]*runPod{}}
}

// done reports whether Count pods have completed.
func (r *jobRun) done() bool { return r.succeeded >= r.job.Count }

// plan looks at the run's pods at now through lookup (false for a pod the cluster does not have) and returns
// the pods that have run for RunDuration and are to complete now, and the names of the pods to create so that
// Parallelism run, within what Count still needs. A pod that was seen and is gone, terminating or failed counts
// as lost and is replaced. Call created and completed with the outcome of each.
func (r *jobRun) plan(now time.Time, lookup func(name string) (PodView, bool)) (complete, create []string) {
	for _, name := range slices.Sorted(maps.Keys(r.pods)) {
		p := r.pods[name]
		v, ok := lookup(name)
		switch {
		case !ok && !p.seen:
			// Created but not in the cache yet.
			continue
		case !ok || v.Terminating || v.Phase == corev1.PodFailed:
			delete(r.pods, name)
			r.lost++
			continue
		}
		p.seen = true
		switch v.Phase {
		case corev1.PodSucceeded:
			delete(r.pods, name)
			r.succeeded++
		case corev1.PodRunning:
			if p.runningSince.IsZero() {
				p.runningSince = now
			}
			if now.Sub(p.runningSince) >= r.job.RunDuration.Duration {
				complete = append(complete, name)
			}
		}
	}
	active := len(r.pods) - len(complete)
	remaining := r.job.Count - r.succeeded - len(complete) - active
	for range max(0, min(r.job.Parallelism-active, remaining)) {
		create = append(create, r.name+"-"+strconv.Itoa(r.next))
		r.next++
	}
	return complete, create
}

// created records that pod name was created.
func (r *jobRun) created(name string) { r.pods[name] = &runPod{} }

// completed records that pod name was made to complete.
func (r *jobRun) completed(name string) {
	if _, ok := r.pods[name]; ok {
		delete(r.pods, name)
		r.succeeded++
	}
}
