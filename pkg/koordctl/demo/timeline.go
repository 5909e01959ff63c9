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
	"slices"
	"strconv"
	"time"

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
