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

package scheme

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
)

// schedulerConfig wraps one pluginConfig entry, written as in Koordinator's helm chart, in a
// KubeSchedulerConfiguration.
func schedulerConfig(plugin, args string) string {
	return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: koord-scheduler
    pluginConfig:
      - name: ` + plugin + `
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: ` + plugin + `Args
` + args
}

// validate runs the plugin's validation on decoded args, as the plugin's factory does.
func validate(args runtime.Object) field.ErrorList {
	path := field.NewPath("args")
	switch a := args.(type) {
	case *config.LoadAwareSchedulingArgs:
		return validation.ValidateLoadAwareSchedulingArgs(path, a)
	case *config.ElasticQuotaArgs:
		return validation.ValidateElasticQuotaArgs(path, a)
	case *config.CoschedulingArgs:
		return validation.ValidateCoschedulingArgs(path, a)
	case *config.ReservationArgs:
		return validation.ValidateReservationArgs(path, a)
	case *config.DeviceShareArgs:
		return validation.ValidateDeviceShareArgs(path, a)
	}
	return field.ErrorList{field.InternalError(path, nil)}
}

// TestDecodeEveryKoordinatorField decodes, the way kube-scheduler reads --config (strictly: an unknown field
// fails the whole file), a pluginConfig entry per plugin that sets every field Koordinator's versioned args
// have, and checks the internal args and their validation.
func TestDecodeEveryKoordinatorField(t *testing.T) {
	tests := map[string]struct {
		plugin string
		args   string
		// wantDecodeErr, when set, is a part of the expected decoding error.
		wantDecodeErr string
		want          runtime.Object
		// wantInvalid are the validation errors (BadValue and Detail ignored).
		wantInvalid field.ErrorList
	}{
		"LoadAwareScheduling": {
			plugin: "LoadAwareScheduling",
			args: `          filterExpiredNodeMetrics: true
          nodeMetricExpirationSeconds: 180
          enableScheduleWhenNodeMetricsExpired: false
          resourceWeights:
            cpu: 1
            memory: 1
          dominantResourceWeight: 0
          usageThresholds:
            cpu: 65
            memory: 95
          prodUsageThresholds:
            cpu: 55
            memory: 75
          prodUsageIncludeSys: false
          scoreAccordingProdUsage: true
          estimator: defaultEstimator
          estimatedScalingFactors:
            cpu: 85
            memory: 70
          estimatedSecondsAfterPodScheduled: 0
          estimatedSecondsAfterInitialized: 0
          allowCustomizeEstimation: false
          aggregated:
            usageThresholds:
              cpu: 65
              memory: 95
            usageAggregationType: p95
            usageAggregatedDuration: 5m
            scoreAggregationType: p95
            scoreAggregatedDuration: 5m
          supportedResources:
            - kubernetes.io/batch-cpu
`,
			want: &config.LoadAwareSchedulingArgs{
				FilterExpiredNodeMetrics:    true,
				NodeMetricExpirationSeconds: 180,
				ResourceWeights:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 1, corev1.ResourceMemory: 1},
				UsageThresholds:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 65, corev1.ResourceMemory: 95},
				ProdUsageThresholds:         map[corev1.ResourceName]int64{corev1.ResourceCPU: 55, corev1.ResourceMemory: 75},
				ScoreAccordingProdUsage:     true,
				Estimator:                   "defaultEstimator",
				EstimatedScalingFactors:     map[corev1.ResourceName]int64{corev1.ResourceCPU: 85, corev1.ResourceMemory: 70},
				Aggregated: &config.LoadAwareSchedulingAggregatedArgs{
					UsageThresholds:         map[corev1.ResourceName]int64{corev1.ResourceCPU: 65, corev1.ResourceMemory: 95},
					UsageAggregationType:    extension.P95,
					UsageAggregatedDuration: metav1.Duration{Duration: 5 * time.Minute},
					ScoreAggregationType:    extension.P95,
					ScoreAggregatedDuration: metav1.Duration{Duration: 5 * time.Minute},
				},
				SupportedResources: []corev1.ResourceName{extension.BatchCPU},
			},
		},
		"ElasticQuota": {
			plugin: "ElasticQuota",
			args: `          delayEvictTime: 300s
          revokePodInterval: 60s
          defaultQuotaGroupMax:
            cpu: "1000"
            memory: 1000Gi
          systemQuotaGroupMax:
            cpu: "100"
            memory: 100Gi
          quotaGroupNamespace: koordinator-system
          monitorAllQuotas: false
          enableCheckParentQuota: false
          enableRuntimeQuota: true
          enableMinQuotaScale: true
          disableDefaultQuotaPreemption: true
          enableQueueHint: false
          quotaSnapshotUpdateInterval: 120s
          hookPlugins: []
`,
			want: &config.ElasticQuotaArgs{
				DelayEvictTime:                metav1.Duration{Duration: 300 * time.Second},
				RevokePodInterval:             metav1.Duration{Duration: 60 * time.Second},
				DefaultQuotaGroupMax:          corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"), corev1.ResourceMemory: resource.MustParse("1000Gi")},
				SystemQuotaGroupMax:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100"), corev1.ResourceMemory: resource.MustParse("100Gi")},
				QuotaGroupNamespace:           "koordinator-system",
				EnableRuntimeQuota:            true,
				EnableMinQuotaScale:           true,
				DisableDefaultQuotaPreemption: true,
				QuotaSnapshotUpdateInterval:   metav1.Duration{Duration: 120 * time.Second},
				HookPlugins:                   []config.HookPluginConf{},
			},
		},
		"ElasticQuota with a hook plugin decodes and is rejected": {
			plugin: "ElasticQuota",
			args: `          hookPlugins:
            - key: quota-topology
              factoryKey: quota-topology
              factoryArgs: '{"mode":"strict"}'
`,
			want: &config.ElasticQuotaArgs{
				DelayEvictTime:                metav1.Duration{Duration: 120 * time.Second},
				RevokePodInterval:             metav1.Duration{Duration: time.Second},
				DefaultQuotaGroupMax:          builtinQuotaMax(),
				SystemQuotaGroupMax:           builtinQuotaMax(),
				QuotaGroupNamespace:           "koordinator-system",
				EnableRuntimeQuota:            true,
				EnableMinQuotaScale:           true,
				DisableDefaultQuotaPreemption: true,
				QuotaSnapshotUpdateInterval:   metav1.Duration{Duration: 120 * time.Second},
				HookPlugins:                   []config.HookPluginConf{{Key: "quota-topology", FactoryKey: "quota-topology", FactoryArgs: `{"mode":"strict"}`}},
			},
			wantInvalid: field.ErrorList{field.Invalid(field.NewPath("args", "hookPlugins").Index(0), nil, "")},
		},
		"Coscheduling": {
			plugin: "Coscheduling",
			args: `          defaultTimeout: 600s
          controllerWorkers: 1
          skipCheckScheduleCycle: false
          enablePreemption: false
          awareNetworkTopology: false
          defaultMatchPolicy: once-satisfied
`,
			want: &config.CoschedulingArgs{
				DefaultTimeout:     metav1.Duration{Duration: 600 * time.Second},
				ControllerWorkers:  1,
				DefaultMatchPolicy: string(extension.GangMatchPolicyOnceSatisfied),
			},
		},
		"Coscheduling with preemption and network topology": {
			plugin: "Coscheduling",
			args: `          enablePreemption: true
          awareNetworkTopology: true
`,
			want: &config.CoschedulingArgs{
				DefaultTimeout:       metav1.Duration{Duration: 600 * time.Second},
				ControllerWorkers:    1,
				EnablePreemption:     true,
				AwareNetworkTopology: true,
				DefaultMatchPolicy:   string(extension.GangMatchPolicyOnceSatisfied),
			},
		},
		"Reservation": {
			plugin: "Reservation",
			args: `          enablePreemption: false
          minCandidateNodesPercentage: 10
          minCandidateNodesAbsolute: 100
          controllerWorkers: 1
          gcDurationSeconds: 86400
          gcIntervalSeconds: 60
          resyncIntervalSeconds: 60
          ignoredResources:
            - nvidia.com/gpu
          preAllocationConfig:
            clusterLabelKey: pod.koordinator.sh/is-pre-allocatable
            clusterPriorityAnnotationKey: pod.koordinator.sh/pre-allocatable-priority
`,
			want: &config.ReservationArgs{
				MinCandidateNodesPercentage: 10,
				MinCandidateNodesAbsolute:   100,
				ControllerWorkers:           1,
				GCDurationSeconds:           86400,
				GCIntervalSeconds:           60,
				ResyncIntervalSeconds:       60,
				IgnoredResources:            []corev1.ResourceName{"nvidia.com/gpu"},
				PreAllocationConfig: &config.PreAllocationConfig{
					ClusterLabelKey:              "pod.koordinator.sh/is-pre-allocatable",
					ClusterPriorityAnnotationKey: "pod.koordinator.sh/pre-allocatable-priority",
				},
			},
		},
		"Reservation gcDurationSeconds 0 means the default, as in Koordinator": {
			plugin: "Reservation",
			args: `          gcDurationSeconds: 0
`,
			want: &config.ReservationArgs{
				MinCandidateNodesPercentage: 10,
				MinCandidateNodesAbsolute:   100,
				ControllerWorkers:           1,
				GCDurationSeconds:           86400,
				GCIntervalSeconds:           60,
				ResyncIntervalSeconds:       60,
			},
		},
		"DeviceShare": {
			plugin: "DeviceShare",
			args: `          allocator: autopilotAllocator
          scoringStrategy:
            type: MostAllocated
            resources:
              - name: koordinator.sh/gpu-memory-ratio
                weight: 2
          disableDeviceNUMATopologyAlignment: true
          gpuSharedResourceTemplatesConfig:
            configMapNamespace: kube-system
            configMapName: templates
            matchedResources: [huawei.com/npu-core]
          gpuShareUnsupportedModels:
            - vendor: huawei
              model: Ascend-310P3-300I-DUO
`,
			want: &config.DeviceShareArgs{
				Allocator:                          "autopilotAllocator",
				ScoringStrategy:                    &config.ScoringStrategy{Type: config.MostAllocated, Resources: []config.ResourceWeight{{Name: "koordinator.sh/gpu-memory-ratio", Weight: 2}}},
				DisableDeviceNUMATopologyAlignment: true,
				GPUSharedResourceTemplatesConfig:   &config.GPUSharedResourceTemplatesConfig{ConfigMapNamespace: "kube-system", ConfigMapName: "templates", MatchedResources: []string{"huawei.com/npu-core"}},
				GPUShareUnsupportedModels:          []config.GPUModel{{Vendor: "huawei", Model: "Ascend-310P3-300I-DUO"}},
			},
		},
		"DeviceShare defaults": {
			plugin: "DeviceShare",
			args:   "",
			want: &config.DeviceShareArgs{
				ScoringStrategy: &config.ScoringStrategy{Type: config.LeastAllocated, Resources: []config.ResourceWeight{
					{Name: "koordinator.sh/gpu-memory-ratio", Weight: 1}, {Name: "koordinator.sh/gpu-memory", Weight: 1},
					{Name: "koordinator.sh/rdma", Weight: 1}, {Name: "koordinator.sh/fpga", Weight: 1},
				}},
				GPUSharedResourceTemplatesConfig: &config.GPUSharedResourceTemplatesConfig{ConfigMapNamespace: "koordinator-system",
					ConfigMapName: "gpu-shared-resource-templates", MatchedResources: []string{"huawei.com/npu-core"}},
			},
		},
		"DeviceShare invalid": {
			plugin: "DeviceShare",
			args: `          scoringStrategy:
            type: Balanced
          gpuShareUnsupportedModels:
            - vendor: huawei
`,
			want: &config.DeviceShareArgs{
				ScoringStrategy: &config.ScoringStrategy{Type: "Balanced", Resources: []config.ResourceWeight{
					{Name: "koordinator.sh/gpu-memory-ratio", Weight: 1}, {Name: "koordinator.sh/gpu-memory", Weight: 1},
					{Name: "koordinator.sh/rdma", Weight: 1}, {Name: "koordinator.sh/fpga", Weight: 1},
				}},
				GPUSharedResourceTemplatesConfig: &config.GPUSharedResourceTemplatesConfig{ConfigMapNamespace: "koordinator-system",
					ConfigMapName: "gpu-shared-resource-templates", MatchedResources: []string{"huawei.com/npu-core"}},
				GPUShareUnsupportedModels: []config.GPUModel{{Vendor: "huawei"}},
			},
			wantInvalid: field.ErrorList{
				field.NotSupported(field.NewPath("args", "scoringStrategy", "type"), "", []string{}),
				field.Required(field.NewPath("args", "gpuShareUnsupportedModels").Index(0).Child("model"), ""),
			},
		},
		"an unknown field fails the whole configuration": {
			plugin: "Reservation",
			args: `          gcIntervalSecond: 60
`,
			wantDecodeErr: `unknown field "gcIntervalSecond"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(schedulerConfig(tc.plugin, tc.args)), nil, nil)
			if tc.wantDecodeErr != "" {
				if err == nil || !runtime.IsStrictDecodingError(err) || !strings.Contains(err.Error(), tc.wantDecodeErr) {
					t.Fatalf("decode error = %v, want a strict decoding error containing %q", err, tc.wantDecodeErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
			if !ok {
				t.Fatalf("decoded %T", obj)
			}
			var got runtime.Object
			for _, pc := range cfg.Profiles[0].PluginConfig {
				if pc.Name == tc.plugin {
					got = pc.Args
				}
			}
			// The internal args carry no apiVersion or kind; ignore TypeMeta in case a conversion fills it.
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreTypes(metav1.TypeMeta{})); diff != "" {
				t.Errorf("args (-want,+got):\n%s", diff)
			}
			if got == nil {
				return
			}
			if diff := cmp.Diff(tc.wantInvalid, validate(got), cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("validation (-want,+got):\n%s", diff)
			}
		})
	}
}

// builtinQuotaMax is the default max of the system and default quotas: MaxInt64/5 cpu and memory.
func builtinQuotaMax() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(math.MaxInt64/5, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(math.MaxInt64/5, resource.BinarySI),
	}
}
