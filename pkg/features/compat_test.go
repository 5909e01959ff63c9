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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"
)

func TestKoordletCompatFlag(t *testing.T) {
	tests := map[string]struct {
		args        []string
		wantErr     string
		wantIgnored []string
		wantEnabled map[string]bool
	}{
		"koord gates only": {
			args:        []string{"--feature-gates=BEMemoryEvict=true,CPUBurst=false"},
			wantEnabled: map[string]bool{"BEMemoryEvict": true, "CPUBurst": false, "BECPUSuppress": true},
		},
		"koordinator helm values with gates koord does not implement": {
			args:        []string{"--feature-gates=BECPUEvict=true,BlkIOReconcile=false,TerwayQoS=true"},
			wantIgnored: []string{"BlkIOReconcile", "TerwayQoS"},
			wantEnabled: map[string]bool{"BECPUEvict": true},
		},
		"koordinator's chart value: CgroupReconcile is Koordinator's memory QoS, not Koord's reconciler": {
			args:        []string{"--feature-gates=BECPUEvict=true,BEMemoryEvict=true,CgroupReconcile=false,Accelerators=true"},
			wantEnabled: map[string]bool{"BECPUEvict": true, "PodCgroupReconcile": true, "BatchResource": true, "CgroupReconcile": false},
		},
		"node-level evictions are koordlet gates now": {
			args:        []string{"--feature-gates=CPUEvict=true,MemoryAllocatableEvict=true"},
			wantEnabled: map[string]bool{"CPUEvict": true, "MemoryAllocatableEvict": true, "MemoryEvict": false, "CPUAllocatableEvict": false},
		},
		"all alpha and beta": {
			args:        []string{"--feature-gates=AllAlpha=true,AllBeta=true"},
			wantEnabled: map[string]bool{"BEMemoryEvict": true, "BECPUEvict": true},
		},
		"repeated flag": {
			args:        []string{"--feature-gates=BlkIOReconcile=true", "--feature-gates=BEMemoryEvict=true,BlkIOReconcile=false"},
			wantIgnored: []string{"BlkIOReconcile"},
			wantEnabled: map[string]bool{"BEMemoryEvict": true},
		},
		"a name nobody knows still fails": {
			args:    []string{"--feature-gates=BEMemoryEvict=true,NoSuchGate=true"},
			wantErr: "NoSuchGate",
		},
		"a bad value of a known gate fails": {
			args:    []string{"--feature-gates=BEMemoryEvict=yes"},
			wantErr: "BEMemoryEvict",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := NewKoordletGate()
			flag := NewKoordletCompatFlag(g)
			fs := pflag.NewFlagSet("koordlet", pflag.ContinueOnError)
			flag.AddFlag(fs)
			err := fs.Parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse error = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.wantIgnored, flag.Ignored()); diff != "" {
				t.Errorf("ignored gates (-want,+got):\n%s", diff)
			}
			for gate, want := range tc.wantEnabled {
				if got := g.Enabled(featuregate.Feature(gate)); got != want {
					t.Errorf("%s enabled = %v, want %v", gate, got, want)
				}
			}
		})
	}
}

func TestManagerCompatFlag(t *testing.T) {
	g := NewManagerGate()
	flag := NewManagerCompatFlag(g)
	fs := pflag.NewFlagSet("koord-manager", pflag.ContinueOnError)
	flag.AddFlag(fs)
	if err := fs.Parse([]string{"--feature-gates=ElasticValidatingWebhook=false,ElasticMutatingWebhook=false,NodeMutatingWebhook=true,PodMutatingWebhook=true"}); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if g.Enabled(ElasticQuotaValidatingWebhook) || g.Enabled(ElasticQuotaMutatingWebhook) {
		t.Error("ElasticValidatingWebhook=false and ElasticMutatingWebhook=false (Koordinator's names) left Koord's gates on")
	}
	if diff := cmp.Diff([]string{"NodeMutatingWebhook"}, flag.Ignored()); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
	if err := fs.Parse([]string{"--feature-gates=NoSuchGate=true"}); err == nil || !strings.Contains(err.Error(), "NoSuchGate") {
		t.Errorf("unknown gate: err %v, want one naming it", err)
	}
}

// koordinatorManagerBinaryGates are the gate names Koordinator's koord-manager accepts: its pkg/features registers
// the manager's, the scheduler's, the descheduler's and the transformers' gates in one gate set
// (features.go, scheduler_features.go).
var koordinatorManagerBinaryGates = []string{
	"PodMutatingWebhook", "PodValidatingWebhook", "ElasticMutatingWebhook", "ElasticValidatingWebhook",
	"NodeMutatingWebhook", "NodeValidatingWebhook", "ConfigMapValidatingWebhook", "ReservationMutatingWebhook",
	"ColocationProfileSkipMutatingResources", "ColocationProfileSkipValidatingPriority", "WebhookFramework",
	"MultiQuotaTree", "ElasticQuotaIgnorePodOverhead", "ElasticQuotaIgnoreTerminatingPod",
	"ElasticQuotaImmediateIgnoreTerminatingPod", "ElasticQuotaGuaranteeUsage", "ElasticQuotaEnableUpdateResourceKey",
	"ElasticQuotaEvaluationTransformPod", "DisableDefaultQuota", "SupportParentQuotaSubmitPod", "EnableQuotaAdmission",
	"EnableQuotaAdmissionOnUpdate", "EnablePodEnhancedValidator", "EnableSyncGPUSharedResource",
	"ColocationProfileController", "ValidatePodDeviceResource", "DisableExtendedResourceSpec",
	"DisableDeviceResourceSpec", "BindingAdmissionWebhook", "DisablePVCReservation", "PriorityTransformer",
	"PreemptionPolicyTransformer", "ReplaceResourcesTransformer",
	// scheduler_features.go
	"CompatibleCSIStorageCapacity", "DisableCSIStorageCapacityInformer", "CompatiblePodDisruptionBudget",
	"DisablePodDisruptionBudgetInformer", "DisableDynamicResourceAllocationInformer", "ResizePod",
	"LazyReservationRestore", "OmitNodeLabelsForReservation", "SkipReservationFitsNode", "DevicePluginAdaption",
	"CleanExpiredReservationAllocated", "DynamicSchedulerCheck", "CrossSchedulerNomination",
	"SkipFilterWithNominatedPods", "CSIStorageCapacity", "GenericEphemeralVolume", "PodDisruptionBudget",
	"SyncBarrier", "GangPendingPodsConditionPatch", "EnableInlineBatchSchedule", "EnableBatchScheduleNodeSnapshot",
}

// TestManagerAcceptsEveryKoordinatorGate: a koord-manager command line of Koordinator's parses whatever gates it
// names, each either a Koord gate or logged as ignored.
func TestManagerAcceptsEveryKoordinatorGate(t *testing.T) {
	for _, name := range koordinatorManagerBinaryGates {
		g := NewManagerGate()
		flag := NewManagerCompatFlag(g)
		fs := pflag.NewFlagSet("koord-manager", pflag.ContinueOnError)
		flag.AddFlag(fs)
		if err := fs.Parse([]string{"--feature-gates=" + name + "=true"}); err != nil {
			t.Errorf("--feature-gates=%s=true: %v", name, err)
		}
	}
}

// koordinatorKoordletGates are the gate names Koordinator's koordlet accepts (koordlet_features.go and
// runtimehooks/config.go).
var koordinatorKoordletGates = []string{
	"AuditEvents", "AuditEventsHTTPHandler", "BECPUSuppress", "BECPUManager", "BECPUEvict", "BEMemoryEvict", "CPUEvict",
	"MemoryEvict", "CPUAllocatableEvict", "MemoryAllocatableEvict", "CPUBurst", "SystemConfig", "RdtResctrl",
	"CgroupReconcile", "NodeTopologyReport", "Accelerators", "RDMADevices", "CPICollector", "Libpfm4",
	"ResctrlCollector", "PSICollector", "BlkIOReconcile", "ColdPageCollector", "HugePageReport", "PodResourcesProxy",
	"HamiCoreVGPUMonitor", "PerCPUMetric", "NodeMetricPromMetrics",
	"GroupIdentity", "CPUSetAllocator", "GPUEnvInject", "RDMADeviceInject", "BatchResource", "CPUNormalization",
	"CoreSched", "TerwayQoS", "TCNetworkQoS", "Resctrl", "OOMScoreAdj",
}

// TestKoordletAcceptsEveryKoordinatorGate: a koordlet command line of Koordinator's parses whatever gates it
// names (BatchResource and CPUSetAllocator are turned off rather than on, which their dependency allows).
func TestKoordletAcceptsEveryKoordinatorGate(t *testing.T) {
	for _, name := range koordinatorKoordletGates {
		g := NewKoordletGate()
		flag := NewKoordletCompatFlag(g)
		fs := pflag.NewFlagSet("koordlet", pflag.ContinueOnError)
		flag.AddFlag(fs)
		value := name + "=true"
		if name == "BatchResource" || name == "CPUSetAllocator" {
			value = name + "=false"
		}
		if err := fs.Parse([]string{"--feature-gates=" + value}); err != nil {
			t.Errorf("--feature-gates=%s: %v", value, err)
		}
	}
}
