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

package v1

import (
	"k8s.io/utils/ptr"
)

// Defaults of ReservationArgs (Koordinator's).
const (
	// DefaultReservationMinCandidateNodesPercentage is the default MinCandidateNodesPercentage.
	DefaultReservationMinCandidateNodesPercentage int32 = 10
	// DefaultReservationMinCandidateNodesAbsolute is the default MinCandidateNodesAbsolute.
	DefaultReservationMinCandidateNodesAbsolute int32 = 100
	// DefaultReservationControllerWorkers is the default ControllerWorkers.
	DefaultReservationControllerWorkers int32 = 1
	// DefaultReservationGCDurationSeconds is the default GCDurationSeconds: one day.
	DefaultReservationGCDurationSeconds int64 = 86400
	// DefaultReservationGCIntervalSeconds is the default GCIntervalSeconds.
	DefaultReservationGCIntervalSeconds int64 = 60
	// DefaultReservationResyncIntervalSeconds is the default ResyncIntervalSeconds.
	DefaultReservationResyncIntervalSeconds int64 = 60
)

// SetDefaults_ReservationArgs fills in the defaults of ReservationArgs: no preemption by reserve pods,
// candidate nodes 10% / 100, one controller worker, Succeeded and Failed Reservations deleted after a day,
// looked for every 60 s, and every Reservation re-checked every 60 s.
func SetDefaults_ReservationArgs(obj *ReservationArgs) {
	if obj.EnablePreemption == nil {
		obj.EnablePreemption = ptr.To(false)
	}
	if obj.MinCandidateNodesPercentage == nil {
		obj.MinCandidateNodesPercentage = ptr.To(DefaultReservationMinCandidateNodesPercentage)
	}
	if obj.MinCandidateNodesAbsolute == nil {
		obj.MinCandidateNodesAbsolute = ptr.To(DefaultReservationMinCandidateNodesAbsolute)
	}
	if obj.ControllerWorkers == nil {
		obj.ControllerWorkers = ptr.To(DefaultReservationControllerWorkers)
	}
	if obj.GCDurationSeconds == 0 {
		obj.GCDurationSeconds = DefaultReservationGCDurationSeconds
	}
	if obj.GCIntervalSeconds == nil {
		obj.GCIntervalSeconds = ptr.To(DefaultReservationGCIntervalSeconds)
	}
	if obj.ResyncIntervalSeconds == nil {
		obj.ResyncIntervalSeconds = ptr.To(DefaultReservationResyncIntervalSeconds)
	}
}
