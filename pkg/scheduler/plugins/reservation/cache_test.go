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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestCacheUpdateReservation(t *testing.T) {
	at := func(rv string, phase schedv1alpha1.ReservationPhase) *schedv1alpha1.Reservation {
		return edited(reservation("r1", "n1", utiltesting.Resources("cpu", "1", "example.com/gpu", "1"), byLabel("web")), func(r *schedv1alpha1.Reservation) {
			r.ResourceVersion = rv
			r.Status.Phase = phase
		})
	}
	type step struct {
		resv       *schedv1alpha1.Reservation
		wantPlaced bool
	}
	tests := map[string][]step{
		"an older Pending copy does not undo Bind's write": {
			{resv: at("5", schedv1alpha1.ReservationAvailable), wantPlaced: true},
			{resv: at("4", schedv1alpha1.ReservationPending), wantPlaced: true},
			{resv: at("6", schedv1alpha1.ReservationFailed), wantPlaced: false},
		},
		"newer versions apply": {
			{resv: at("5", schedv1alpha1.ReservationAvailable), wantPlaced: true},
			{resv: at("7", schedv1alpha1.ReservationSucceeded), wantPlaced: false},
			{resv: at("8", schedv1alpha1.ReservationAvailable), wantPlaced: true},
		},
		"being deleted holds nothing": {
			{resv: edited(at("5", schedv1alpha1.ReservationAvailable), func(r *schedv1alpha1.Reservation) { r.DeletionTimestamp = &metav1.Time{Time: utiltesting.Now} })},
		},
	}
	for name, steps := range tests {
		t.Run(name, func(t *testing.T) {
			c := cache.NewCache([]corev1.ResourceName{"example.com/gpu"})
			feed := plugins.NewFeed(func(r *schedv1alpha1.Reservation) {
				if err := c.UpdateReservation(r); err != nil {
					t.Error(err)
				}
			}, nil)
			for i, s := range steps {
				if err := feed.Update(s.resv); err != nil {
					t.Fatal(err)
				}
				if _, placed := c.Placed("r1"); placed != s.wantPlaced {
					t.Errorf("step %d: placed = %v, want %v", i, placed, s.wantPlaced)
				}
			}
			if snap := c.Snapshot(); len(snap.All()) > 0 {
				if diff := cmp.Diff("cpu=1", snap.All()[0].Held.String()); diff != "" {
					t.Errorf("held without the ignored resource (-want,+got):\n%s", diff)
				}
			}
		})
	}
}

func TestCacheReportsBadOwners(t *testing.T) {
	c := cache.NewCache(nil)
	r := reservation("r1", "n1", utiltesting.Resources("cpu", "1"), schedv1alpha1.ReservationOwner{LabelSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Like"}},
	}}, byLabel("web"))
	err := c.UpdateReservation(r)
	if err == nil {
		t.Fatal("a malformed owner selector gave no error")
	}
	if got := len(c.Snapshot().All()[0].Owners); got != 1 {
		t.Errorf("owners kept = %d, want the 1 valid entry", got)
	}
}
