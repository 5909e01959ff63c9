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

package metrics

import (
	"maps"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/scheduling/v1alpha1"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// state exports, at every scrape, gauges of what the scheduler holds: Reservations by phase (from the
// informer's cache) and gangs by state (from each profile's Coscheduling cache). The plugins hand it their
// sources when they are built; until then it exports nothing for them.
type state struct {
	reservationsDesc, gangsDesc *prometheus.Desc
	// Koordinator's names for the same figures.
	reservationPhaseDesc, waitingGangsDesc *prometheus.Desc

	mu           sync.Mutex
	reservations schedlisters.ReservationLister
	// gangs are the census functions of the profiles' Coscheduling caches, by profile.
	gangs map[string]func() map[string]int
}

func newState() *state {
	name := func(n string) string {
		return prometheus.BuildFQName(koordmetrics.Namespace, koordmetrics.SubsystemScheduler, n)
	}
	return &state{
		reservationsDesc: prometheus.NewDesc(name("reservations"),
			"Reservations by phase (Pending, Available, Waiting, Succeeded, Failed), from the scheduler's informer.",
			[]string{"phase"}, nil),
		gangsDesc: prometheus.NewDesc(name("gangs"),
			"Gangs known to a profile's Coscheduling, by state: Pending (no member waits in Permit), Waiting "+
				"(members wait in Permit for the rest), Satisfied (all there; binding or bound) or TimedOut (waited "+
				"longer than the gang's wait time; backing off).",
			[]string{"profile", "state"}, nil),
		reservationPhaseDesc: prometheus.NewDesc("scheduler_reservation_status_phase",
			"Koordinator's name: 1 for each Reservation in its current phase (Pending when it has none yet).",
			[]string{"name", "phase"}, nil),
		waitingGangsDesc: prometheus.NewDesc("scheduler_waiting_gang_group_number",
			"Koordinator's name: gangs with members waiting in Permit for the rest, over every profile.",
			nil, nil),
		gangs: map[string]func() map[string]int{},
	}
}

// Describe implements prometheus.Collector.
func (s *state) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.reservationsDesc
	ch <- s.gangsDesc
	ch <- s.reservationPhaseDesc
	ch <- s.waitingGangsDesc
}

// Collect implements prometheus.Collector.
func (s *state) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	lister := s.reservations
	gangs := maps.Clone(s.gangs)
	s.mu.Unlock()

	if lister != nil {
		if list, err := lister.List(labels.Everything()); err == nil {
			byPhase := map[string]int{}
			for _, p := range reservationPhases {
				byPhase[string(p)] = 0
			}
			for _, r := range list {
				phase := string(r.Status.Phase)
				if phase == "" {
					phase = string(schedv1alpha1.ReservationPending)
				}
				byPhase[phase]++
				ch <- prometheus.MustNewConstMetric(s.reservationPhaseDesc, prometheus.GaugeValue, 1, r.Name, phase)
			}
			for phase, n := range byPhase {
				ch <- prometheus.MustNewConstMetric(s.reservationsDesc, prometheus.GaugeValue, float64(n), phase)
			}
		}
	}
	if len(gangs) > 0 {
		waiting := 0
		for _, profile := range slices.Sorted(maps.Keys(gangs)) {
			for st, n := range gangs[profile]() {
				ch <- prometheus.MustNewConstMetric(s.gangsDesc, prometheus.GaugeValue, float64(n), profile, st)
				if st == gangStateWaiting {
					waiting += n
				}
			}
		}
		ch <- prometheus.MustNewConstMetric(s.waitingGangsDesc, prometheus.GaugeValue, float64(waiting))
	}
}

// MetricInfos implements koordmetrics.SelfDescribing: the gauges exist only once the plugins hand their sources.
func (s *state) MetricInfos() ([]koordmetrics.Info, error) {
	return koordmetrics.GaugeInfos(s.reservationsDesc, s.gangsDesc, s.reservationPhaseDesc, s.waitingGangsDesc)
}

// gangStateWaiting is the state of gangs whose members wait in Permit; Coscheduling's cache names it so.
const gangStateWaiting = "Waiting"

// reservationPhases are the phases koord_scheduler_reservations always exports, 0 when no Reservation is in one.
var reservationPhases = []schedv1alpha1.ReservationPhase{
	schedv1alpha1.ReservationPending, schedv1alpha1.ReservationAvailable, schedv1alpha1.ReservationWaiting,
	schedv1alpha1.ReservationSucceeded, schedv1alpha1.ReservationFailed,
}

// ObserveReservations makes the Reservation gauges count the Reservations l lists. Every profile's
// Reservation plugin calls it with the same shared informer's lister; the last call wins.
func (m *Metrics) ObserveReservations(l schedlisters.ReservationLister) {
	m.state.mu.Lock()
	defer m.state.mu.Unlock()
	m.state.reservations = l
}

// ObserveGangs makes the gang gauges of profile count the gangs census counts by state (Pending, Waiting,
// Satisfied, TimedOut).
func (m *Metrics) ObserveGangs(profile string, census func() map[string]int) {
	m.state.mu.Lock()
	defer m.state.mu.Unlock()
	m.state.gangs[profile] = census
}
