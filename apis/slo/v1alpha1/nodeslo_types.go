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

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ----------------------------------------------------------------------------------------------------------------
// resourceUsedThresholdWithBE: suppressing and evicting BE pods when the node is under pressure.

// CPUSuppressPolicy is how the CPU available to BE pods is limited.
// +kubebuilder:validation:Enum=cpuset;cfsQuota
type CPUSuppressPolicy string

const (
	// CPUSetPolicy confines BE pods to a shrinking cpuset. It is the default.
	CPUSetPolicy CPUSuppressPolicy = "cpuset"
	// CPUCfsQuotaPolicy limits BE pods through the CFS quota of the besteffort cgroup.
	CPUCfsQuotaPolicy CPUSuppressPolicy = "cfsQuota"
)

// CPUEvictPolicy is how the CPU satisfaction of BE pods is measured for CPU eviction.
// +kubebuilder:validation:Enum=evictByRealLimit;evictByAllocatable
type CPUEvictPolicy string

const (
	// EvictByRealLimitPolicy measures satisfaction as the BE pods' real CPU limit over their request. It is the
	// default.
	EvictByRealLimitPolicy CPUEvictPolicy = "evictByRealLimit"
	// EvictByAllocatablePolicy measures satisfaction as the node's BE allocatable CPU over the BE pods' request.
	EvictByAllocatablePolicy CPUEvictPolicy = "evictByAllocatable"
)

// ResourceThresholdStrategy sets when the node agent suppresses and evicts lower-priority (BE) pods. All
// percentages are of the node's capacity unless stated otherwise. Unset fields take the node agent's defaults.
//
// +kubebuilder:validation:XValidation:rule="!has(self.memoryEvictLowerPercent) || !has(self.memoryEvictThresholdPercent) || self.memoryEvictLowerPercent < self.memoryEvictThresholdPercent",message="memoryEvictLowerPercent must be less than memoryEvictThresholdPercent",fieldPath=".memoryEvictLowerPercent"
// +kubebuilder:validation:XValidation:rule="!has(self.cpuEvictBESatisfactionLowerPercent) || !has(self.cpuEvictBESatisfactionUpperPercent) || self.cpuEvictBESatisfactionLowerPercent < self.cpuEvictBESatisfactionUpperPercent",message="cpuEvictBESatisfactionLowerPercent must be less than cpuEvictBESatisfactionUpperPercent",fieldPath=".cpuEvictBESatisfactionLowerPercent"
// +kubebuilder:validation:XValidation:rule="!has(self.cpuEvictLowerPercent) || !has(self.cpuEvictThresholdPercent) || self.cpuEvictLowerPercent < self.cpuEvictThresholdPercent",message="cpuEvictLowerPercent must be less than cpuEvictThresholdPercent",fieldPath=".cpuEvictLowerPercent"
// +kubebuilder:validation:XValidation:rule="!has(self.cpuAllocatableEvictLowerPercent) || !has(self.cpuAllocatableEvictThresholdPercent) || self.cpuAllocatableEvictLowerPercent < self.cpuAllocatableEvictThresholdPercent",message="cpuAllocatableEvictLowerPercent must be less than cpuAllocatableEvictThresholdPercent",fieldPath=".cpuAllocatableEvictLowerPercent"
// +kubebuilder:validation:XValidation:rule="!has(self.memoryAllocatableEvictLowerPercent) || !has(self.memoryAllocatableEvictThresholdPercent) || self.memoryAllocatableEvictLowerPercent < self.memoryAllocatableEvictThresholdPercent",message="memoryAllocatableEvictLowerPercent must be less than memoryAllocatableEvictThresholdPercent",fieldPath=".memoryAllocatableEvictLowerPercent"
type ResourceThresholdStrategy struct {
	// Enable turns the strategy on. Defaults to false.
	// +optional
	Enable *bool `json:"enable,omitempty"`

	// CPUSuppressThresholdPercent caps the CPU usage of all pods and system processes, in percent of the node's
	// CPU; BE pods get what is left below it. Defaults to 65.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUSuppressThresholdPercent *int64 `json:"cpuSuppressThresholdPercent,omitempty"`
	// CPUSuppressMinPercent is the least CPU, in percent of the node's CPU, that BE pods keep while suppressed.
	// Unset means no floor.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUSuppressMinPercent *int64 `json:"cpuSuppressMinPercent,omitempty"`
	// CPUSuppressPolicy is how BE pods are suppressed. Defaults to cpuset.
	// +optional
	CPUSuppressPolicy CPUSuppressPolicy `json:"cpuSuppressPolicy,omitempty"`
	// CPUSuppressPSIThresholdPercent (Koord) tightens BE suppression when the pods that are not BE wait for CPU:
	// when the largest CPU pressure among them (the "some" avg10 of their cgroups' cpu.pressure, in percent of
	// time) is above it, the CPU BE pods may use is scaled by threshold / pressure. It needs koordlet's
	// PSICollector gate. Unset turns the rule off.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUSuppressPSIThresholdPercent *int64 `json:"cpuSuppressPSIThresholdPercent,omitempty"`

	// MemoryEvictThresholdPercent is the node memory usage, in percent, above which BE pods are evicted.
	// Defaults to 70.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MemoryEvictThresholdPercent *int64 `json:"memoryEvictThresholdPercent,omitempty"`
	// MemoryEvictLowerPercent is the node memory usage, in percent, that eviction brings usage back down to.
	// Must be less than MemoryEvictThresholdPercent. Defaults to MemoryEvictThresholdPercent - 2.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MemoryEvictLowerPercent *int64 `json:"memoryEvictLowerPercent,omitempty"`

	// CPUEvictBESatisfactionUpperPercent is the BE CPU satisfaction (BE real CPU limit / BE CPU request, in
	// percent) that eviction restores; eviction stops above it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUEvictBESatisfactionUpperPercent *int64 `json:"cpuEvictBESatisfactionUpperPercent,omitempty"`
	// CPUEvictBESatisfactionLowerPercent is the BE CPU satisfaction, in percent, below which BE pods are evicted
	// (when their usage is also at least CPUEvictBEUsageThresholdPercent of their limit). Must be less than
	// CPUEvictBESatisfactionUpperPercent.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUEvictBESatisfactionLowerPercent *int64 `json:"cpuEvictBESatisfactionLowerPercent,omitempty"`
	// CPUEvictBEUsageThresholdPercent is the BE CPU usage, in percent of the BE real CPU limit, from which
	// unsatisfied BE pods are evicted. Defaults to 90.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUEvictBEUsageThresholdPercent *int64 `json:"cpuEvictBEUsageThresholdPercent,omitempty"`
	// CPUEvictTimeWindowSeconds is the window, in seconds, over which CPU usage and satisfaction are averaged
	// for CPU eviction.
	// +kubebuilder:validation:Minimum=1
	// +optional
	CPUEvictTimeWindowSeconds *int64 `json:"cpuEvictTimeWindowSeconds,omitempty"`
	// CPUEvictThresholdPercent is the node CPU usage, in percent, above which pods are evicted (CPUEvict
	// feature).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUEvictThresholdPercent *int64 `json:"cpuEvictThresholdPercent,omitempty"`
	// CPUEvictLowerPercent is the node CPU usage, in percent, that CPU eviction brings usage back down to. Must
	// be less than CPUEvictThresholdPercent. Defaults to CPUEvictThresholdPercent - 2.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUEvictLowerPercent *int64 `json:"cpuEvictLowerPercent,omitempty"`
	// CPUEvictPolicy is how BE CPU satisfaction is measured. Defaults to evictByRealLimit.
	// +optional
	CPUEvictPolicy CPUEvictPolicy `json:"cpuEvictPolicy,omitempty"`
	// EvictEnabledPriorityThreshold is the highest pod priority that usage-based eviction may evict.
	// +optional
	EvictEnabledPriorityThreshold *int32 `json:"evictEnabledPriorityThreshold,omitempty"`

	// CPUAllocatableEvictThresholdPercent is the sum of the CPU requests of evictable pods, in percent of their
	// allocatable, above which they are evicted (CPUAllocatableEvict feature). It may exceed 100.
	// +kubebuilder:validation:Minimum=0
	// +optional
	CPUAllocatableEvictThresholdPercent *int64 `json:"cpuAllocatableEvictThresholdPercent,omitempty"`
	// CPUAllocatableEvictLowerPercent is the CPU request percentage that allocatable-based eviction brings the
	// sum back down to. Must be less than CPUAllocatableEvictThresholdPercent.
	// +kubebuilder:validation:Minimum=0
	// +optional
	CPUAllocatableEvictLowerPercent *int64 `json:"cpuAllocatableEvictLowerPercent,omitempty"`
	// MemoryAllocatableEvictThresholdPercent is the sum of the memory requests of evictable pods, in percent of
	// their allocatable, above which they are evicted (MemoryAllocatableEvict feature). It may exceed 100.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MemoryAllocatableEvictThresholdPercent *int64 `json:"memoryAllocatableEvictThresholdPercent,omitempty"`
	// MemoryAllocatableEvictLowerPercent is the memory request percentage that allocatable-based eviction brings
	// the sum back down to. Must be less than MemoryAllocatableEvictThresholdPercent.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MemoryAllocatableEvictLowerPercent *int64 `json:"memoryAllocatableEvictLowerPercent,omitempty"`
	// AllocatableEvictPriorityThreshold is the highest pod priority that allocatable-based eviction may evict,
	// e.g. 5999 for koord-batch and below. Required by the allocatable-based eviction features.
	// +optional
	AllocatableEvictPriorityThreshold *int32 `json:"allocatableEvictPriorityThreshold,omitempty"`
}

// ----------------------------------------------------------------------------------------------------------------
// resourceQOSStrategy: cgroup-level QoS per Koordinator QoS class.

// CPUQOSPolicy is the kernel mechanism used for CPU QoS.
// +kubebuilder:validation:Enum=groupIdentity;coreSched
type CPUQOSPolicy string

const (
	// CPUQOSPolicyGroupIdentity uses Group Identity (cpu.bvt.warp_ns, Anolis/Alinux kernels). It is the default.
	CPUQOSPolicyGroupIdentity CPUQOSPolicy = "groupIdentity"
	// CPUQOSPolicyCoreSched uses Linux core scheduling and cgroup idle (cpu.idle).
	CPUQOSPolicyCoreSched CPUQOSPolicy = "coreSched"
)

// NETQOSPolicy is the mechanism used for network QoS.
// +kubebuilder:validation:Enum=tc;terway-qos
type NETQOSPolicy string

const (
	// NETQOSPolicyTC uses Linux traffic control. It is the default.
	NETQOSPolicyTC NETQOSPolicy = "tc"
	// NETQOSPolicyTerwayQos delegates to terway-qos.
	NETQOSPolicyTerwayQos NETQOSPolicy = "terway-qos"
)

// ResourceQOSPolicies selects the mechanisms behind the per-class QoS settings.
type ResourceQOSPolicies struct {
	// CPUPolicy is the CPU QoS mechanism. Defaults to groupIdentity.
	// +optional
	CPUPolicy *CPUQOSPolicy `json:"cpuPolicy,omitempty"`
	// NETQOSPolicy is the network QoS mechanism. Defaults to tc.
	// +optional
	NETQOSPolicy *NETQOSPolicy `json:"netQOSPolicy,omitempty"`
}

// CPUQOS holds the CPU QoS knobs of a QoS class.
type CPUQOS struct {
	// GroupIdentity is the cpu.bvt.warp_ns value for the class: 2 (highest), 1, 0 or -1 (lowest). Used when
	// the CPU policy is groupIdentity. Defaults to 0.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2
	// +optional
	GroupIdentity *int64 `json:"groupIdentity,omitempty"`
	// SchedIdle is the cpu.idle value for the class; 1 puts it in SCHED_IDLE (Linux 5.15+). Used when the CPU
	// policy is coreSched. Defaults to 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	SchedIdle *int64 `json:"schedIdle,omitempty"`
	// CoreExpeller lets pods of the class expel idle (SchedIdle) pods from sibling hyper-threads through a
	// dedicated core-scheduling group. Used when the CPU policy is coreSched. Defaults to false.
	// +optional
	CoreExpeller *bool `json:"coreExpeller,omitempty"`
}

// CPUQOSCfg is the node-level CPU QoS setting of a QoS class.
type CPUQOSCfg struct {
	// Enable turns CPU QoS on for the class. Defaults to false.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// CPUQOS holds the knobs.
	CPUQOS `json:",inline"`
}

// MemoryQOS holds the memory cgroup QoS knobs of a QoS class. With request r and limit l (node allocatable
// memory when the pod has no limit): memory.min = r*minLimitPercent/100, memory.low = r*lowLimitPercent/100,
// memory.high = r + (l-r)*throttlingPercent/100 rounded down to a page. A value of 0 turns the knob off.
type MemoryQOS struct {
	// MinLimitPercent sets memory.min, the memory protected from global reclaim, in percent of the request.
	// 0 turns it off.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MinLimitPercent *int64 `json:"minLimitPercent,omitempty"`
	// LowLimitPercent sets memory.low, the memory protected from global reclaim on a best-effort basis, in
	// percent of the request. 0 turns it off.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	LowLimitPercent *int64 `json:"lowLimitPercent,omitempty"`
	// ThrottlingPercent sets memory.high, where direct reclaim starts, in percent of the way from the request to
	// the limit. 0 turns it off.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ThrottlingPercent *int64 `json:"throttlingPercent,omitempty"`

	// WmarkRatio sets memory.wmark_ratio (Anolis OS): async reclaim starts when usage exceeds this percent of
	// min(memory.high, limit). 0 turns it off; 95 is recommended.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	WmarkRatio *int64 `json:"wmarkRatio,omitempty"`
	// WmarkScalePermill sets memory.wmark_scale_factor (Anolis OS), in permille: async reclaim stops at
	// WmarkRatio minus this. The kernel default is 50; 20 is recommended.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	WmarkScalePermill *int64 `json:"wmarkScalePermill,omitempty"`
	// WmarkMinAdj sets memory.wmark_min_adj (Anolis OS), shifting the global min watermark for this cgroup:
	// negative values (down to -25) make its reclaim later, positive values (up to 50) earlier. 0 turns it off;
	// -25 for LSR/LS and 50 for BE are recommended.
	// +kubebuilder:validation:Minimum=-25
	// +kubebuilder:validation:Maximum=50
	// +optional
	WmarkMinAdj *int64 `json:"wmarkMinAdj,omitempty"`

	// PriorityEnable turns on memcg OOM priority (memory.use_priority_oom, Anolis OS) when 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	PriorityEnable *int64 `json:"priorityEnable,omitempty"`
	// Priority is the memcg OOM priority (memory.priority, Anolis OS), 0 to 12; higher is killed later.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=12
	// +optional
	Priority *int64 `json:"priority,omitempty"`
	// OomKillGroup makes the OOM killer kill the whole cgroup (memory.oom.group) when 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	OomKillGroup *int64 `json:"oomKillGroup,omitempty"`

	// PageCacheLimitEnable turns on the page cache limit (memory.pagecache_limit.enable, Anolis OS) when 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	PageCacheLimitEnable *int64 `json:"pageCacheLimitEnable,omitempty"`
	// PageCacheLimitSize is the page cache limit in bytes (memory.pagecache_limit.size, Anolis OS), at most the
	// cgroup's memory limit.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PageCacheLimitSize *int64 `json:"pageCacheLimitSize,omitempty"`
	// PageCacheLimitSync selects synchronous (1) or asynchronous (0) reclaim when the page cache exceeds the
	// limit (memory.pagecache_limit.sync, Anolis OS).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	PageCacheLimitSync *int64 `json:"pageCacheLimitSync,omitempty"`
}

// MemoryQOSCfg is the node-level memory QoS setting of a QoS class.
type MemoryQOSCfg struct {
	// Enable turns memory QoS on for the class. Defaults to false.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// MemoryQOS holds the knobs.
	MemoryQOS `json:",inline"`
}

// BlockType is the kind of block device a BlockCfg applies to.
// +kubebuilder:validation:Enum=device;volumegroup;podvolume
type BlockType string

const (
	// BlockTypeDevice is a disk such as /dev/sdb; used only in the cgroupRoot class (blk-iocost).
	BlockTypeDevice BlockType = "device"
	// BlockTypeVolumeGroup is an LVM volume group.
	BlockTypeVolumeGroup BlockType = "volumegroup"
	// BlockTypePodVolume is a pod volume.
	BlockTypePodVolume BlockType = "podvolume"
)

// IOCfg holds the block I/O limits and weights for one block device. A limit of 0 turns it off.
type IOCfg struct {
	// ReadIOPS limits read operations per second. 0 turns it off.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ReadIOPS *int64 `json:"readIOPS,omitempty"`
	// WriteIOPS limits write operations per second. 0 turns it off.
	// +kubebuilder:validation:Minimum=0
	// +optional
	WriteIOPS *int64 `json:"writeIOPS,omitempty"`
	// ReadBPS limits read throughput in bytes per second. 0 turns it off.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ReadBPS *int64 `json:"readBPS,omitempty"`
	// WriteBPS limits write throughput in bytes per second. 0 turns it off.
	// +kubebuilder:validation:Minimum=0
	// +optional
	WriteBPS *int64 `json:"writeBPS,omitempty"`
	// IOWeightPercent is the I/O weight of the group, 1 to 100. Defaults to 100.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	IOWeightPercent *int64 `json:"ioWeightPercent,omitempty"`
	// ReadLatency is the blk-iocost read latency target in microseconds; the disk counts as saturated when more
	// than ReadLatencyPercent of reads exceed it. Only used in the cgroupRoot class.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ReadLatency *int64 `json:"readLatency,omitempty"`
	// WriteLatency is the blk-iocost write latency target in microseconds. Only used in the cgroupRoot class.
	// +kubebuilder:validation:Minimum=0
	// +optional
	WriteLatency *int64 `json:"writeLatency,omitempty"`
	// ReadLatencyPercent is the blk-iocost read latency percentile, 0 to 100 (the kernel uses 95).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ReadLatencyPercent *int64 `json:"readLatencyPercent,omitempty"`
	// WriteLatencyPercent is the blk-iocost write latency percentile, 0 to 100.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	WriteLatencyPercent *int64 `json:"writeLatencyPercent,omitempty"`
	// EnableUserModel sets the blk-iocost cost model by hand from the Model* fields. Defaults to false.
	// +optional
	EnableUserModel *bool `json:"enableUserModel,omitempty"`
	// ModelReadBPS is the user model's read throughput in bytes per second.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ModelReadBPS *int64 `json:"modelReadBPS,omitempty"`
	// ModelWriteBPS is the user model's write throughput in bytes per second.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ModelWriteBPS *int64 `json:"modelWriteBPS,omitempty"`
	// ModelReadSeqIOPS is the user model's sequential read IOPS.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ModelReadSeqIOPS *int64 `json:"modelReadSeqIOPS,omitempty"`
	// ModelWriteSeqIOPS is the user model's sequential write IOPS.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ModelWriteSeqIOPS *int64 `json:"modelWriteSeqIOPS,omitempty"`
	// ModelReadRandIOPS is the user model's random read IOPS.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ModelReadRandIOPS *int64 `json:"modelReadRandIOPS,omitempty"`
	// ModelWriteRandIOPS is the user model's random write IOPS.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ModelWriteRandIOPS *int64 `json:"modelWriteRandIOPS,omitempty"`
}

// BlockCfg is the block I/O setting for one block device.
type BlockCfg struct {
	// Name identifies the device: a device path, volume group name or pod volume name, depending on BlockType.
	// +optional
	Name string `json:"name,omitempty"`
	// BlockType is the kind of device Name refers to.
	// +optional
	BlockType BlockType `json:"type,omitempty"`
	// IOCfg holds the limits and weights.
	// +optional
	IOCfg IOCfg `json:"ioCfg,omitempty"`
}

// BlkIOQOS holds the block I/O QoS knobs of a QoS class.
type BlkIOQOS struct {
	// Blocks are the per-device settings.
	// +optional
	Blocks []BlockCfg `json:"blocks,omitempty"`
}

// BlkIOQOSCfg is the node-level block I/O QoS setting of a QoS class.
type BlkIOQOSCfg struct {
	// Enable turns block I/O QoS on for the class. Defaults to false.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// BlkIOQOS holds the knobs.
	BlkIOQOS `json:",inline"`
}

// ResctrlQOS holds the resctrl (Intel RDT / AMD PQoS) knobs of a QoS class.
//
// +kubebuilder:validation:XValidation:rule="!has(self.catRangeStartPercent) || !has(self.catRangeEndPercent) || self.catRangeStartPercent < self.catRangeEndPercent",message="catRangeStartPercent must be less than catRangeEndPercent",fieldPath=".catRangeStartPercent"
type ResctrlQOS struct {
	// CATRangeStartPercent is where the class's share of the last-level cache ways starts, in percent of the
	// ways. Defaults to 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CATRangeStartPercent *int64 `json:"catRangeStartPercent,omitempty"`
	// CATRangeEndPercent is where the class's share of the last-level cache ways ends, in percent of the ways.
	// Must be greater than CATRangeStartPercent. Defaults to 100 (30 for BE).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CATRangeEndPercent *int64 `json:"catRangeEndPercent,omitempty"`
	// MBAPercent is the memory bandwidth allocation of the class, in percent. Defaults to 100.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MBAPercent *int64 `json:"mbaPercent,omitempty"`
}

// ResctrlQOSCfg is the node-level resctrl QoS setting of a QoS class.
type ResctrlQOSCfg struct {
	// Enable turns resctrl QoS on for the class. Defaults to false.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// ResctrlQOS holds the knobs.
	ResctrlQOS `json:",inline"`
}

// NetworkQOS holds the network bandwidth knobs of a QoS class. Each value is either an integer, a percentage
// (0 to 100) of the node's total bandwidth, or a string quantity in bytes per second, e.g. "50M".
type NetworkQOS struct {
	// IngressRequest is the ingress bandwidth guaranteed to the class. Defaults to 0.
	// +kubebuilder:default=0
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? (self >= 0 && self <= 100) : isQuantity(self)",message="ingressRequest must be an integer percentage in 0..100 or a bandwidth quantity such as 50M"
	// +optional
	IngressRequest *intstr.IntOrString `json:"ingressRequest,omitempty"`
	// IngressLimit is the most ingress bandwidth the class may use. Defaults to 100.
	// +kubebuilder:default=100
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? (self >= 0 && self <= 100) : isQuantity(self)",message="ingressLimit must be an integer percentage in 0..100 or a bandwidth quantity such as 50M"
	// +optional
	IngressLimit *intstr.IntOrString `json:"ingressLimit,omitempty"`
	// EgressRequest is the egress bandwidth guaranteed to the class. Defaults to 0.
	// +kubebuilder:default=0
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? (self >= 0 && self <= 100) : isQuantity(self)",message="egressRequest must be an integer percentage in 0..100 or a bandwidth quantity such as 50M"
	// +optional
	EgressRequest *intstr.IntOrString `json:"egressRequest,omitempty"`
	// EgressLimit is the most egress bandwidth the class may use. Defaults to 100.
	// +kubebuilder:default=100
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? (self >= 0 && self <= 100) : isQuantity(self)",message="egressLimit must be an integer percentage in 0..100 or a bandwidth quantity such as 50M"
	// +optional
	EgressLimit *intstr.IntOrString `json:"egressLimit,omitempty"`
}

// NetworkQOSCfg is the node-level network QoS setting of a QoS class.
type NetworkQOSCfg struct {
	// Enable turns network QoS on for the class. Defaults to false.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// NetworkQOS holds the knobs.
	NetworkQOS `json:",inline"`
}

// ResourceQOS is the QoS setting of one QoS class, per resource.
type ResourceQOS struct {
	// CPUQOS is the CPU QoS setting.
	// +optional
	CPUQOS *CPUQOSCfg `json:"cpuQOS,omitempty"`
	// MemoryQOS is the memory QoS setting.
	// +optional
	MemoryQOS *MemoryQOSCfg `json:"memoryQOS,omitempty"`
	// BlkIOQOS is the block I/O QoS setting.
	// +optional
	BlkIOQOS *BlkIOQOSCfg `json:"blkioQOS,omitempty"`
	// ResctrlQOS is the last-level cache and memory bandwidth setting.
	// +optional
	ResctrlQOS *ResctrlQOSCfg `json:"resctrlQOS,omitempty"`
	// NetworkQOS is the network bandwidth setting.
	// +optional
	NetworkQOS *NetworkQOSCfg `json:"networkQOS,omitempty"`
}

// ResourceQOSStrategy is the QoS setting of every QoS class on the node.
type ResourceQOSStrategy struct {
	// Policies selects the mechanisms used.
	// +optional
	Policies *ResourceQOSPolicies `json:"policies,omitempty"`
	// LSRClass applies to LSR pods (LSE pods use it too).
	// +optional
	LSRClass *ResourceQOS `json:"lsrClass,omitempty"`
	// LSClass applies to LS pods.
	// +optional
	LSClass *ResourceQOS `json:"lsClass,omitempty"`
	// BEClass applies to BE pods.
	// +optional
	BEClass *ResourceQOS `json:"beClass,omitempty"`
	// SystemClass applies to SYSTEM pods.
	// +optional
	SystemClass *ResourceQOS `json:"systemClass,omitempty"`
	// CgroupRoot applies to the root cgroup, e.g. node-wide blk-iocost settings.
	// +optional
	CgroupRoot *ResourceQOS `json:"cgroupRoot,omitempty"`
}

// ----------------------------------------------------------------------------------------------------------------
// cpuBurstStrategy

// CPUBurstPolicy selects which CPU burst mechanisms are used.
// +kubebuilder:validation:Enum=none;cpuBurstOnly;cfsQuotaBurstOnly;auto
type CPUBurstPolicy string

const (
	// CPUBurstNone turns CPU burst off. It is the default.
	CPUBurstNone CPUBurstPolicy = "none"
	// CPUBurstOnly sets cpu.cfs_burst_us (cgroup v1) or cpu.max.burst (cgroup v2).
	CPUBurstOnly CPUBurstPolicy = "cpuBurstOnly"
	// CFSQuotaBurstOnly raises a throttled container's CFS quota while the node has spare CPU.
	CFSQuotaBurstOnly CPUBurstPolicy = "cfsQuotaBurstOnly"
	// CPUBurstAuto uses both mechanisms.
	CPUBurstAuto CPUBurstPolicy = "auto"
)

// CPUBurstConfig holds the CPU burst knobs. It is also the shape of the pod-level koordinator.sh/cpuBurst
// annotation.
type CPUBurstConfig struct {
	// Policy selects the mechanisms. Defaults to none.
	// +optional
	Policy CPUBurstPolicy `json:"policy,omitempty"`
	// CPUBurstPercent sets the burst allowance, in percent of the CPU limit: cfs_burst_us = limit cores *
	// CPUBurstPercent / 100 * cfs_period_us. 0 to 10000; defaults to 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	// +optional
	CPUBurstPercent *int64 `json:"cpuBurstPercent,omitempty"`
	// CFSQuotaBurstPercent caps how far the CFS quota may be raised, in percent of the original quota; at
	// least 100. Defaults to 300.
	// +kubebuilder:validation:Minimum=100
	// +optional
	CFSQuotaBurstPercent *int64 `json:"cfsQuotaBurstPercent,omitempty"`
	// CFSQuotaBurstPeriodSeconds is how long, in seconds, a container may stay above its quota; -1 means
	// without limit. Defaults to -1.
	// +kubebuilder:validation:Minimum=-1
	// +optional
	CFSQuotaBurstPeriodSeconds *int64 `json:"cfsQuotaBurstPeriodSeconds,omitempty"`
}

// CPUBurstStrategy is the node-level CPU burst setting.
type CPUBurstStrategy struct {
	// CPUBurstConfig holds the knobs.
	CPUBurstConfig `json:",inline"`
	// SharePoolThresholdPercent is the usage of the node's shared CPU pool, in percent, above which raised CFS
	// quotas are scaled back down. Defaults to 50.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	SharePoolThresholdPercent *int64 `json:"sharePoolThresholdPercent,omitempty"`
}

// ----------------------------------------------------------------------------------------------------------------
// systemStrategy

// SystemStrategy holds node-wide kernel settings. Unset fields are left as the node has them.
type SystemStrategy struct {
	// MinFreeKbytesFactor sets /proc/sys/vm/min_free_kbytes = MinFreeKbytesFactor * total memory / 10000, i.e.
	// in units of 1/10000 of the node's memory. 100 is recommended.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinFreeKbytesFactor *int64 `json:"minFreeKbytesFactor,omitempty"`
	// WatermarkScaleFactor sets /proc/sys/vm/watermark_scale_factor, in units of 1/10000, 1 to 400. 150 is
	// recommended.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=400
	// +optional
	WatermarkScaleFactor *int64 `json:"watermarkScaleFactor,omitempty"`
	// MemcgReapBackGround sets /sys/kernel/mm/memcg_reaper/reap_background (Anolis OS), 0 or 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	MemcgReapBackGround *int64 `json:"memcgReapBackGround,omitempty"`
	// SchedGroupIdentityEnabled sets /sys/kernel/sched_group_identity_enabled (Anolis OS), 0 or 1. Set it to 0
	// when CPU QoS by group identity is turned off.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	SchedGroupIdentityEnabled *int64 `json:"schedGroupIdentityEnabled,omitempty"`
	// SchedIdleSaverWmark sets /proc/sys/kernel/sched_idle_saver_wmark (Anolis OS), in nanoseconds.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SchedIdleSaverWmark *int64 `json:"schedIdleSaverWmark,omitempty"`
	// SchedFeatures turns entries of /sys/kernel/debug/sched_features on (true) or off (false) by name.
	// +optional
	SchedFeatures map[string]bool `json:"schedFeatures,omitempty"`
	// PageCacheLimitEnabled sets /sys/kernel/mm/pagecache_limit/enabled (Anolis OS), 0 or 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	PageCacheLimitEnabled *int64 `json:"pageCacheLimitEnabled,omitempty"`
	// TotalNetworkBandwidth is the node's total network bandwidth, in Mbps, that network QoS percentages refer
	// to. 0 means read it from /sys/class/net/<nic>/speed.
	// +optional
	TotalNetworkBandwidth resource.Quantity `json:"totalNetworkBandwidth,omitempty"`
}

// ----------------------------------------------------------------------------------------------------------------
// NodeSLO

// NodeSLOSpec is the set of QoS strategies the node agent applies on its node. The manager renders it from the
// slo-controller-config ConfigMap: the cluster strategy, merged with the first matching node strategy.
type NodeSLOSpec struct {
	// ResourceUsedThresholdWithBE sets when BE pods are suppressed and evicted.
	// +optional
	ResourceUsedThresholdWithBE *ResourceThresholdStrategy `json:"resourceUsedThresholdWithBE,omitempty"`
	// ResourceQOSStrategy is the cgroup QoS setting of each QoS class.
	// +optional
	ResourceQOSStrategy *ResourceQOSStrategy `json:"resourceQOSStrategy,omitempty"`
	// CPUBurstStrategy is the CPU burst setting.
	// +optional
	CPUBurstStrategy *CPUBurstStrategy `json:"cpuBurstStrategy,omitempty"`
	// SystemStrategy holds node-wide kernel settings.
	// +optional
	SystemStrategy *SystemStrategy `json:"systemStrategy,omitempty"`
	// Extensions holds third-party strategies, keyed by name.
	// +optional
	Extensions *ExtensionsMap `json:"extensions,omitempty"`
	// HostApplications are the out-of-band applications on the node to account for and manage.
	// +optional
	HostApplications []HostApplicationSpec `json:"hostApplications,omitempty"`
}

// NodeSLOStatus is the observed state of a NodeSLO. It has no fields yet.
type NodeSLOStatus struct{}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,path=nodeslos
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Threshold",type=boolean,JSONPath=`.spec.resourceUsedThresholdWithBE.enable`,description="Whether BE suppression and eviction is on"
// +kubebuilder:printcolumn:name="CPUBurst",type=string,JSONPath=`.spec.cpuBurstStrategy.policy`,description="CPU burst policy"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NodeSLO is the set of QoS strategies for one node. It is cluster-scoped and has the node's name.
type NodeSLO struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the strategies.
	// +optional
	Spec NodeSLOSpec `json:"spec,omitempty"`
	// Status is empty.
	// +optional
	Status NodeSLOStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NodeSLOList is a list of NodeSLO.
type NodeSLOList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the NodeSLOs.
	Items []NodeSLO `json:"items"`
}
