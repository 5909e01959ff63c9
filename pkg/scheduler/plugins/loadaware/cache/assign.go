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

package cache

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/pkg/util/quantity"
)

// AssignedPod is a pod placed on a node, by this scheduler or found bound there, with what LoadAwareScheduling
// needs to count it while its usage is not (fully) reported.
type AssignedPod struct {
	// Key is the pod's namespace and name, as NodeMetric reports pods.
	Key types.NamespacedName
	// UID identifies the pod.
	UID types.UID
	// Estimate is the pod's estimated usage.
	Estimate quantity.Vector
	// Prod says whether the pod is a koord-prod pod.
	Prod bool
	// AssignedAt is when the pod was placed on the node: when it was bound (its PodScheduled condition), or
	// assumed.
	AssignedAt time.Time
	// InitializedAt is when the pod became initialized; zero while it is not.
	InitializedAt time.Time
	// EstimateAfterScheduled sets the pod's estimation deadline this long after AssignedAt; 0 turns it off.
	EstimateAfterScheduled time.Duration
	// EstimateAfterInitialized sets the deadline this long after InitializedAt instead, once the pod is
	// initialized; 0 turns it off.
	EstimateAfterInitialized time.Duration
}

// Deadline is the pod's estimation deadline, as Koordinator's: InitializedAt + EstimateAfterInitialized once
// the pod is initialized (when that is set), else AssignedAt + EstimateAfterScheduled (when that is set);
// zero for none. The pod is estimated until a NodeMetric updated after it arrives.
func (a *AssignedPod) Deadline() time.Time {
	if a.EstimateAfterInitialized > 0 && !a.InitializedAt.IsZero() {
		return a.InitializedAt.Add(a.EstimateAfterInitialized)
	}
	if a.EstimateAfterScheduled > 0 && !a.AssignedAt.IsZero() {
		return a.AssignedAt.Add(a.EstimateAfterScheduled)
	}
	return time.Time{}
}
