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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
)

// Defaults of CoschedulingArgs (Koordinator's).
const (
	// DefaultGangTimeout is the default DefaultTimeout: how long a gang waits in Permit.
	DefaultGangTimeout = 600 * time.Second
	// DefaultCoschedulingControllerWorkers is the default ControllerWorkers.
	DefaultCoschedulingControllerWorkers int64 = 1
)

// SetDefaults_CoschedulingArgs fills in the defaults of CoschedulingArgs: gangs wait 600 s, one controller
// worker, the schedule-cycle check on, no preemption, no network topology, and the once-satisfied match policy.
func SetDefaults_CoschedulingArgs(obj *CoschedulingArgs) {
	if obj.DefaultTimeout == nil {
		obj.DefaultTimeout = &metav1.Duration{Duration: DefaultGangTimeout}
	}
	if obj.ControllerWorkers == nil {
		obj.ControllerWorkers = ptr.To(DefaultCoschedulingControllerWorkers)
	}
	if obj.SkipCheckScheduleCycle == nil {
		obj.SkipCheckScheduleCycle = ptr.To(false)
	}
	if obj.EnablePreemption == nil {
		obj.EnablePreemption = ptr.To(false)
	}
	if obj.AwareNetworkTopology == nil {
		obj.AwareNetworkTopology = ptr.To(false)
	}
	if obj.DefaultMatchPolicy == nil {
		obj.DefaultMatchPolicy = ptr.To(string(extension.GangMatchPolicyOnceSatisfied))
	}
}
