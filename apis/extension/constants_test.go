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

package extension

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeys pins the wire names of the keys, which must match Koordinator's.
func TestKeys(t *testing.T) {
	got := map[string]string{
		"DomainPrefix":                             DomainPrefix,
		"ResourceDomainPrefix":                     ResourceDomainPrefix,
		"SchedulingDomainPrefix":                   SchedulingDomainPrefix,
		"InternalSchedulingDomainPrefix":           InternalSchedulingDomainPrefix,
		"NodeDomainPrefix":                         NodeDomainPrefix,
		"PodDomainPrefix":                          PodDomainPrefix,
		"QuotaDomainPrefix":                        QuotaDomainPrefix,
		"GangDomainPrefix":                         GangDomainPrefix,
		"LabelPodQoS":                              LabelPodQoS,
		"LabelPodPriority":                         LabelPodPriority,
		"LabelPodPriorityClass":                    LabelPodPriorityClass,
		"LabelPodEvictEnabled":                     LabelPodEvictEnabled,
		"AnnotationPodEvictPolicy":                 AnnotationPodEvictPolicy,
		"AnnotationPodEvictionPriority":            AnnotationPodEvictionPriority,
		"AnnotationOOMScoreAdj":                    AnnotationOOMScoreAdj,
		"AnnotationPodMemoryQoS":                   AnnotationPodMemoryQoS,
		"AnnotationResourceSpec":                   AnnotationResourceSpec,
		"AnnotationResourceStatus":                 AnnotationResourceStatus,
		"AnnotationNUMATopologySpec":               AnnotationNUMATopologySpec,
		"AnnotationDeviceAllocated":                AnnotationDeviceAllocated,
		"AnnotationDeviceAllocateHint":             AnnotationDeviceAllocateHint,
		"AnnotationDeviceJointAllocate":            AnnotationDeviceJointAllocate,
		"AnnotationReservationAffinity":            AnnotationReservationAffinity,
		"AnnotationReservationAllocated":           AnnotationReservationAllocated,
		"LabelReservationIgnored":                  LabelReservationIgnored,
		"LabelReservationOrder":                    LabelReservationOrder,
		"AnnotationNodeUsageThresholds":            AnnotationNodeUsageThresholds,
		"AnnotationEvictionCost":                   AnnotationEvictionCost,
		"AnnotationSoftEviction":                   AnnotationSoftEviction,
		"LabelPodPreemptionPolicy":                 LabelPodPreemptionPolicy,
		"LabelDisablePreemptible":                  LabelDisablePreemptible,
		"AnnotationBindGangGroupID":                AnnotationBindGangGroupID,
		"AnnotationExtendedResourceSpec":           AnnotationExtendedResourceSpec,
		"AnnotationNodeReservation":                AnnotationNodeReservation,
		"AnnotationNodeColocationStrategy":         AnnotationNodeColocationStrategy,
		"LabelCPUReclaimRatio":                     LabelCPUReclaimRatio,
		"LabelMemoryReclaimRatio":                  LabelMemoryReclaimRatio,
		"LabelMidStaticCPUReservedRatio":           LabelMidStaticCPUReservedRatio,
		"LabelMidStaticMemoryReservedRatio":        LabelMidStaticMemoryReservedRatio,
		"LabelNodeCPUBindPolicy":                   LabelNodeCPUBindPolicy,
		"LabelNUMATopologyPolicy":                  LabelNUMATopologyPolicy,
		"AnnotationCPUNormalizationRatio":          AnnotationCPUNormalizationRatio,
		"AnnotationNodeResourceAmplificationRatio": AnnotationNodeResourceAmplificationRatio,
		"AnnotationNodeRawAllocatable":             AnnotationNodeRawAllocatable,
		"AnnotationNodeOriginExtendedAllocatable":  AnnotationNodeOriginExtendedAllocatable,
		"AnnotationNodeThirdPartyAllocations":      AnnotationNodeThirdPartyAllocations,
		"AnnotationKubeletCPUManagerPolicy":        AnnotationKubeletCPUManagerPolicy,
		"LabelGPUModel":                            LabelGPUModel,
	}
	want := map[string]string{
		"DomainPrefix":                             "koordinator.sh/",
		"ResourceDomainPrefix":                     "kubernetes.io/",
		"SchedulingDomainPrefix":                   "scheduling.koordinator.sh/",
		"InternalSchedulingDomainPrefix":           "internal.scheduling.koordinator.sh/",
		"NodeDomainPrefix":                         "node.koordinator.sh/",
		"PodDomainPrefix":                          "pod.koordinator.sh/",
		"QuotaDomainPrefix":                        "quota.scheduling.koordinator.sh/",
		"GangDomainPrefix":                         "gang.scheduling.koordinator.sh/",
		"LabelPodQoS":                              "koordinator.sh/qosClass",
		"LabelPodPriority":                         "koordinator.sh/priority",
		"LabelPodPriorityClass":                    "koordinator.sh/priority-class",
		"LabelPodEvictEnabled":                     "koordinator.sh/eviction-enabled",
		"AnnotationPodEvictPolicy":                 "koordinator.sh/eviction-policy",
		"AnnotationPodEvictionPriority":            "koordinator.sh/eviction-priority",
		"AnnotationOOMScoreAdj":                    "koordinator.sh/oom-score-adj",
		"AnnotationPodMemoryQoS":                   "koordinator.sh/memoryQOS",
		"AnnotationResourceSpec":                   "scheduling.koordinator.sh/resource-spec",
		"AnnotationResourceStatus":                 "scheduling.koordinator.sh/resource-status",
		"AnnotationNUMATopologySpec":               "scheduling.koordinator.sh/numa-topology-spec",
		"AnnotationDeviceAllocated":                "scheduling.koordinator.sh/device-allocated",
		"AnnotationDeviceAllocateHint":             "scheduling.koordinator.sh/device-allocate-hint",
		"AnnotationDeviceJointAllocate":            "scheduling.koordinator.sh/device-joint-allocate",
		"AnnotationReservationAffinity":            "scheduling.koordinator.sh/reservation-affinity",
		"AnnotationReservationAllocated":           "scheduling.koordinator.sh/reservation-allocated",
		"LabelReservationIgnored":                  "scheduling.koordinator.sh/reservation-ignored",
		"LabelReservationOrder":                    "scheduling.koordinator.sh/reservation-order",
		"AnnotationNodeUsageThresholds":            "scheduling.koordinator.sh/usage-thresholds",
		"AnnotationEvictionCost":                   "scheduling.koordinator.sh/eviction-cost",
		"AnnotationSoftEviction":                   "scheduling.koordinator.sh/soft-eviction",
		"LabelPodPreemptionPolicy":                 "scheduling.koordinator.sh/preemption-policy",
		"LabelDisablePreemptible":                  "scheduling.koordinator.sh/disable-preemptible",
		"AnnotationBindGangGroupID":                "internal.scheduling.koordinator.sh/bind-gang-group-id",
		"AnnotationExtendedResourceSpec":           "node.koordinator.sh/extended-resource-spec",
		"AnnotationNodeReservation":                "node.koordinator.sh/reservation",
		"AnnotationNodeColocationStrategy":         "node.koordinator.sh/colocation-strategy",
		"LabelCPUReclaimRatio":                     "node.koordinator.sh/cpu-reclaim-ratio",
		"LabelMemoryReclaimRatio":                  "node.koordinator.sh/memory-reclaim-ratio",
		"LabelMidStaticCPUReservedRatio":           "node.koordinator.sh/mid-static-cpu-reserved-ratio",
		"LabelMidStaticMemoryReservedRatio":        "node.koordinator.sh/mid-static-memory-reserved-ratio",
		"LabelNodeCPUBindPolicy":                   "node.koordinator.sh/cpu-bind-policy",
		"LabelNUMATopologyPolicy":                  "node.koordinator.sh/numa-topology-policy",
		"AnnotationCPUNormalizationRatio":          "node.koordinator.sh/cpu-normalization-ratio",
		"AnnotationNodeResourceAmplificationRatio": "node.koordinator.sh/resource-amplification-ratio",
		"AnnotationNodeRawAllocatable":             "node.koordinator.sh/raw-allocatable",
		"AnnotationNodeOriginExtendedAllocatable":  "node.koordinator.sh/originExtendedAllocatable",
		"AnnotationNodeThirdPartyAllocations":      "node.koordinator.sh/thirdPartyAllocations",
		"AnnotationKubeletCPUManagerPolicy":        "kubelet.koordinator.sh/cpu-manager-policy",
		"LabelGPUModel":                            "node.koordinator.sh/gpu-model",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys (-want,+got):\n%s", diff)
	}
}
