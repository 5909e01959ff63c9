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

	"k8s.io/component-base/featuregate"
)

// Feature gates of koordlet. The names are Koordinator's (pkg/features/koordlet_features.go and the runtime-hook
// gates of pkg/koordlet/runtimehooks/config.go) with Koordinator's meaning, so a Koordinator DaemonSet's
// --feature-gates keeps its meaning; PodCgroupReconcile, which Koordinator has no gate for, is Koord's own.
const (
	// PodCgroupReconcile runs the periodic reconciler that writes the per-class cgroup settings of BE, LSR, LSE
	// and LS pods and repairs drift every round: what Koordinator's hooks' reconciler
	// (--runtime-hooks-reconcile-interval, not gated there) does. The NRI hooks apply BatchResource and
	// CPUSetAllocator at container creation; this loop applies them to containers created without the hooks
	// (no NRI in the runtime, koordlet away) and repairs drift. With it off, only the hooks apply them. Koord's
	// own gate (beta, on); Koordinator's CgroupReconcile, the memory QoS reconciler, is another thing.
	// owner: koordlet
	PodCgroupReconcile featuregate.Feature = "PodCgroupReconcile"
	// BatchResource sets BE pods' cpu.shares, CFS quota and memory limit from their kubernetes.io/batch-cpu and
	// kubernetes.io/batch-memory requests and limits. A runtime-hook gate in Koordinator (beta, on).
	// owner: koordlet
	BatchResource featuregate.Feature = "BatchResource"
	// CPUSetAllocator pins LSE and LSR pods to the CPUs in their scheduling.koordinator.sh/resource-status and
	// LS pods to the shared pool. A runtime-hook gate in Koordinator (beta, on).
	// owner: koordlet
	CPUSetAllocator featuregate.Feature = "CPUSetAllocator"
	// BECPUSuppress limits the CPU of BE pods to what LS pods and the system leave below
	// cpuSuppressThresholdPercent, by cpuset or CFS quota (beta, on).
	// owner: koordlet
	BECPUSuppress featuregate.Feature = "BECPUSuppress"
	// CPUBurst lets LS pods burst above their CPU limit through cfs_burst_us and a raised CFS quota (beta, on).
	// owner: koordlet
	CPUBurst featuregate.Feature = "CPUBurst"
	// BEMemoryEvict evicts BE pods when node memory usage reaches memoryEvictThresholdPercent (alpha, off).
	// owner: koordlet
	BEMemoryEvict featuregate.Feature = "BEMemoryEvict"
	// BECPUEvict evicts BE pods whose CPU satisfaction stays below cpuEvictBESatisfactionLowerPercent while they
	// use their whole allowance (alpha, off).
	// owner: koordlet
	BECPUEvict featuregate.Feature = "BECPUEvict"
	// CPUEvict evicts pods labelled koordinator.sh/eviction-enabled=true with a priority up to
	// evictEnabledPriorityThreshold when the node's CPU usage reaches cpuEvictThresholdPercent (alpha, off).
	// owner: koordlet
	CPUEvict featuregate.Feature = "CPUEvict"
	// CPUAllocatableEvict evicts such pods of the mid and batch tiers when their CPU requests pass
	// cpuAllocatableEvictThresholdPercent of the node's mid-cpu or batch-cpu allocatable (alpha, off).
	// owner: koordlet
	CPUAllocatableEvict featuregate.Feature = "CPUAllocatableEvict"
	// MemoryEvict evicts pods labelled koordinator.sh/eviction-enabled=true with a priority up to
	// evictEnabledPriorityThreshold when the node's memory usage reaches memoryEvictThresholdPercent (alpha, off).
	// owner: koordlet
	MemoryEvict featuregate.Feature = "MemoryEvict"
	// MemoryAllocatableEvict evicts such pods of the mid and batch tiers when their memory requests pass
	// memoryAllocatableEvictThresholdPercent of the node's mid-memory or batch-memory allocatable (alpha, off).
	// owner: koordlet
	MemoryAllocatableEvict featuregate.Feature = "MemoryAllocatableEvict"
	// NodeTopologyReport reports the node's CPU and NUMA topology, shared CPU pools and kubelet's CPU manager
	// state as its NodeResourceTopology (topology.node.k8s.io), which koord-scheduler's NodeNUMAResource
	// reads (beta, on, as in Koordinator).
	// owner: koordlet
	NodeTopologyReport featuregate.Feature = "NodeTopologyReport"
	// Accelerators discovers the node's GPUs through NVML and reports them in its Device object (beta, on;
	// Koordinator's is alpha and off: a node without the NVML library reports none after one log line).
	// owner: koordlet
	Accelerators featuregate.Feature = "Accelerators"
	// RDMADevices discovers the node's RDMA NICs (sysfs) and reports them in its Device object (beta, on;
	// Koordinator's is alpha and off).
	// owner: koordlet
	RDMADevices featuregate.Feature = "RDMADevices"
	// GPUEnvInject gives the containers of a pod koord-scheduler allocated GPUs (its
	// scheduling.koordinator.sh/device-allocated annotation) NVIDIA_VISIBLE_DEVICES, the GPUs' device nodes
	// and, for pods isolated by HAMi-core, its limits and library, through the NRI runtime hooks (alpha, off,
	// as in Koordinator).
	// owner: koordlet
	GPUEnvInject featuregate.Feature = "GPUEnvInject"
	// RDMADeviceInject gives the containers of a pod koord-scheduler allocated RDMA NICs or virtual functions the
	// device nodes rdma_cm and uverbs<N> of them, through the NRI runtime hooks (alpha, off, as in Koordinator).
	// owner: koordlet
	RDMADeviceInject featuregate.Feature = "RDMADeviceInject"
	// SystemConfig writes the node's kernel memory settings from the NodeSLO's systemStrategy (min_free_kbytes,
	// watermark_scale_factor, memcg reaper) and writes back what they were when they are unset (alpha, off, as in
	// Koordinator).
	// owner: koordlet
	SystemConfig featuregate.Feature = "SystemConfig"
	// CgroupReconcile writes the memory QoS knobs (memory.min, memory.low, memory.high and the Anolis OS
	// watermark and OOM knobs) of pods, containers and kubelet's QoS cgroups from the NodeSLO's
	// resourceQOSStrategy memoryQOS and the pods' koordinator.sh/memoryQOS annotations (alpha, off, as in
	// Koordinator).
	// owner: koordlet
	CgroupReconcile featuregate.Feature = "CgroupReconcile"
	// GroupIdentity writes cpu.bvt.warp_ns (Anolis OS group identity) of pods, kubelet's QoS cgroups and host
	// applications from the NodeSLO's resourceQOSStrategy cpuQOS under the groupIdentity policy. A runtime-hook
	// gate in Koordinator (beta, on); a kernel without it is said once.
	// owner: koordlet
	GroupIdentity featuregate.Feature = "GroupIdentity"
	// CoreSched applies the coreSched CPU QoS policy: cpu.idle of kubelet's QoS cgroups and host applications, and
	// core scheduling cookies per pod group (alpha, off, as in Koordinator).
	// owner: koordlet
	CoreSched featuregate.Feature = "CoreSched"
	// RdtResctrl gives each class's pods its share of the last-level cache and memory bandwidth through resctrl
	// (/sys/fs/resctrl) from the NodeSLO's resourceQOSStrategy resctrlQOS (beta, on, as in Koordinator); a node
	// without resctrl is said once.
	// owner: koordlet
	RdtResctrl featuregate.Feature = "RdtResctrl"
	// PSICollector samples the pressure stall information (PSI) of the node (/proc/pressure) and of each pod and
	// host application (their cgroups' cpu, memory and io pressure) into the metric cache and Prometheus
	// gauges, for BE suppression's pressure rule (alpha, off, as in Koordinator).
	// owner: koordlet
	PSICollector featuregate.Feature = "PSICollector"
)

// koordletFeatures are the defaults of koordlet's gates: Koordinator's, and Koord's own PodCgroupReconcile.
var koordletFeatures = map[featuregate.Feature]featuregate.VersionedSpecs{
	PodCgroupReconcile:     {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	BatchResource:          {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	CPUSetAllocator:        {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	BECPUSuppress:          {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	CPUBurst:               {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	BEMemoryEvict:          {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	BECPUEvict:             {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	CPUEvict:               {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	CPUAllocatableEvict:    {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	MemoryEvict:            {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	MemoryAllocatableEvict: {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	NodeTopologyReport:     {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	Accelerators:           {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	RDMADevices:            {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	GPUEnvInject:           {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	RDMADeviceInject:       {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	SystemConfig:           {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	CgroupReconcile:        {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	GroupIdentity:          {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	CoreSched:              {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
	RdtResctrl:             {{Version: Version, Default: true, PreRelease: featuregate.Beta}},
	PSICollector:           {{Version: Version, Default: false, PreRelease: featuregate.Alpha}},
}

// koordletDependencies: none. BatchResource and CPUSetAllocator are applied by the NRI hooks and by the
// reconcile loop (PodCgroupReconcile), either of which may be off.
func koordletDependencies() map[featuregate.Feature][]featuregate.Feature {
	return map[featuregate.Feature][]featuregate.Feature{}
}

// NewKoordletGate returns a fresh gate set with koordlet's features and their dependencies. koordlet creates
// one in main, binds it to --feature-gates, resolves it once with ResolveKoordlet and passes the result down.
func NewKoordletGate() featuregate.MutableVersionedFeatureGate {
	g := featuregate.NewVersionedFeatureGate(Version)
	if err := g.AddVersioned(koordletFeatures); err != nil {
		// The specs above are static; an error here is a programming mistake caught by the package tests.
		panic(fmt.Sprintf("register koordlet feature gates: %v", err))
	}
	if err := g.AddDependencies(koordletDependencies()); err != nil {
		panic(fmt.Sprintf("register koordlet feature gate dependencies: %v", err))
	}
	return g
}

// KoordletFeatures returns koordlet's gate specs, for LogGates and docs.
func KoordletFeatures() map[featuregate.Feature]featuregate.VersionedSpecs { return koordletFeatures }

// Koordlet is the resolved state of koordlet's gates. Strategies receive it (or the fields they need) instead
// of reading a gate set.
type Koordlet struct {
	// PodCgroupReconcile is the state of the PodCgroupReconcile gate.
	PodCgroupReconcile bool
	// BatchResource is the state of the BatchResource gate.
	BatchResource bool
	// CPUSetAllocator is the state of the CPUSetAllocator gate.
	CPUSetAllocator bool
	// BECPUSuppress is the state of the BECPUSuppress gate.
	BECPUSuppress bool
	// CPUBurst is the state of the CPUBurst gate.
	CPUBurst bool
	// BEMemoryEvict is the state of the BEMemoryEvict gate.
	BEMemoryEvict bool
	// BECPUEvict is the state of the BECPUEvict gate.
	BECPUEvict bool
	// CPUEvict is the state of the CPUEvict gate.
	CPUEvict bool
	// CPUAllocatableEvict is the state of the CPUAllocatableEvict gate.
	CPUAllocatableEvict bool
	// MemoryEvict is the state of the MemoryEvict gate.
	MemoryEvict bool
	// MemoryAllocatableEvict is the state of the MemoryAllocatableEvict gate.
	MemoryAllocatableEvict bool
	// NodeTopologyReport is the state of the NodeTopologyReport gate.
	NodeTopologyReport bool
	// Accelerators is the state of the Accelerators gate.
	Accelerators bool
	// GPUEnvInject is the state of the GPUEnvInject gate.
	GPUEnvInject bool
	// RDMADeviceInject is the state of the RDMADeviceInject gate.
	RDMADeviceInject bool
	// SystemConfig is the state of the SystemConfig gate.
	SystemConfig bool
	// RDMADevices is the state of the RDMADevices gate.
	RDMADevices bool
	// CgroupReconcile is the state of the CgroupReconcile gate.
	CgroupReconcile bool
	// GroupIdentity is the state of the GroupIdentity gate.
	GroupIdentity bool
	// CoreSched is the state of the CoreSched gate.
	CoreSched bool
	// RdtResctrl is the state of the RdtResctrl gate.
	RdtResctrl bool
	// PSICollector is the state of the PSICollector gate.
	PSICollector bool
}

// ResolveKoordlet reads koordlet's gates from g, which must know them (a gate set from NewKoordletGate).
func ResolveKoordlet(g featuregate.FeatureGate) Koordlet {
	return Koordlet{
		PodCgroupReconcile:     g.Enabled(PodCgroupReconcile),
		BatchResource:          g.Enabled(BatchResource),
		CPUSetAllocator:        g.Enabled(CPUSetAllocator),
		BECPUSuppress:          g.Enabled(BECPUSuppress),
		CPUBurst:               g.Enabled(CPUBurst),
		BEMemoryEvict:          g.Enabled(BEMemoryEvict),
		BECPUEvict:             g.Enabled(BECPUEvict),
		CPUEvict:               g.Enabled(CPUEvict),
		CPUAllocatableEvict:    g.Enabled(CPUAllocatableEvict),
		MemoryEvict:            g.Enabled(MemoryEvict),
		MemoryAllocatableEvict: g.Enabled(MemoryAllocatableEvict),
		NodeTopologyReport:     g.Enabled(NodeTopologyReport),
		Accelerators:           g.Enabled(Accelerators),
		RDMADevices:            g.Enabled(RDMADevices),
		GPUEnvInject:           g.Enabled(GPUEnvInject),
		RDMADeviceInject:       g.Enabled(RDMADeviceInject),
		SystemConfig:           g.Enabled(SystemConfig),
		CgroupReconcile:        g.Enabled(CgroupReconcile),
		GroupIdentity:          g.Enabled(GroupIdentity),
		CoreSched:              g.Enabled(CoreSched),
		RdtResctrl:             g.Enabled(RdtResctrl),
		PSICollector:           g.Enabled(PSICollector),
	}
}
