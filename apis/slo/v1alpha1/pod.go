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
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
)

// PodMemoryQOSPolicy is the memory QoS policy a pod asks for in its koordinator.sh/memoryQOS annotation.
type PodMemoryQOSPolicy string

const (
	// PodMemoryQOSPolicyDefault (or an empty policy) follows the node's memory QoS of the pod's class.
	PodMemoryQOSPolicyDefault PodMemoryQOSPolicy = "default"
	// PodMemoryQOSPolicyNone turns memory QoS off for the pod, whatever the node's.
	PodMemoryQOSPolicyNone PodMemoryQOSPolicy = "none"
	// PodMemoryQOSPolicyAuto uses the recommended memory QoS of the pod's class, whatever the node's.
	PodMemoryQOSPolicyAuto PodMemoryQOSPolicy = "auto"
)

// PodMemoryQOSConfig is the value of a pod's koordinator.sh/memoryQOS annotation: a policy, and knobs that
// override those the policy gives, e.g. {"policy":"auto","minLimitPercent":50}.
type PodMemoryQOSConfig struct {
	// Policy selects where the knobs come from; empty means default.
	// +kubebuilder:validation:Enum="";default;none;auto
	// +optional
	Policy PodMemoryQOSPolicy `json:"policy,omitempty"`
	// MemoryQOS holds the knobs set over the policy's.
	MemoryQOS `json:",inline"`
}

// GetPodMemoryQoSConfig returns the pod's koordinator.sh/memoryQOS annotation, nil when it has none, and an error
// naming the annotation when it is not valid JSON or holds an unknown policy.
func GetPodMemoryQoSConfig(pod *corev1.Pod) (*PodMemoryQOSConfig, error) {
	value, ok := pod.Annotations[extension.AnnotationPodMemoryQoS]
	if !ok {
		return nil, nil
	}
	cfg := &PodMemoryQOSConfig{}
	if err := json.Unmarshal([]byte(value), cfg); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", extension.AnnotationPodMemoryQoS, err)
	}
	switch cfg.Policy {
	case "", PodMemoryQOSPolicyDefault, PodMemoryQOSPolicyNone, PodMemoryQOSPolicyAuto:
	default:
		return nil, fmt.Errorf("annotation %s: policy %q: want default, none or auto", extension.AnnotationPodMemoryQoS, cfg.Policy)
	}
	return cfg, nil
}

// GetPodCPUQoSConfig returns the pod's koordinator.sh/cpuQOS annotation, nil when it has none, and an error naming
// the annotation when it is not valid JSON or its groupIdentity is outside -1 to 2.
func GetPodCPUQoSConfig(pod *corev1.Pod) (*CPUQOSCfg, error) {
	value, ok := pod.Annotations[extension.AnnotationPodCPUQoS]
	if !ok {
		return nil, nil
	}
	cfg := &CPUQOSCfg{}
	if err := json.Unmarshal([]byte(value), cfg); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", extension.AnnotationPodCPUQoS, err)
	}
	if g := cfg.GroupIdentity; g != nil && (*g < -1 || *g > 2) {
		return nil, fmt.Errorf("annotation %s: groupIdentity %d: want -1 to 2", extension.AnnotationPodCPUQoS, *g)
	}
	return cfg, nil
}

// Core scheduling labels of pods, Koordinator's.
const (
	// LabelCoreSchedGroupID puts the pod in a core scheduling group: pods of different groups never run on the
	// two hyper-threads of a core at once. Pods without it are in the group "".
	LabelCoreSchedGroupID = extension.DomainPrefix + "core-sched-group-id"
	// LabelCoreSchedPolicy is the pod's core scheduling policy: "" (the group of LabelCoreSchedGroupID), "none"
	// (no cookie, whatever the node's strategy) or "exclusive" (a group of its own, by pod UID).
	LabelCoreSchedPolicy = extension.DomainPrefix + "core-sched-policy"
)

// CoreSchedPolicy is the value of LabelCoreSchedPolicy.
type CoreSchedPolicy string

const (
	// CoreSchedPolicyDefault puts the pod in the group of its LabelCoreSchedGroupID.
	CoreSchedPolicyDefault CoreSchedPolicy = ""
	// CoreSchedPolicyNone keeps the pod out of core scheduling.
	CoreSchedPolicyNone CoreSchedPolicy = "none"
	// CoreSchedPolicyExclusive puts the pod in a group of its own.
	CoreSchedPolicyExclusive CoreSchedPolicy = "exclusive"
)

// GetCoreSchedPolicy returns the pod's core scheduling policy from its labels; an unknown value is the default.
func GetCoreSchedPolicy(labels map[string]string) CoreSchedPolicy {
	switch p := CoreSchedPolicy(labels[LabelCoreSchedPolicy]); p {
	case CoreSchedPolicyNone, CoreSchedPolicyExclusive:
		return p
	}
	return CoreSchedPolicyDefault
}
