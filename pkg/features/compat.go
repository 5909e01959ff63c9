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
	"slices"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"
)

// koordinatorOnlyKoordletGates are koordlet gates of Koordinator that Koord does not implement (yet). A
// --feature-gates value naming them is accepted, so that a Koordinator DaemonSet or Helm values file works
// unchanged; the names are logged at start as ignored instead of failing the flag parse.
var koordinatorOnlyKoordletGates = []string{
	// pkg/features/koordlet_features.go
	"BlkIOReconcile",
	"CPICollector", "ResctrlCollector", "ColdPageCollector", "Libpfm4", "HugePageReport",
	"PodResourcesProxy", "HamiCoreVGPUMonitor", "PerCPUMetric", "NodeMetricPromMetrics", "BECPUManager",
	"AuditEvents", "AuditEventsHTTPHandler", "CgroupV2NRI",
	// pkg/koordlet/runtimehooks/config.go
	"CPUNormalization", "TerwayQoS",
	"TCNetworkQoS", "Resctrl", "OOMScoreAdj",
}

// koordinatorOnlyManagerGates are koord-manager gates of Koordinator (pkg/features/features.go) that Koord does
// not implement (yet); koordinatorManagerAliases are Koordinator's names of gates Koord has under another name.
var (
	koordinatorOnlyManagerGates = []string{
		"NodeMutatingWebhook", "NodeValidatingWebhook", "ReservationMutatingWebhook",
		"WebhookFramework", "ColocationProfileSkipMutatingResources", "ColocationProfileSkipValidatingPriority",
		"ElasticQuotaIgnorePodOverhead", "ElasticQuotaGuaranteeUsage",
		"ElasticQuotaEvaluationTransformPod", "DisableDefaultQuota",
		"SupportParentQuotaSubmitPod", "EnableQuotaAdmission", "EnableQuotaAdmissionOnUpdate",
		"EnableSyncGPUSharedResource", "ValidatePodDeviceResource",
		"EnablePodEnhancedValidator", "DisablePVCReservation", "PriorityTransformer", "PreemptionPolicyTransformer",
		"ReplaceResourcesTransformer", "DisableExtendedResourceSpec", "DisableDeviceResourceSpec",
		"BindingAdmissionWebhook",
		// Koordinator's koord-manager registers its scheduler's gates in the same gate set (scheduler_features.go),
		// so its command lines may name them; they mean nothing to koord-manager.
		"CompatibleCSIStorageCapacity", "DisableCSIStorageCapacityInformer", "CompatiblePodDisruptionBudget",
		"DisablePodDisruptionBudgetInformer", "DisableDynamicResourceAllocationInformer", "ResizePod",
		"LazyReservationRestore", "OmitNodeLabelsForReservation", "SkipReservationFitsNode", "DevicePluginAdaption",
		"CleanExpiredReservationAllocated", "DynamicSchedulerCheck", "CrossSchedulerNomination",
		"SkipFilterWithNominatedPods", "CSIStorageCapacity", "GenericEphemeralVolume", "PodDisruptionBudget",
		"SyncBarrier", "GangPendingPodsConditionPatch", "EnableInlineBatchSchedule", "EnableBatchScheduleNodeSnapshot",
		"ElasticQuotaIgnoreTerminatingPod", "ElasticQuotaImmediateIgnoreTerminatingPod",
	}
	koordinatorManagerAliases = map[string]string{
		"ElasticValidatingWebhook": string(ElasticQuotaValidatingWebhook),
		"ElasticMutatingWebhook":   string(ElasticQuotaMutatingWebhook),
	}
)

// CompatFlag is a --feature-gates flag value that passes the gates a component knows to its gate set and sets
// aside the Koordinator gates it does not implement, so that Koordinator's flag values parse. Unknown names
// that are not Koordinator's still fail, naming the gate.
type CompatFlag struct {
	gate      featuregate.MutableVersionedFeatureGate
	tolerated []string
	aliases   map[string]string
	ignored   []string
}

// NewManagerCompatFlag returns the --feature-gates flag value of koord-manager.
func NewManagerCompatFlag(g featuregate.MutableVersionedFeatureGate) *CompatFlag {
	return &CompatFlag{gate: g, tolerated: koordinatorOnlyManagerGates, aliases: koordinatorManagerAliases}
}

// NewKoordletCompatFlag returns the --feature-gates flag value of koordlet.
func NewKoordletCompatFlag(g featuregate.MutableVersionedFeatureGate) *CompatFlag {
	return &CompatFlag{gate: g, tolerated: koordinatorOnlyKoordletGates}
}

// AddFlag binds the flag to fs under the name --feature-gates.
func (f *CompatFlag) AddFlag(fs *pflag.FlagSet) {
	known := f.gate.KnownFeatures()
	fs.Var(f, "feature-gates", "A set of key=value pairs that describe feature gates for alpha/experimental features. "+
		"Koordinator gates that Koord does not implement are accepted and ignored (logged at start). Options are:\n"+
		strings.Join(known, "\n"))
}

// String implements pflag.Value.
func (f *CompatFlag) String() string {
	if s, ok := f.gate.(fmt.Stringer); ok {
		return s.String()
	}
	return ""
}

// Type implements pflag.Value.
func (f *CompatFlag) Type() string { return "mapStringBool" }

// Set implements pflag.Value: it removes the tolerated Koordinator-only names and sets the rest on the gate.
func (f *CompatFlag) Set(value string) error {
	var kept []string
	for _, pair := range strings.Split(value, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, value, _ := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if to, ok := f.aliases[name]; ok {
			name, pair = to, to+"="+value
		}
		if _, known := f.gate.GetAll()[featuregate.Feature(name)]; !known && slices.Contains(f.tolerated, name) {
			if !slices.Contains(f.ignored, name) {
				f.ignored = append(f.ignored, name)
			}
			continue
		}
		kept = append(kept, pair)
	}
	if len(kept) == 0 {
		return nil
	}
	return f.gate.Set(strings.Join(kept, ","))
}

// Ignored returns the Koordinator gate names the flag set aside, sorted.
func (f *CompatFlag) Ignored() []string {
	out := slices.Clone(f.ignored)
	sort.Strings(out)
	return out
}

// LogIgnored logs the set-aside gate names once, if any.
func (f *CompatFlag) LogIgnored(logger logr.Logger) {
	if names := f.Ignored(); len(names) > 0 {
		logger.Info("Ignored Koordinator feature gates that Koord does not implement", "gates", names)
	}
}
