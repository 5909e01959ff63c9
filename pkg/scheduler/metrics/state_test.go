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
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/scheduling/v1alpha1"
)

// TestState: the Reservation and gang gauges count what their sources hold at scrape time, under Koord's and
// Koordinator's names; without sources they export nothing.
func TestState(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	names := []string{"koord_scheduler_reservations", "koord_scheduler_gangs", "scheduler_reservation_status_phase", "scheduler_waiting_gang_group_number"}
	if n, err := testutil.GatherAndCount(reg, names...); err != nil || n != 0 {
		t.Errorf("without sources: %d series (%v), want none", n, err)
	}

	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for name, phase := range map[string]schedv1alpha1.ReservationPhase{"new": "", "r1": schedv1alpha1.ReservationAvailable, "r2": schedv1alpha1.ReservationAvailable, "old": schedv1alpha1.ReservationSucceeded} {
		r := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: schedv1alpha1.ReservationStatus{Phase: phase}}
		if err := indexer.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	m.ObserveReservations(schedlisters.NewReservationLister(indexer))
	m.ObserveGangs("koord-scheduler", func() map[string]int { return map[string]int{"Pending": 1, "Waiting": 2} })
	m.ObserveGangs("other", func() map[string]int { return map[string]int{"Pending": 0, "Waiting": 1} })

	want := `
# HELP koord_scheduler_gangs Gangs known to a profile's Coscheduling, by state: Pending (no member waits in Permit), Waiting (members wait in Permit for the rest), Satisfied (all there; binding or bound) or TimedOut (waited longer than the gang's wait time; backing off).
# TYPE koord_scheduler_gangs gauge
koord_scheduler_gangs{profile="koord-scheduler",state="Pending"} 1
koord_scheduler_gangs{profile="koord-scheduler",state="Waiting"} 2
koord_scheduler_gangs{profile="other",state="Pending"} 0
koord_scheduler_gangs{profile="other",state="Waiting"} 1
# HELP koord_scheduler_reservations Reservations by phase (Pending, Available, Waiting, Succeeded, Failed), from the scheduler's informer.
# TYPE koord_scheduler_reservations gauge
koord_scheduler_reservations{phase="Available"} 2
koord_scheduler_reservations{phase="Failed"} 0
koord_scheduler_reservations{phase="Pending"} 1
koord_scheduler_reservations{phase="Succeeded"} 1
koord_scheduler_reservations{phase="Waiting"} 0
# HELP scheduler_reservation_status_phase Koordinator's name: 1 for each Reservation in its current phase (Pending when it has none yet).
# TYPE scheduler_reservation_status_phase gauge
scheduler_reservation_status_phase{name="new",phase="Pending"} 1
scheduler_reservation_status_phase{name="old",phase="Succeeded"} 1
scheduler_reservation_status_phase{name="r1",phase="Available"} 1
scheduler_reservation_status_phase{name="r2",phase="Available"} 1
# HELP scheduler_waiting_gang_group_number Koordinator's name: gangs with members waiting in Permit for the rest, over every profile.
# TYPE scheduler_waiting_gang_group_number gauge
scheduler_waiting_gang_group_number 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}
