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

// Package calculator computes the batch and mid resources of a node (kubernetes.io/batch-cpu, batch-memory,
// mid-cpu, mid-memory) from the node, its NodeMetric, its pods and its colocation strategy, and decides when
// the node must be updated. It makes no API calls and keeps no state: the same input gives the same result.
//
// Batch resources (Koordinator's batchresource plugin):
//
//	SafetyMargin = Capacity × (100 − reclaimThresholdPercent)%
//	NodeReserved = max(Capacity − Allocatable, node.koordinator.sh/reservation)
//	SystemUsed   = max(system usage + usage of high-priority host applications, NodeReserved)
//	usage:           Batch = Capacity − SafetyMargin − SystemUsed − HPUsed
//	request:         Batch = Capacity − SafetyMargin − NodeReserved − HPRequest      (memory only)
//	maxUsageRequest: Batch = Capacity − SafetyMargin − SystemUsed − HPMaxUsedReq
//
// clamped at 0 and capped at Capacity × batchThresholdPercent% when that is set. High-priority (HP) pods are
// the running and pending pods whose priority class is neither koord-batch nor koord-free.
//
// Mid resources (the midresource plugin), in static mode min(Capacity × midStaticReservedPercent%,
// Capacity × midThresholdPercent%), otherwise
//
//	Mid = min(max(min(ProdReclaimable, Capacity − NodeUsage), 0) + Unallocated × midUnallocatedPercent%,
//	          Capacity × midThresholdPercent%)
//
// where Unallocated = max(Capacity − max(NodeReserved, system usage + prod host applications) − prod requests, 0).
//
// where ProdReclaimable is koordlet's prediction, the NodeMetric's prodReclaimableMetric (0 when it is missing or
// empty). Both tiers are removed from the node when colocation is off or the NodeMetric is missing or older than
// degradeTimeMinutes.
package calculator

import (
	"fmt"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Input is everything the calculation for one node reads.
type Input struct {
	// Node is the node; its capacity, allocatable and annotations are read.
	Node *corev1.Node
	// NodeMetric is the node's NodeMetric, or nil when there is none.
	NodeMetric *slov1alpha1.NodeMetric
	// Pods are the pods bound to the node, in any phase.
	Pods []*corev1.Pod
	// Strategy is the node's colocation strategy, with node-label overrides applied. Nil fields take
	// Koordinator's defaults.
	Strategy *configuration.ColocationStrategy
	// Now is the current time, for the staleness of the NodeMetric.
	Now time.Time
	// UnreportedPodsUsageOnly counts a high-priority pod the NodeMetric does not report yet as Koordinator does:
	// its request in HPUsed only, so that the maxUsageRequest policy leaves it out. By default (false) its request
	// counts in HPMaxUsedReq too: a pod just placed holds at least its request.
	UnreportedPodsUsageOnly bool
}

// ResetReason says why a tier's resources are removed from the node. The values are bounded, so they can be
// metric labels.
type ResetReason string

// Reset reasons.
const (
	// ResetColocationDisabled: the strategy's enable is false.
	ResetColocationDisabled ResetReason = "ColocationDisabled"
	// ResetNodeMetricMissing: the node has no NodeMetric.
	ResetNodeMetricMissing ResetReason = "NodeMetricMissing"
	// ResetNodeMetricNoUpdateTime: the NodeMetric has no status.updateTime.
	ResetNodeMetricNoUpdateTime ResetReason = "NodeMetricNoUpdateTime"
	// ResetNodeMetricStale: the NodeMetric is older than degradeTimeMinutes.
	ResetNodeMetricStale ResetReason = "NodeMetricStale"
	// ResetNodeUsageMissing: the NodeMetric has no status.nodeMetric, so the system usage is unknown.
	ResetNodeUsageMissing ResetReason = "NodeUsageMissing"
)

// Tier is the result for one tier of colocation resources (batch or mid).
type Tier struct {
	// Reset, when set, means the tier's resources are to be removed from the node; CPU and Memory are then 0.
	Reset ResetReason
	// Message explains Reset to a person.
	Message string
	// CPU is the CPU to offer, in milli-cores: the value of batch-cpu or mid-cpu.
	CPU int64
	// Memory is the memory to offer, in bytes.
	Memory int64
}

// Terms are the terms of one resource's batch and mid formulas: the amounts its results were computed from,
// in milli-cores for cpu and bytes for memory. Which are meaningful is told by Result.UsageKnown,
// Result.MidPredicted and HasThresholdCap. (Input is what the calculation reads; Terms what it derived.)
type Terms struct {
	// Capacity is the node's status.capacity.
	Capacity int64
	// ReclaimPercent is the reclaim threshold percent in effect.
	ReclaimPercent int64
	// SafetyMargin is Capacity × (100 − ReclaimPercent)%; negative when ReclaimPercent is above 100.
	SafetyMargin int64
	// NodeReserved is max(Capacity − Allocatable, node.koordinator.sh/reservation).
	NodeReserved int64
	// SystemUsed is max(system usage + high-priority host application usage, NodeReserved).
	SystemUsed int64
	// HPRequest is the sum of the requests of the high-priority pods.
	HPRequest int64
	// HPUsed is the sum of their usages (requests when they have no metric; CPU requests for LSE pods) plus
	// the usage of high-priority pods reported in the NodeMetric but not listed.
	HPUsed int64
	// HPMaxUsedReq is the sum of max(request, usage) over the same pods.
	HPMaxUsedReq int64
	// ThresholdCap is Capacity × batchThresholdPercent%, when HasThresholdCap.
	ThresholdCap int64
	// HasThresholdCap tells whether a batch threshold percent is set.
	HasThresholdCap bool
	// ProdReclaimable is the NodeMetric's prodReclaimableMetric.
	ProdReclaimable int64
	// NodeUnused is Capacity − node usage, or 0 when the node usage lacks cpu or memory.
	NodeUnused int64
	// Unallocated is max(Capacity − max(NodeReserved, system usage + prod host applications) − prod requests, 0).
	Unallocated int64
	// MidThresholdCap is Capacity × midThresholdPercent%.
	MidThresholdCap int64
	// MidUnallocatedPercent is the share of Unallocated offered as mid (default mode); MidStaticPercent the
	// share of Capacity (static mode).
	MidUnallocatedPercent, MidStaticPercent int64
}

// Result is the calculation for one node.
type Result struct {
	// Batch holds batch-cpu and batch-memory.
	Batch Tier
	// Mid holds mid-cpu and mid-memory.
	Mid Tier
	// CPU holds the inputs of the cpu results.
	CPU Terms
	// Memory holds the inputs of the memory results.
	Memory Terms
	// CPUPolicy and MemoryPolicy are the calculate policies in effect.
	CPUPolicy, MemoryPolicy configuration.CalculatePolicy
	// CPUPolicyConfigured, when set, is the configured CPU policy that CPU does not support (request); usage
	// was used instead.
	CPUPolicyConfigured configuration.CalculatePolicy
	// UsageKnown tells whether SystemUsed and the HP sums were computed, i.e. the NodeMetric was usable.
	UsageKnown bool
	// MidPredicted tells whether ProdReclaimable, NodeUnused and Unallocated were computed (mid in default
	// mode, not reset).
	MidPredicted bool
	// MidStatic tells that mid was computed in static mode (a share of the capacity).
	MidStatic bool
	// CPUNormalizationRatio is the node's CPU normalization ratio that batch-cpu was multiplied by, or 0 when
	// none applied (no ratio, or a ratio not above 1).
	CPUNormalizationRatio float64
	// DegradeAt is when the NodeMetric becomes stale and the resources must be removed, or zero when the
	// NodeMetric has no update time.
	DegradeAt time.Time
	// Warnings are problems with the node's inputs that were worked around.
	Warnings []string
}

// ResourceNames are the node resources the calculation manages, in the order of Result.Values.
var ResourceNames = [4]corev1.ResourceName{extension.BatchCPU, extension.BatchMemory, extension.MidCPU, extension.MidMemory}

// Values returns the value the node should have for each of ResourceNames (milli-cores for the CPU ones, bytes
// for the memory ones) and whether the node should have the resource at all.
func (r *Result) Values() (values [4]int64, present [4]bool) {
	values = [4]int64{r.Batch.CPU, r.Batch.Memory, r.Mid.CPU, r.Mid.Memory}
	present = [4]bool{r.Batch.Reset == "", r.Batch.Reset == "", r.Mid.Reset == "", r.Mid.Reset == ""}
	return values, present
}

// Calculate computes the batch and mid resources of in.Node.
func Calculate(in Input) Result {
	s := resolve(in.Strategy)
	r := Result{CPUPolicy: s.cpuPolicy, MemoryPolicy: s.memoryPolicy, CPUPolicyConfigured: s.cpuPolicyConfigured}
	if s.memoryPolicyConfigured != "" {
		r.Warnings = append(r.Warnings, fmt.Sprintf("memoryCalculatePolicy %q is not supported, usage was used", s.memoryPolicyConfigured))
	}
	node := in.Node
	if node == nil {
		node = &corev1.Node{}
	}

	// Terms that need no metrics.
	r.CPU.Capacity = milliCPU(node.Status.Capacity)
	r.Memory.Capacity = memoryBytes(node.Status.Capacity)
	r.CPU.ReclaimPercent, r.Memory.ReclaimPercent = s.cpuReclaimPercent, s.memoryReclaimPercent
	r.CPU.SafetyMargin = quantity.PercentOf(r.CPU.Capacity, 100-s.cpuReclaimPercent)
	r.Memory.SafetyMargin = quantity.PercentOf(r.Memory.Capacity, 100-s.memoryReclaimPercent)
	annotationCPU, annotationMemory := r.reservationFromAnnotation(node)
	r.CPU.NodeReserved = max(r.CPU.Capacity-milliCPU(node.Status.Allocatable), annotationCPU, 0)
	r.Memory.NodeReserved = max(r.Memory.Capacity-memoryBytes(node.Status.Allocatable), annotationMemory, 0)
	if s.batchCPUThresholdPercent != nil {
		r.CPU.ThresholdCap, r.CPU.HasThresholdCap = quantity.PercentOf(r.CPU.Capacity, *s.batchCPUThresholdPercent), true
	}
	if s.batchMemoryThresholdPercent != nil {
		r.Memory.ThresholdCap, r.Memory.HasThresholdCap = quantity.PercentOf(r.Memory.Capacity, *s.batchMemoryThresholdPercent), true
	}
	r.CPU.MidThresholdCap = quantity.PercentOf(r.CPU.Capacity, s.midCPUThresholdPercent)
	r.Memory.MidThresholdCap = quantity.PercentOf(r.Memory.Capacity, s.midMemoryThresholdPercent)

	if reason, message := r.degrade(&s, in.NodeMetric, in.Now); reason != "" {
		r.Batch = Tier{Reset: reason, Message: message}
		r.Mid = Tier{Reset: reason, Message: message}
		return r
	}

	usage := sumUsage(in.Pods, in.NodeMetric, !in.UnreportedPodsUsageOnly)
	r.UsageKnown = true
	r.CPU.HPRequest, r.Memory.HPRequest = usage.hpRequest.cpu, usage.hpRequest.memory
	r.CPU.HPUsed, r.Memory.HPUsed = usage.hpUsed.cpu, usage.hpUsed.memory
	r.CPU.HPMaxUsedReq, r.Memory.HPMaxUsedReq = usage.hpMaxUsedReq.cpu, usage.hpMaxUsedReq.memory

	system := in.NodeMetric.Status.NodeMetric.SystemUsage.ResourceList
	systemCPU, systemMemory := milliCPU(system), memoryBytes(system)
	batchHostCPU, batchHostMemory, midHostCPU, midHostMemory := hostApplicationUsage(in.NodeMetric)
	r.CPU.SystemUsed = max(systemCPU+batchHostCPU, r.CPU.NodeReserved)
	r.Memory.SystemUsed = max(systemMemory+batchHostMemory, r.Memory.NodeReserved)

	r.Batch.CPU = batchAmount(&r.CPU, s.cpuPolicy)
	r.Batch.Memory = batchAmount(&r.Memory, s.memoryPolicy)
	r.normalizeBatchCPU(node)

	if s.midStatic {
		r.MidStatic = true
		r.CPU.MidStaticPercent, r.Memory.MidStaticPercent = s.midStaticCPUPercent, s.midStaticMemoryPercent
		r.Mid.CPU = max(min(quantity.PercentOf(r.CPU.Capacity, s.midStaticCPUPercent), r.CPU.MidThresholdCap), 0)
		r.Mid.Memory = max(min(quantity.PercentOf(r.Memory.Capacity, s.midStaticMemoryPercent), r.Memory.MidThresholdCap), 0)
		return r
	}
	// A missing or empty prodReclaimableMetric (koordlet has no prediction yet, or predicts nothing) counts as
	// nothing reclaimable, so the unallocated share (midUnallocatedPercent) is still offered, as in Koordinator.
	r.MidPredicted = true
	if reclaimable := in.NodeMetric.Status.ProdReclaimableMetric; reclaimable != nil {
		r.CPU.ProdReclaimable = milliCPU(reclaimable.Resource.ResourceList)
		r.Memory.ProdReclaimable = memoryBytes(reclaimable.Resource.ResourceList)
	}
	if nodeUsage := in.NodeMetric.Status.NodeMetric.NodeUsage.ResourceList; hasCPUAndMemory(nodeUsage) {
		r.CPU.NodeUnused = r.CPU.Capacity - milliCPU(nodeUsage)
		r.Memory.NodeUnused = r.Memory.Capacity - memoryBytes(nodeUsage)
	}
	r.CPU.Unallocated = max(r.CPU.Capacity-max(r.CPU.NodeReserved, systemCPU+midHostCPU)-usage.prodRequest.cpu, 0)
	r.Memory.Unallocated = max(r.Memory.Capacity-max(r.Memory.NodeReserved, systemMemory+midHostMemory)-usage.prodRequest.memory, 0)
	r.CPU.MidUnallocatedPercent, r.Memory.MidUnallocatedPercent = s.midUnallocatedPercent, s.midUnallocatedPercent
	r.Mid.CPU = midAmount(&r.CPU, s.midUnallocatedPercent)
	r.Mid.Memory = midAmount(&r.Memory, s.midUnallocatedPercent)
	return r
}

// degrade returns why the resources must be removed, or "" when the NodeMetric is usable. It sets DegradeAt.
func (r *Result) degrade(s *settings, nm *slov1alpha1.NodeMetric, now time.Time) (ResetReason, string) {
	if nm != nil && nm.Status.UpdateTime != nil {
		r.DegradeAt = nm.Status.UpdateTime.Add(s.degradeTime)
	}
	switch {
	case !s.enable:
		return ResetColocationDisabled, "colocation is disabled (colocation-config enable is false for this node)"
	case nm == nil:
		return ResetNodeMetricMissing, "the node has no NodeMetric"
	case nm.Status.UpdateTime == nil:
		return ResetNodeMetricNoUpdateTime, "the NodeMetric has no status.updateTime"
	case now.After(r.DegradeAt):
		return ResetNodeMetricStale, fmt.Sprintf("the NodeMetric was last updated at %s, more than degradeTimeMinutes (%s) ago",
			nm.Status.UpdateTime.UTC().Format(time.RFC3339), s.degradeTime)
	case nm.Status.NodeMetric == nil:
		return ResetNodeUsageMissing, "the NodeMetric has no status.nodeMetric"
	}
	return "", ""
}

// reservationFromAnnotation returns the CPU (milli-cores) and memory reserved by the node.koordinator.sh/reservation
// annotation. reservedCPUs, when set, counts whole CPUs and takes precedence over resources.cpu. An unreadable
// annotation reserves nothing and adds a warning.
func (r *Result) reservationFromAnnotation(node *corev1.Node) (cpu, memory int64) {
	if _, ok := node.Annotations[extension.AnnotationNodeReservation]; !ok {
		return 0, 0
	}
	reservation, err := extension.GetNodeReservation(node.Annotations)
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("ignored: %v", err))
		return 0, 0
	}
	if reservation == nil {
		return 0, 0
	}
	cpu, memory = milliCPU(reservation.Resources), memoryBytes(reservation.Resources)
	if reservation.ReservedCPUs != "" {
		cpus, _ := extension.ParseCPUSet(reservation.ReservedCPUs) // validated by GetNodeReservation
		cpu = int64(len(cpus)) * 1000
	}
	return cpu, memory
}

// normalizeBatchCPU multiplies batch-cpu by the node's CPU normalization ratio when it is above 1, rounding up
// to whole milli-cores. An unreadable ratio is ignored with a warning.
func (r *Result) normalizeBatchCPU(node *corev1.Node) {
	value, ok := node.Annotations[extension.AnnotationCPUNormalizationRatio]
	if !ok {
		return
	}
	ratio, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("ignored: annotation %q: %q is not a usable ratio",
			extension.AnnotationCPUNormalizationRatio, value))
		return
	}
	if ratio <= 1 {
		return
	}
	r.CPUNormalizationRatio = ratio
	// In micro-cores first, truncated, then rounded up to milli-cores: 22.2 becomes 23.
	micro := float64(r.Batch.CPU) * 1000 * ratio
	if micro >= math.MaxInt64-1000 {
		r.Batch.CPU = math.MaxInt64 / 1000
		return
	}
	r.Batch.CPU = (int64(micro) + 999) / 1000
}

// batchAmount applies the policy's formula to one resource.
func batchAmount(in *Terms, policy configuration.CalculatePolicy) int64 {
	var v int64
	switch policy {
	case configuration.CalculateByPodRequest:
		v = in.Capacity - in.SafetyMargin - in.NodeReserved - in.HPRequest
	case configuration.CalculateByPodMaxUsageRequest:
		v = in.Capacity - in.SafetyMargin - in.SystemUsed - in.HPMaxUsedReq
	default:
		v = in.Capacity - in.SafetyMargin - in.SystemUsed - in.HPUsed
	}
	if in.HasThresholdCap {
		v = min(v, in.ThresholdCap)
	}
	return max(v, 0)
}

// midAmount applies the default-mode mid formula to one resource.
func midAmount(in *Terms, unallocatedPercent int64) int64 {
	v := max(min(in.ProdReclaimable, in.NodeUnused), 0) + quantity.PercentOf(in.Unallocated, unallocatedPercent)
	return max(min(v, in.MidThresholdCap), 0)
}

// amounts is a cpu (milli-cores) and memory (bytes) pair.
type amounts struct {
	cpu, memory int64
}

func (a *amounts) add(cpu, memory int64) {
	a.cpu += cpu
	a.memory += memory
}

// podUsage holds the sums over a node's pods.
type podUsage struct {
	hpRequest, hpUsed, hpMaxUsedReq amounts
	// prodRequest is the sum of the requests of running and pending pods that are neither mid, batch nor free.
	prodRequest amounts
}

// podKey identifies a pod in the NodeMetric.
type podKey struct {
	namespace, name string
}

// sumUsage sums the requests and usages of the high-priority pods. nm must not be nil. The request of a pod nm
// does not report stands in for its usage in hpUsed, and in hpMaxUsedReq when unreportedInMaxUsedReq.
func sumUsage(pods []*corev1.Pod, nm *slov1alpha1.NodeMetric, unreportedInMaxUsedReq bool) podUsage {
	var u podUsage
	metrics := nm.Status.PodsMetric
	index := make(map[podKey]int, len(metrics))
	for i := range metrics {
		index[podKey{metrics[i].Namespace, metrics[i].Name}] = i
	}
	matched := make([]bool, len(metrics))

	for _, pod := range pods {
		// The phase filter comes first: a finished pod that is still reported counts as dangling below.
		if pod == nil || (pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodPending) {
			continue
		}
		i, hasMetric := index[podKey{pod.Namespace, pod.Name}]
		if hasMetric {
			matched[i] = true
		}
		class := extension.GetPodPriorityClassWithDefault(pod)
		if class == extension.PriorityBatch || class == extension.PriorityFree {
			continue
		}
		reqCPU, reqMemory := podRequests(pod)
		if class != extension.PriorityMid {
			u.prodRequest.add(reqCPU, reqMemory)
		}
		u.hpRequest.add(reqCPU, reqMemory)
		if !hasMetric {
			// Not reported yet: its request stands in for its usage.
			u.hpUsed.add(reqCPU, reqMemory)
			if unreportedInMaxUsedReq {
				u.hpMaxUsedReq.add(reqCPU, reqMemory)
			}
			continue
		}
		usage := metrics[i].PodUsage.ResourceList
		useCPU, useMemory := milliCPU(usage), memoryBytes(usage)
		u.hpMaxUsedReq.add(max(reqCPU, useCPU), max(reqMemory, useMemory))
		if extension.GetPodQoSClassWithDefault(pod) == extension.QoSLSE {
			// LSE pods hold their CPUs exclusively: what they do not use cannot be reclaimed.
			useCPU = reqCPU
		}
		u.hpUsed.add(useCPU, useMemory)
	}

	// Pods reported but not listed (deleted, finished, or not yet seen) count unless reported as batch or free.
	for i := range metrics {
		if matched[i] {
			continue
		}
		switch extension.PriorityClass(metrics[i].Priority) {
		case extension.PriorityBatch, extension.PriorityFree:
			continue
		}
		usage := metrics[i].PodUsage.ResourceList
		useCPU, useMemory := milliCPU(usage), memoryBytes(usage)
		u.hpUsed.add(useCPU, useMemory)
		u.hpMaxUsedReq.add(useCPU, useMemory)
	}
	return u
}

// hostApplicationUsage sums the usage of the host applications above batch (prod, mid and those without a
// priority) and above mid (prod and those without a priority).
func hostApplicationUsage(nm *slov1alpha1.NodeMetric) (batchCPU, batchMemory, midCPU, midMemory int64) {
	for i := range nm.Status.HostApplicationMetric {
		app := &nm.Status.HostApplicationMetric[i]
		class := extension.PriorityClass(app.Priority)
		if class == extension.PriorityBatch || class == extension.PriorityFree {
			continue
		}
		cpu, memory := milliCPU(app.Usage.ResourceList), memoryBytes(app.Usage.ResourceList)
		batchCPU += cpu
		batchMemory += memory
		if class != extension.PriorityMid {
			midCPU += cpu
			midMemory += memory
		}
	}
	return batchCPU, batchMemory, midCPU, midMemory
}

// podRequests returns the cpu (milli-cores) and memory (bytes) requests of a pod as the scheduler counts them:
// pod-level requests when set, else the sum over containers and restartable init containers (sidecars), or
// the largest init container (plus the sidecars started before it) when that is larger; plus the overhead.
// It follows k8s.io/component-helpers/resource.PodRequests for cpu and memory only, on int64 amounts: the
// library builds ResourceLists per pod, which would dominate a pass over 100k pods (BenchmarkCalculateCluster).
func podRequests(pod *corev1.Pod) (cpu, memory int64) {
	var sum, sidecars, initMax amounts
	for i := range pod.Spec.Containers {
		sum.add(requests(&pod.Spec.Containers[i]))
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		reqCPU, reqMemory := requests(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum.add(reqCPU, reqMemory)
			sidecars.add(reqCPU, reqMemory)
			initMax.cpu, initMax.memory = max(initMax.cpu, sidecars.cpu), max(initMax.memory, sidecars.memory)
			continue
		}
		initMax.cpu = max(initMax.cpu, reqCPU+sidecars.cpu)
		initMax.memory = max(initMax.memory, reqMemory+sidecars.memory)
	}
	cpu, memory = max(sum.cpu, initMax.cpu), max(sum.memory, initMax.memory)
	if r := pod.Spec.Resources; r != nil {
		if _, ok := r.Requests[corev1.ResourceCPU]; ok {
			cpu = milliCPU(r.Requests)
		}
		if _, ok := r.Requests[corev1.ResourceMemory]; ok {
			memory = memoryBytes(r.Requests)
		}
	}
	return cpu + milliCPU(pod.Spec.Overhead), memory + memoryBytes(pod.Spec.Overhead)
}

// requests returns a container's cpu and memory requests.
func requests(c *corev1.Container) (cpu, memory int64) {
	return milliCPU(c.Resources.Requests), memoryBytes(c.Resources.Requests)
}

// milliCPU returns the cpu in list in milli-cores, rounded up; 0 when missing.
func milliCPU(list corev1.ResourceList) int64 { return quantity.ValueIn(list, corev1.ResourceCPU) }

// memoryBytes returns the memory in list in bytes, rounded up; 0 when missing.
func memoryBytes(list corev1.ResourceList) int64 {
	return quantity.ValueIn(list, corev1.ResourceMemory)
}

// hasCPUAndMemory tells whether list has both cpu and memory.
func hasCPUAndMemory(list corev1.ResourceList) bool {
	_, hasCPU := list[corev1.ResourceCPU]
	_, hasMemory := list[corev1.ResourceMemory]
	return hasCPU && hasMemory
}
