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

package memoryqos

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Unlimited is the memory.high of "max".
const Unlimited = -1

// Knobs are the memory QoS values of one cgroup, in bytes for Min, Low and High; a nil field is left alone.
type Knobs struct {
	Min, Low, High                         *int64
	WmarkRatio, WmarkScaleFactor, WmarkMin *int64
	Priority, UsePriorityOOM, OOMGroup     *int64
}

// None returns Koordinator's values of a class without memory QoS: every knob off.
func None() slov1alpha1.MemoryQOS {
	return slov1alpha1.MemoryQOS{
		MinLimitPercent:   ptr.To[int64](0),
		LowLimitPercent:   ptr.To[int64](0),
		ThrottlingPercent: ptr.To[int64](0),
		WmarkRatio:        ptr.To[int64](0),
		WmarkScalePermill: ptr.To[int64](50),
		WmarkMinAdj:       ptr.To[int64](0),
		PriorityEnable:    ptr.To[int64](0),
		Priority:          ptr.To[int64](0),
		OomKillGroup:      ptr.To[int64](0),
	}
}

// ClassConfig returns the memory QoS of class qos in strategy: its knobs when enabled, None otherwise.
func ClassConfig(strategy *slov1alpha1.ResourceQOSStrategy, qos extension.QoSClass) slov1alpha1.MemoryQOS {
	c := qosmanager.ClassResourceQOS(strategy, qos)
	if c == nil || c.MemoryQOS == nil || c.MemoryQOS.Enable == nil || !*c.MemoryQOS.Enable {
		return None()
	}
	return c.MemoryQOS.MemoryQOS
}

// PodConfig returns the memory QoS of pod: its class's in strategy, or by the policy of its annotation ann
// (nil when it has none, or a malformed one), with the knobs ann sets over it.
func PodConfig(strategy *slov1alpha1.ResourceQOSStrategy, pod *corev1.Pod, ann *slov1alpha1.PodMemoryQOSConfig) slov1alpha1.MemoryQOS {
	qos := qosmanager.PodQoS(pod)
	cfg := ClassConfig(strategy, qos)
	if ann == nil {
		return cfg
	}
	switch ann.Policy {
	case slov1alpha1.PodMemoryQOSPolicyNone:
		return None()
	case slov1alpha1.PodMemoryQOSPolicyAuto:
		if c := qosmanager.ClassResourceQOS(configuration.DefaultResourceQOSStrategy(), qos); c != nil && c.MemoryQOS != nil {
			cfg = c.MemoryQOS.MemoryQOS
		} else {
			cfg = None()
		}
	}
	return *configuration.Merge(&cfg, &ann.MemoryQOS)
}

// isBatch reports whether pod's memory comes from batch-memory: a pod labelled BE, as in Koordinator.
func isBatch(pod *corev1.Pod) bool { return extension.GetPodQoSClassRaw(pod) == extension.QoSBE }

// batchBytes returns the batch-memory (or its deprecated alias) in list, 0 when absent.
func batchBytes(list corev1.ResourceList) int64 {
	for n, q := range list {
		if extension.NormalizeResourceName(n) == extension.BatchMemory {
			return max(q.Value(), 0)
		}
	}
	return 0
}

// PodRequest returns the memory request of pod in bytes: the sum of its containers' batch-memory requests for
// a BE pod; otherwise Kubernetes' pod request: the app containers and sidecars, or the largest init container
// with the sidecars started before it when that is more, plus the pod overhead.
func PodRequest(pod *corev1.Pod) int64 {
	if isBatch(pod) {
		var sum int64
		for i := range pod.Spec.Containers {
			sum += batchBytes(pod.Spec.Containers[i].Resources.Requests)
		}
		return sum
	}
	var apps, sidecars, initMax int64
	for i := range pod.Spec.Containers {
		apps += pod.Spec.Containers[i].Resources.Requests.Memory().Value()
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		req := c.Resources.Requests.Memory().Value()
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars += req
			initMax = max(initMax, sidecars)
			continue
		}
		initMax = max(initMax, sidecars+req)
	}
	return max(apps+sidecars, initMax) + pod.Spec.Overhead.Memory().Value()
}

// containerMemory returns the memory request and limit of c in bytes (batch-memory for a BE pod); the limit is
// 0 when c has none.
func containerMemory(pod *corev1.Pod, c *corev1.Container) (request, limit int64) {
	if isBatch(pod) {
		return batchBytes(c.Resources.Requests), batchBytes(c.Resources.Limits)
	}
	return max(c.Resources.Requests.Memory().Value(), 0), max(c.Resources.Limits.Memory().Value(), 0)
}

// PodKnobs returns the knobs of a pod's cgroup for cfg: memory.min and memory.low of the pod's request (see
// PodRequest), the watermarks and the OOM settings.
func PodKnobs(request int64, cfg slov1alpha1.MemoryQOS) Knobs {
	k := commonKnobs(cfg)
	k.Min, k.Low = protection(request, cfg)
	return k
}

// ContainerKnobs returns the knobs of container c's cgroup for cfg; nodeMemory (the node's allocatable memory)
// stands for the limit of a container without one.
func ContainerKnobs(pod *corev1.Pod, c *corev1.Container, cfg slov1alpha1.MemoryQOS, nodeMemory int64) Knobs {
	k := commonKnobs(cfg)
	request, limit := containerMemory(pod, c)
	k.Min, k.Low = protection(request, cfg)
	if p := cfg.ThrottlingPercent; p != nil {
		high := int64(Unlimited)
		if *p > 0 {
			if limit <= 0 {
				limit = nodeMemory
			}
			high = (request + (limit-request)**p/100) / pageSize * pageSize
			if k.Min != nil && high < *k.Min {
				high = *k.Min
			}
			if high <= 0 {
				high = Unlimited
			}
		}
		k.High = &high
	}
	return k
}

// pageSize is the unit memory.high is rounded down to, as Koordinator's formula does.
const pageSize = 4096

// protection returns memory.min and memory.low of a request, memory.low raised to memory.min.
func protection(request int64, cfg slov1alpha1.MemoryQOS) (minBytes, low *int64) {
	if p := cfg.MinLimitPercent; p != nil {
		minBytes = ptr.To(request * *p / 100)
	}
	if p := cfg.LowLimitPercent; p != nil {
		low = ptr.To(request * *p / 100)
		if minBytes != nil && *low > 0 && *low < *minBytes {
			*low = *minBytes
		}
	}
	return minBytes, low
}

func commonKnobs(cfg slov1alpha1.MemoryQOS) Knobs {
	return Knobs{
		WmarkRatio:       cfg.WmarkRatio,
		WmarkScaleFactor: cfg.WmarkScalePermill,
		WmarkMin:         cfg.WmarkMinAdj,
		Priority:         cfg.Priority,
		UsePriorityOOM:   cfg.PriorityEnable,
		OOMGroup:         cfg.OomKillGroup,
	}
}

// QoSDirKnobs returns the knobs of kubelet's QoS cgroups: kubepods (the guaranteed pods' parent) gets the sum of
// every pod's memory.min and memory.low, burstable and besteffort the sums of their pods'; each takes the OOM
// settings of the class its pods map to (LSR, LS, BE). pods holds each pod with its config.
func QoSDirKnobs(strategy *slov1alpha1.ResourceQOSStrategy, pods []PodWithConfig) map[corev1.PodQOSClass]Knobs {
	type sum struct {
		min, low       int64
		hasMin, hasLow bool
	}
	sums := map[corev1.PodQOSClass]*sum{corev1.PodQOSGuaranteed: {}, corev1.PodQOSBurstable: {}, corev1.PodQOSBestEffort: {}}
	for _, p := range pods {
		s, ok := sums[extension.GetKubeQoSClass(p.Pod)]
		if !ok {
			continue
		}
		req := p.Request
		if v := p.Config.MinLimitPercent; v != nil {
			s.min += req * *v / 100
			s.hasMin = true
		}
		if v := p.Config.LowLimitPercent; v != nil {
			s.low += req * *v / 100
			s.hasLow = true
		}
	}
	// kubepods holds every pod.
	total := sum{}
	for _, s := range sums {
		total.min += s.min
		total.low += s.low
		total.hasMin = total.hasMin || s.hasMin
		total.hasLow = total.hasLow || s.hasLow
	}
	sums[corev1.PodQOSGuaranteed] = &total
	out := map[corev1.PodQOSClass]Knobs{}
	for kube, class := range map[corev1.PodQOSClass]extension.QoSClass{
		corev1.PodQOSGuaranteed: extension.QoSLSR, corev1.PodQOSBurstable: extension.QoSLS, corev1.PodQOSBestEffort: extension.QoSBE,
	} {
		cfg := ClassConfig(strategy, class)
		k := Knobs{Priority: cfg.Priority, UsePriorityOOM: cfg.PriorityEnable, OOMGroup: cfg.OomKillGroup}
		if s := sums[kube]; s.hasMin || s.hasLow {
			if s.hasMin {
				k.Min = ptr.To(s.min)
			}
			if s.hasLow {
				k.Low = ptr.To(s.low)
			}
		}
		out[kube] = k
	}
	return out
}

// PodWithConfig is a pod, its memory QoS and its memory request (PodRequest).
type PodWithConfig struct {
	Pod     *corev1.Pod
	Config  slov1alpha1.MemoryQOS
	Request int64
}
