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
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/pkg/sim"
)

func TestTimeline(t *testing.T) {
	every := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	tests := map[string]struct {
		tc   Scenario
		want []Action
	}{
		"services first, then arrivals in time order": {
			tc: Scenario{
				Duration: metav1.Duration{Duration: 10 * time.Hour},
				Services: []Service{{Name: "web"}, {Name: "api"}},
				Jobs: []Job{
					{Name: "late", Arrival: metav1.Duration{Duration: 5 * time.Hour}},
					{Name: "early", Arrival: metav1.Duration{Duration: time.Hour}},
					{Name: "now", Arrival: metav1.Duration{}},
				},
			},
			want: []Action{
				{At: 0, Kind: ActionStartService, Index: 0, Name: "web"},
				{At: 0, Kind: ActionStartService, Index: 1, Name: "api"},
				{At: 0, Kind: ActionStartJob, Index: 2, Name: "now-1"},
				{At: time.Hour, Kind: ActionStartJob, Index: 1, Name: "early-1"},
				{At: 5 * time.Hour, Kind: ActionStartJob, Index: 0, Name: "late-1"},
			},
		},
		"repeated arrivals stop at the duration": {
			tc: Scenario{
				Duration: metav1.Duration{Duration: 8 * time.Hour},
				Jobs: []Job{
					{Name: "hourly", Arrival: metav1.Duration{Duration: 2 * time.Hour}, Every: every(3 * time.Hour)},
					{Name: "once", Arrival: metav1.Duration{Duration: 5 * time.Hour}},
				},
			},
			want: []Action{
				{At: 2 * time.Hour, Kind: ActionStartJob, Index: 0, Name: "hourly-1"},
				{At: 5 * time.Hour, Kind: ActionStartJob, Index: 0, Name: "hourly-2"},
				{At: 5 * time.Hour, Kind: ActionStartJob, Index: 1, Name: "once-1"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.tc.Timeline()); diff != "" {
				t.Errorf("Timeline (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestUsageAnnotation checks that a diurnal peak given in the scenario's clock is where the simulated agents
// see it, whatever the simulated time the scenario starts at.
func TestUsageAnnotation(t *testing.T) {
	peak := 14 * time.Hour
	u := &Usage{
		CPU:    &Profile{Type: "diurnal", Base: ptr.To(resource.MustParse("2")), Amplitude: ptr.To(resource.MustParse("1")), Peak: &metav1.Duration{Duration: peak}},
		Memory: &Profile{Type: "constant", Value: ptr.To(resource.MustParse("1Gi"))},
	}
	tests := map[string]struct {
		tc         string // StartTime
		start      time.Time
		wantAtPeak time.Duration // since the start
	}{
		"midnight start at a Unix midnight": {tc: "00:00", start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), wantAtPeak: 14 * time.Hour},
		"06:00 start at an odd time":        {tc: "06:00", start: time.Date(2026, 1, 1, 17, 23, 11, 0, time.UTC), wantAtPeak: 8 * time.Hour},
		"16:00 start: the peak is the next day": {
			tc: "16:00", start: time.Date(2026, 3, 7, 9, 5, 0, 0, time.UTC), wantAtPeak: 22 * time.Hour,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &Scenario{StartTime: tc.tc}
			value, err := s.UsageAnnotation(u, tc.start)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := sim.ParseUsage(value)
			if err != nil {
				t.Fatalf("the agents reject %s: %v", value, err)
			}
			if got := parsed.CPU.At(tc.start.Add(tc.wantAtPeak), 0); math.Abs(got-3) > 1e-9 {
				t.Errorf("CPU at the scenario's %s = %v, want the peak 3 (annotation %s)", peak, got, value)
			}
			if got := parsed.CPU.At(tc.start.Add(tc.wantAtPeak+12*time.Hour), 0); math.Abs(got-1) > 1e-9 {
				t.Errorf("CPU 12h after the peak = %v, want the trough 1", got)
			}
			if got := parsed.Memory.At(tc.start, 0); got != 1<<30 {
				t.Errorf("memory = %v, want the constant 1Gi", got)
			}
		})
	}
	if v, err := (&Scenario{}).UsageAnnotation(nil, time.Unix(0, 0)); err != nil || v != "" {
		t.Errorf("UsageAnnotation(nil) = %q, %v; want empty", v, err)
	}
}
