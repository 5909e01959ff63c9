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

// Package features holds the feature gates of Koord's components, built on component-base's versioned
// feature gates. Each component owns one gate set; flags bind with --feature-gates.
package features

import (
	"fmt"
	"sort"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

// Version is the version of Koord that the feature specs below are stated against.
var Version = version.MustParse("0.1")

// Feature gates of koord-manager.
const (
	// PodMutatingWebhook applies ClusterColocationProfiles and batch/mid resources to pods at admission.
	// owner: koord-manager
	PodMutatingWebhook featuregate.Feature = "PodMutatingWebhook"
	// PodValidatingWebhook rejects pods with inconsistent QoS, priority and resources, or malformed annotations.
	// owner: koord-manager
	PodValidatingWebhook featuregate.Feature = "PodValidatingWebhook"
	// ElasticQuotaMutatingWebhook fills in a new ElasticQuota's parent label, tree ID and shared weight.
	// Koordinator's ElasticMutatingWebhook is the same gate.
	// owner: koord-manager
	ElasticQuotaMutatingWebhook featuregate.Feature = "ElasticQuotaMutatingWebhook"
	// ElasticQuotaValidatingWebhook checks ElasticQuota trees (min <= max, parents, children's min, cycles).
	// owner: koord-manager
	ElasticQuotaValidatingWebhook featuregate.Feature = "ElasticQuotaValidatingWebhook"
	// ColocationProfileValidatingWebhook checks ClusterColocationProfiles beyond what CEL can.
	// owner: koord-manager
	ColocationProfileValidatingWebhook featuregate.Feature = "ColocationProfileValidatingWebhook"
	// ConfigMapValidatingWebhook rejects an slo-controller-config ConfigMap that does not parse or validate.
	// owner: koord-manager
	ConfigMapValidatingWebhook featuregate.Feature = "ConfigMapValidatingWebhook"
	// ElasticQuotaEnableUpdateResourceKey lets a child ElasticQuota's max name a subset of its parent's max
	// resources; off, it must name exactly the same ones. Koordinator's gate of the same name, alpha, off.
	// owner: koord-manager
	ElasticQuotaEnableUpdateResourceKey featuregate.Feature = "ElasticQuotaEnableUpdateResourceKey"
	// MultiQuotaTree is Koordinator's gate of the same name (alpha, off), in koord-manager and koord-scheduler.
	// In koord-manager it gives a pod charged to a quota of a quota tree (an ElasticQuotaProfile's) the
	// profile's node selector as a required node affinity, at admission; in koord-scheduler it makes each tree
	// share its own nodes (see scheduler.go).
	// owner: koord-manager, koord-scheduler
	MultiQuotaTree featuregate.Feature = "MultiQuotaTree"
	// ColocationProfileController runs the colocationprofile controller, which applies
	// ClusterColocationProfiles to running pods, as if --controllers named it: Koordinator's gate of the same
	// name (alpha, off). --controllers=-colocationprofile still leaves it off.
	// owner: koord-manager
	ColocationProfileController featuregate.Feature = "ColocationProfileController"
)

// managerFeatures are the defaults of koord-manager's gates. Every webhook is on by default: Koordinator ships
// the pod and quota webhooks on; Koord also turns on the ConfigMap and profile validation, since rejecting bad
// configuration up front is safer than keeping the last good one silently.
var managerFeatures = map[featuregate.Feature]featuregate.VersionedSpecs{
	PodMutatingWebhook:                  {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	PodValidatingWebhook:                {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	ElasticQuotaMutatingWebhook:         {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	ElasticQuotaValidatingWebhook:       {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	ColocationProfileValidatingWebhook:  {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	ConfigMapValidatingWebhook:          {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	ElasticQuotaEnableUpdateResourceKey: {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	MultiQuotaTree:                      {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	ColocationProfileController:         {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
}

// NewManagerGate returns a fresh gate set with koord-manager's features. Components create one in main and
// pass what they resolved from it down; nothing reads a global gate.
func NewManagerGate() featuregate.MutableVersionedFeatureGate {
	g := featuregate.NewVersionedFeatureGate(Version)
	if err := g.AddVersioned(managerFeatures); err != nil {
		// The specs above are static; an error here is a programming mistake caught by the package tests.
		panic(fmt.Sprintf("register koord-manager feature gates: %v", err))
	}
	return g
}

// LogGates writes the state of every known gate once, at start.
func LogGates(logger logr.Logger, g featuregate.FeatureGate, known map[featuregate.Feature]featuregate.VersionedSpecs) {
	names := make([]string, 0, len(known))
	for f := range known {
		names = append(names, string(f))
	}
	sort.Strings(names)
	kv := make([]any, 0, 2*len(names))
	for _, n := range names {
		kv = append(kv, n, g.Enabled(featuregate.Feature(n)))
	}
	logger.Info("Feature gates resolved", kv...)
}

// ManagerFeatures returns koord-manager's gate specs, for LogGates and docs.
func ManagerFeatures() map[featuregate.Feature]featuregate.VersionedSpecs { return managerFeatures }
