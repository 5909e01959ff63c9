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

package cpuqos

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Policy returns the CPU QoS policy of strategy: groupIdentity unless coreSched is named.
func Policy(strategy *slov1alpha1.ResourceQOSStrategy) slov1alpha1.CPUQOSPolicy {
	if p := strategy.Policies; p != nil && p.CPUPolicy != nil && *p.CPUPolicy == slov1alpha1.CPUQOSPolicyCoreSched {
		return slov1alpha1.CPUQOSPolicyCoreSched
	}
	return slov1alpha1.CPUQOSPolicyGroupIdentity
}

// ClassParams is the CPU QoS of one class under the policy in force; the zero value is the "none" values.
type ClassParams struct {
	// Enabled is set when the class's cpuQOS is enabled under the policy.
	Enabled bool
	// GroupIdentity is cpu.bvt.warp_ns (groupIdentity policy).
	GroupIdentity int64
	// Idle is cpu.idle (coreSched policy).
	Idle int64
	// Expeller gives the class's pods a core scheduling group of their own (coreSched policy).
	Expeller bool
}

// Rule is the CPU QoS of every class, and of kubelet's QoS cgroups, under the policy in force.
type Rule struct {
	// Policy is the policy in force.
	Policy slov1alpha1.CPUQOSPolicy
	// Classes holds the parameters of LSE, LSR, LS and BE; other classes take their Kubernetes QoS class's.
	Classes map[extension.QoSClass]ClassParams
	// KubePods holds the parameters of the pods of each Kubernetes QoS class without a Koordinator class of
	// their own: Guaranteed takes LSR when enabled, else LS.
	KubePods map[corev1.PodQOSClass]ClassParams
}

// NewRule returns the rule of strategy.
func NewRule(strategy *slov1alpha1.ResourceQOSStrategy) Rule {
	policy := Policy(strategy)
	param := func(class extension.QoSClass) ClassParams {
		c := qosmanager.ClassResourceQOS(strategy, class)
		if c == nil || c.CPUQOS == nil || c.CPUQOS.Enable == nil || !*c.CPUQOS.Enable {
			return ClassParams{}
		}
		p := ClassParams{Enabled: true}
		switch policy {
		case slov1alpha1.CPUQOSPolicyGroupIdentity:
			if c.CPUQOS.GroupIdentity != nil {
				p.GroupIdentity = *c.CPUQOS.GroupIdentity
			}
		case slov1alpha1.CPUQOSPolicyCoreSched:
			if c.CPUQOS.SchedIdle != nil {
				p.Idle = *c.CPUQOS.SchedIdle
			}
			p.Expeller = c.CPUQOS.CoreExpeller != nil && *c.CPUQOS.CoreExpeller
		}
		return p
	}
	lsr, ls, be := param(extension.QoSLSR), param(extension.QoSLS), param(extension.QoSBE)
	guaranteed := ls
	if lsr.Enabled {
		guaranteed = lsr
	}
	return Rule{
		Policy: policy,
		Classes: map[extension.QoSClass]ClassParams{
			extension.QoSLSE: lsr, extension.QoSLSR: lsr, extension.QoSLS: ls, extension.QoSBE: be,
		},
		KubePods: map[corev1.PodQOSClass]ClassParams{
			corev1.PodQOSGuaranteed: guaranteed, corev1.PodQOSBurstable: ls, corev1.PodQOSBestEffort: be,
		},
	}
}

// Enabled reports whether any class is enabled under the policy.
func (r Rule) Enabled() bool {
	for _, p := range r.Classes {
		if p.Enabled {
			return true
		}
	}
	return false
}

// Pod returns the parameters of pod: its class's, or its Kubernetes QoS class's.
func (r Rule) Pod(pod *corev1.Pod) ClassParams {
	if p, ok := r.Classes[qosmanager.PodQoS(pod)]; ok {
		return p
	}
	return r.KubePods[extension.GetKubeQoSClass(pod)]
}

// HostApp returns the parameters of a host application of class qos.
func (r Rule) HostApp(qos extension.QoSClass) ClassParams { return r.Classes[qos] }

// KubeQoSDirGroupIdentity returns cpu.bvt.warp_ns of kubelet's cgroup of kube: besteffort takes the BE
// value, burstable the LS value, kubepods (the guaranteed pods' parent) 0.
func (r Rule) KubeQoSDirGroupIdentity(kube corev1.PodQOSClass) int64 {
	if kube == corev1.PodQOSGuaranteed {
		return 0
	}
	return r.KubePods[kube].GroupIdentity
}

// KubeQoSDirIdle returns cpu.idle of kubelet's cgroup of kube.
func (r Rule) KubeQoSDirIdle(kube corev1.PodQOSClass) int64 { return r.KubePods[kube].Idle }

// PodGroupIdentity returns cpu.bvt.warp_ns of pod: its annotation's groupIdentity (cfg, nil when absent or
// malformed) when set, else its class's.
func (r Rule) PodGroupIdentity(pod *corev1.Pod, cfg *slov1alpha1.CPUQOSCfg) int64 {
	if cfg != nil && cfg.GroupIdentity != nil {
		return *cfg.GroupIdentity
	}
	return r.Pod(pod).GroupIdentity
}

// ExpellerSuffix is added to the core scheduling group of pods of a class with coreExpeller.
const ExpellerSuffix = "-expeller"

// CoreSchedGroup returns the core scheduling group of pod and whether it has one: none when its class is not
// enabled or its policy is none; its UID when the policy is exclusive; else its group-id label; with
// ExpellerSuffix when its class has coreExpeller.
func (r Rule) CoreSchedGroup(pod *corev1.Pod) (string, bool) {
	p := r.Pod(pod)
	if r.Policy != slov1alpha1.CPUQOSPolicyCoreSched || !p.Enabled {
		return "", false
	}
	var group string
	switch slov1alpha1.GetCoreSchedPolicy(pod.Labels) {
	case slov1alpha1.CoreSchedPolicyNone:
		return "", false
	case slov1alpha1.CoreSchedPolicyExclusive:
		group = string(pod.UID)
	default:
		group = pod.Labels[slov1alpha1.LabelCoreSchedGroupID]
	}
	if p.Expeller {
		group += ExpellerSuffix
	}
	return group, true
}
