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

package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CoschedulingArgs configures the Coscheduling (gang scheduling) plugin. Defaults are applied to the versioned
// type before conversion, so every field here holds its effective value.
type CoschedulingArgs struct {
	metav1.TypeMeta

	// DefaultTimeout is how long the members of a gang wait in Permit for the rest of the gang when neither
	// the gang's waiting-time annotation nor its PodGroup's scheduleTimeoutSeconds says otherwise.
	DefaultTimeout metav1.Duration
	// ControllerWorkers is the number of workers that write PodGroup status and mark timed-out pods.
	ControllerWorkers int64
	// SkipCheckScheduleCycle turns off the schedule-cycle check of Strict gangs: a member is then tried even
	// when another member failed in the gang's current cycle.
	SkipCheckScheduleCycle bool
	// EnablePreemption turns on job-level preemption: a member of a gang that finds no node preempts pods of
	// lower priority for every pending member of its gang group at once, or for none.
	EnablePreemption bool
	// AwareNetworkTopology places gangs whose PodGroup (or pods) carry a network topology spec in the fewest,
	// tightest domains of the ClusterNetworkTopology "default" that hold all their pending members.
	AwareNetworkTopology bool
	// DefaultMatchPolicy is the match policy of gangs that do not name one: once-satisfied, only-waiting or
	// waiting-and-running.
	DefaultMatchPolicy string
}
