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

package features

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

// Feature gates of koord-scheduler's plugins, with Koordinator's names (pkg/features/scheduler_features.go).
// They live in kube-scheduler's own gate set, which its --feature-gates flag sets: AddSchedulerGates adds them.
const (
	// ElasticQuotaIgnoreTerminatingPod makes a pod leave its ElasticQuota when its deletion starts, rather than
	// when it is gone. On by default in Koord (off in Koordinator): counting a terminating pod makes a
	// preemptor that waits for its victims preempt again, and the revoke controller evict more than the
	// quota's over-use. Set it false for Koordinator's accounting.
	// owner: koord-scheduler
	ElasticQuotaIgnoreTerminatingPod featuregate.Feature = "ElasticQuotaIgnoreTerminatingPod"
)

// MultiQuotaTree (defined with koord-manager's gates) is also a koord-scheduler gate: it makes every quota tree
// ID a quota tree of its own, whose quotas share its root quota's total-resource annotation (the profile's
// nodes), and the quotas without a tree what is left of the cluster. Off, as in Koordinator, every quota shares
// the whole cluster.

// schedulerFeatures are the defaults of koord-scheduler's gates, stated against the Kubernetes release
// kube-scheduler's gate set is versioned by.
var schedulerFeatures = map[featuregate.Feature]featuregate.VersionedSpecs{
	ElasticQuotaIgnoreTerminatingPod: {{Version: version.MustParse("1.37"), Default: true, PreRelease: featuregate.Beta}},
	MultiQuotaTree:                   {{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}},
}

// AddSchedulerGates adds koord-scheduler's gates to g, kube-scheduler's gate set.
func AddSchedulerGates(g featuregate.MutableVersionedFeatureGate) error {
	if err := g.AddVersioned(schedulerFeatures); err != nil {
		return fmt.Errorf("register koord-scheduler feature gates: %w", err)
	}
	return nil
}

// SchedulerFeatures returns koord-scheduler's gate specs, for docs and tests.
func SchedulerFeatures() map[featuregate.Feature]featuregate.VersionedSpecs { return schedulerFeatures }
