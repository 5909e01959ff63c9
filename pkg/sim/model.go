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

package sim

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpusuppress"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Shares of the request a pod without AnnotationUsage uses, constantly.
const (
	// DefaultCPUFraction is the share of its CPU request (batch-cpu for BE pods) a pod uses by default.
	DefaultCPUFraction = 0.5
	// DefaultMemoryFraction is the share of its memory request (batch-memory for BE pods) a pod uses by default.
	DefaultMemoryFraction = 0.7
)

// PodModel is the simulated usage of one pod.
type PodModel struct {
	// UID is the pod's UID; its series are keyed by it.
	UID types.UID
	// BE tells that the pod's Koordinator QoS class is BE: its CPU is suppressed and it may be evicted.
	BE bool
	// Mid tells that the pod's priority class is koord-mid: it runs on the mid tier's resources.
	Mid bool
	// CPU is the CPU profile, in cores.
	CPU Profile
	// Memory is the memory profile, in bytes.
	Memory Profile
	// CPULimit caps the CPU usage, in cores; +Inf for none.
	CPULimit float64
	// MemoryLimit caps the memory usage, in bytes; +Inf for none.
	MemoryLimit float64
	// Since is when the pod started running: it has samples from then on.
	Since time.Time
	// Until is when the pod stopped (evicted, deleted or terminated); zero while it runs. It has no samples from
	// then on.
	Until time.Time

	// cpuSeed and memorySeed are the burst seeds of the profiles (see Seed).
	cpuSeed, memorySeed uint64
}

// NewPodModel returns the model of pod: the profiles of its AnnotationUsage where set, elsewhere a constant
// DefaultCPUFraction of its CPU request and DefaultMemoryFraction of its memory request, and limits from its
// containers. BE pods (GetPodQoSClassWithDefault) count their batch-cpu and batch-memory requests and limits
// when they have any, koord-mid pods their mid-cpu and mid-memory ones, their cpu and memory ones otherwise. A malformed annotation is returned as the error
// along with the default model, which is what the simulation then uses. Since and Until are left for the
// caller.
func NewPodModel(pod *corev1.Pod) (PodModel, error) {
	be := extension.GetPodQoSClassWithDefault(pod) == extension.QoSBE
	mid := extension.GetPodPriorityClassWithDefault(pod) == extension.PriorityMid
	cpuName, memName := corev1.ResourceCPU, corev1.ResourceMemory
	switch {
	case be && usesColocationResources(pod, extension.BatchCPU, extension.BatchMemory):
		cpuName, memName = extension.BatchCPU, extension.BatchMemory
	case mid && usesColocationResources(pod, extension.MidCPU, extension.MidMemory):
		cpuName, memName = extension.MidCPU, extension.MidMemory
	}
	cpuReq, cpuLim := podResource(pod, cpuName)
	memReq, memLim := podResource(pod, memName)
	m := PodModel{
		UID:         pod.UID,
		BE:          be,
		Mid:         mid,
		CPU:         Constant(DefaultCPUFraction * cpuReq),
		Memory:      Constant(DefaultMemoryFraction * memReq),
		CPULimit:    cpuLim,
		MemoryLimit: memLim,
		cpuSeed:     Seed(pod.UID, corev1.ResourceCPU),
		memorySeed:  Seed(pod.UID, corev1.ResourceMemory),
	}
	value, ok := pod.Annotations[AnnotationUsage]
	if !ok {
		return m, nil
	}
	u, err := ParseUsage(value)
	if err != nil {
		return m, err
	}
	if u.CPU != nil {
		m.CPU = *u.CPU
	}
	if u.Memory != nil {
		m.Memory = *u.Memory
	}
	return m, nil
}

// at returns the pod's CPU (cores) and memory (bytes) demand at ns, capped by its limits, and whether it ran
// then.
func (p *PodModel) at(ns int64) (cpu, mem float64, ok bool) {
	if ns < p.Since.UnixNano() || (!p.Until.IsZero() && ns >= p.Until.UnixNano()) {
		return 0, 0, false
	}
	return min(p.CPU.at(ns, p.cpuSeed), p.CPULimit), min(p.Memory.at(ns, p.memorySeed), p.MemoryLimit), true
}

// usesColocationResources reports whether any container of pod requests or limits cpu or memory, the batch or
// mid resources given (deprecated names included).
func usesColocationResources(pod *corev1.Pod, cpu, memory corev1.ResourceName) bool {
	has := func(l corev1.ResourceList) bool {
		for name := range l {
			if n := extension.NormalizeResourceName(name); n == cpu || n == memory {
				return true
			}
		}
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if has(cs[i].Resources.Requests) || has(cs[i].Resources.Limits) {
				return true
			}
		}
	}
	return false
}

// podResource returns the pod's request and limit of name (cores for the CPU resources, bytes otherwise): the
// sum over its app containers and sidecars (init containers that keep running), pod-level resources taking
// precedence. A request left out next to a limit counts as the limit, as API defaulting makes it; the limit is
// +Inf when any container has none.
func podResource(pod *corev1.Pod, name corev1.ResourceName) (request, limit float64) {
	value := func(l corev1.ResourceList) (float64, bool) {
		for n, q := range l {
			if extension.NormalizeResourceName(n) == name {
				return quantityValue(name, q), true
			}
		}
		return 0, false
	}
	if r := pod.Spec.Resources; r != nil {
		req, hasReq := value(r.Requests)
		lim, hasLim := value(r.Limits)
		if hasReq || hasLim {
			if !hasReq {
				req = lim
			}
			if !hasLim {
				lim = math.Inf(1)
			}
			return req, lim
		}
	}
	var containers []*corev1.Container
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}
	for i := range pod.Spec.Containers {
		containers = append(containers, &pod.Spec.Containers[i])
	}
	if len(containers) == 0 {
		return 0, math.Inf(1)
	}
	for _, c := range containers {
		req, hasReq := value(c.Resources.Requests)
		lim, hasLim := value(c.Resources.Limits)
		if !hasReq && hasLim {
			req = lim
		}
		request += req
		if hasLim {
			limit += lim
		} else {
			limit = math.Inf(1)
		}
	}
	return request, limit
}

// quantityValue returns q in cores for the CPU resources (batch-cpu and mid-cpu count milli-cores) and as a
// plain number otherwise.
func quantityValue(name corev1.ResourceName, q resource.Quantity) float64 {
	v := float64(quantity.Value(name, q))
	if quantity.IsCPU(name) {
		v /= 1000
	}
	return v
}

// Suppression is the BE CPU suppression in force on a node (resourceUsedThresholdWithBE enabled).
type Suppression struct {
	// Policy is cpuSuppressPolicy: cpuset gives the BE pods max(ceil(BEAllowed), 2) whole CPUs, cfsQuota
	// BEAllowed (at least the minimum quota).
	Policy slov1alpha1.CPUSuppressPolicy
	// ThresholdPercent is cpuSuppressThresholdPercent.
	ThresholdPercent int64
	// MinPercent is cpuSuppressMinPercent; nil for no floor.
	MinPercent *int64
	// NodeReserved is the CPU, in cores, reserved on the node (kubelet's and the node annotation's).
	NodeReserved float64
}

// NodeModel is the simulated usage of one node: its pods' usage plus a constant system usage (daemons and
// kernel), with BE pods' CPU suppressed when Suppression is set.
type NodeModel struct {
	// CPUCapacity is the node's CPU capacity in cores.
	CPUCapacity float64
	// MemoryCapacity is the node's memory capacity in bytes.
	MemoryCapacity float64
	// SystemCPU is the CPU, in cores, used outside pods.
	SystemCPU float64
	// SystemMemory is the memory, in bytes, used outside pods.
	SystemMemory float64
	// Since is when the node's agent started: the node and system series have samples from then on.
	Since time.Time
	// Pods are the pods that run or ran on the node within the retention.
	Pods []PodModel
	// Suppression is the BE CPU suppression in force; nil for none.
	Suppression *Suppression
	// LSThresholdPercent is the share of the CPU capacity above which the non-BE pods' usage counts as an LS
	// threshold breach (cpuSuppressThresholdPercent, 65 by default, whether suppression is on or not).
	LSThresholdPercent int64
}

// Moment is the state of a node model at one time. CPU is in cores, memory in bytes.
type Moment struct {
	// Time is the time of the moment.
	Time time.Time
	// NodeCPU is the node's CPU usage: pods plus system.
	NodeCPU float64
	// NodeMemory is the node's memory usage: pods plus system.
	NodeMemory float64
	// LSCPU is the CPU usage of the pods that are not BE.
	LSCPU float64
	// MidCPU is the CPU usage of the koord-mid pods, part of LSCPU.
	MidCPU float64
	// BECPU is the CPU usage of the BE pods, after suppression.
	BECPU float64
	// BEDemandCPU is the CPU the BE pods' profiles ask for, within their limits.
	BEDemandCPU float64
	// BEAllowedCPU is the suppression formula's result (cpusuppress.BEAllowed); +Inf when suppression is off.
	BEAllowedCPU float64
	// BELimitCPU is what suppression allows the BE pods: BEAllowedCPU as the policy applies it (whole CPUs
	// for cpuset, at least the minimum quota for cfsQuota); +Inf when suppression is off.
	BELimitCPU float64
	// Suppressed tells that the BE pods were scaled down to BELimitCPU.
	Suppressed bool
	// LSThresholdBreached tells that LSCPU exceeds LSThresholdPercent of the capacity.
	LSThresholdBreached bool
	// Pods is the number of pods running.
	Pods int
	// BEPods is the number of BE pods running.
	BEPods int
	// MidPods is the number of koord-mid pods running that are not BE.
	MidPods int
}

// At returns the state of the model at t.
func (m *NodeModel) At(t time.Time) Moment {
	cpu := make([]float64, len(m.Pods))
	mem := make([]float64, len(m.Pods))
	mo := m.eval(t.UnixNano(), cpu, mem)
	mo.Time = t
	return mo
}

// PodUsage is one running pod's usage at a moment.
type PodUsage struct {
	// UID identifies the pod; Namespace and Name are filled by the caller that knows the pod object.
	UID             types.UID
	Namespace, Name string
	// CPU is in cores, after suppression; Memory in bytes.
	CPU, Memory float64
}

// AtWithPods returns the state of the model at t and the usage of each pod running then, in the order of
// m.Pods.
func (m *NodeModel) AtWithPods(t time.Time) (Moment, []PodUsage) {
	cpu := make([]float64, len(m.Pods))
	mem := make([]float64, len(m.Pods))
	mo := m.eval(t.UnixNano(), cpu, mem)
	mo.Time = t
	pods := make([]PodUsage, 0, mo.Pods)
	for i := range m.Pods {
		if !math.IsNaN(cpu[i]) {
			pods = append(pods, PodUsage{UID: m.Pods[i].UID, CPU: cpu[i], Memory: mem[i]})
		}
	}
	return mo, pods
}

// PodAt returns the CPU (cores) and memory (bytes) usage at t of the pod with uid, after suppression, and
// whether it ran then.
func (m *NodeModel) PodAt(uid types.UID, t time.Time) (cpu, mem float64, ok bool) {
	cpus := make([]float64, len(m.Pods))
	mems := make([]float64, len(m.Pods))
	m.eval(t.UnixNano(), cpus, mems)
	for i := range m.Pods {
		if m.Pods[i].UID == uid {
			return cpus[i], mems[i], !math.IsNaN(cpus[i])
		}
	}
	return 0, 0, false
}

// eval fills cpu and mem (of len(m.Pods)) with each pod's usage at ns, NaN for a pod not running then, and
// returns the node's totals. Moment.Time is left unset.
func (m *NodeModel) eval(ns int64, cpu, mem []float64) Moment {
	mo := Moment{BEAllowedCPU: math.Inf(1), BELimitCPU: math.Inf(1)}
	for i := range m.Pods {
		p := &m.Pods[i]
		c, r, ok := p.at(ns)
		if !ok {
			cpu[i], mem[i] = math.NaN(), math.NaN()
			continue
		}
		cpu[i], mem[i] = c, r
		mo.Pods++
		mo.NodeMemory += r
		if p.BE {
			mo.BEPods++
			mo.BEDemandCPU += c
		} else {
			mo.LSCPU += c
			if p.Mid {
				mo.MidCPU += c
				mo.MidPods++
			}
		}
	}
	mo.BECPU = mo.BEDemandCPU
	if s := m.Suppression; s != nil {
		mo.BEAllowedCPU, mo.BELimitCPU = m.beLimit(s, mo.LSCPU)
		if mo.BEDemandCPU > mo.BELimitCPU {
			mo.Suppressed = true
			scale := mo.BELimitCPU / mo.BEDemandCPU
			for i := range m.Pods {
				if m.Pods[i].BE && !math.IsNaN(cpu[i]) {
					cpu[i] *= scale
				}
			}
			mo.BECPU = mo.BELimitCPU
		}
	}
	mo.LSThresholdBreached = mo.LSCPU*100 > m.CPUCapacity*float64(m.LSThresholdPercent)
	mo.NodeCPU = mo.LSCPU + mo.BECPU + m.SystemCPU
	mo.NodeMemory += m.SystemMemory
	return mo
}

// beLimit returns the CPU the BE pods may use under s when the other pods use lsCPU: BEAllowed of the
// suppression strategy, and that turned into whole CPUs (at least 2, at most the capacity) under the cpuset
// policy or into at least the minimum CFS quota under the cfsQuota policy.
func (m *NodeModel) beLimit(s *Suppression, lsCPU float64) (allowed, limit float64) {
	allowed = cpusuppress.BEAllowed(cpusuppress.Inputs{
		Capacity:         m.CPUCapacity,
		ThresholdPercent: s.ThresholdPercent,
		MinPercent:       s.MinPercent,
		NonBEPodsUsage:   lsCPU,
		SystemUsage:      m.SystemCPU,
		NodeReserved:     s.NodeReserved,
	})
	if s.Policy == slov1alpha1.CPUCfsQuotaPolicy {
		return allowed, max(allowed, float64(cpusuppress.MinQuotaUs)/cfsPeriodUs)
	}
	cpus := int(math.Floor(m.CPUCapacity))
	return allowed, float64(cpusuppress.CPUSetSize(allowed, cpus, cpus, cpus))
}

// cfsPeriodUs is the CFS period of the besteffort cgroup, 100 ms.
const cfsPeriodUs = 100000
