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
	// AssignedAt is when the pod was placed on the node.
	AssignedAt time.Time
	// InitializedAt is when the pod became initialized; zero while it is not.
	InitializedAt time.Time
	// EstimateAfterScheduled keeps the pod estimated for this long after AssignedAt; 0 turns it off.
	EstimateAfterScheduled time.Duration
	// EstimateAfterInitialized keeps the pod estimated for this long after InitializedAt, and while it is not
	// initialized; 0 turns it off.
	EstimateAfterInitialized time.Duration
}
