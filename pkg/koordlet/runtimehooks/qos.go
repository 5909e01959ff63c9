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

package runtimehooks

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/containerd/nri/pkg/api"
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpuqos"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/memoryqos"
)

// QoS are the per-class QoS settings the hooks apply before a pod's containers run, besides the batch settings
// and cpusets: the same values the QoS loop's memoryqos and cpuqos strategies write a round later.
type QoS struct {
	// Cgroups writes the pod-level values.
	Cgroups *cgroup.Manager
	// MemoryQoS (gate CgroupReconcile) writes a pod's memory.min and memory.low and the Anolis OS memory knobs at
	// RunPodSandbox, and on cgroup v2 gives each container its memory.min, memory.low and memory.high in the
	// CreateContainer adjustment (the runtime's unified resources; cgroup v1 has no such thing, and the loop
	// writes them there).
	MemoryQoS bool
	// GroupIdentity (gate GroupIdentity) writes a pod's cpu.bvt.warp_ns at RunPodSandbox, on kernels that have it.
	GroupIdentity bool
}

// WithQoS makes the hooks apply q.
func WithQoS(q QoS) Option { return func(h *Hooks) { h.qos = q } }

func (q QoS) enabled() bool { return q.Cgroups != nil && (q.MemoryQoS || q.GroupIdentity) }

// resourceQOS returns the node's per-class QoS strategy, nil while the NodeSLO is unknown.
func (h *Hooks) resourceQOS() (*slov1alpha1.ResourceQOSStrategy, error) {
	slo := h.inputs.NodeSLO()
	if slo == nil {
		return nil, nil
	}
	return (&qosmanager.State{NodeSLO: slo}).ResourceQOS()
}

// syncPodQoS writes the pod-level QoS values of pod to its cgroup. Knobs the kernel lacks are skipped.
func (h *Hooks) syncPodQoS(ctx context.Context, pod *corev1.Pod) (bool, error) {
	if !h.qos.enabled() {
		return false, nil
	}
	strategy, err := h.resourceQOS()
	if strategy == nil {
		return false, err
	}
	dir := h.qos.Cgroups.Layout().PodDir(extension.GetKubeQoSClass(pod), pod.UID)
	var errs []error
	changed := false
	if h.qos.MemoryQoS {
		ann, annErr := slov1alpha1.GetPodMemoryQoSConfig(pod)
		if annErr != nil {
			errs = append(errs, annErr)
			ann = nil
		}
		cfg := memoryqos.PodConfig(strategy, pod, ann)
		wrote, err := memoryqos.Apply(ctx, h.qos.Cgroups, dir, memoryqos.PodKnobs(memoryqos.PodRequest(pod), cfg))
		changed = changed || wrote
		errs = append(errs, err)
	}
	if rule := cpuqos.NewRule(strategy); h.qos.GroupIdentity && rule.Policy == slov1alpha1.CPUQOSPolicyGroupIdentity && rule.Enabled() {
		cfg, annErr := slov1alpha1.GetPodCPUQoSConfig(pod)
		if annErr != nil {
			errs = append(errs, annErr)
			cfg = nil
		}
		wrote, err := h.qos.Cgroups.SetInt(ctx, dir, cgroup.KnobCPUBVTWarpNs, rule.PodGroupIdentity(pod, cfg))
		if errors.Is(err, cgroup.ErrNotSupported) {
			err = nil
		}
		changed = changed || wrote
		errs = append(errs, err)
	}
	return changed, errors.Join(errs...)
}

// containerMemoryQoS returns the memory QoS values of container name of pod as cgroup v2 unified resources
// (memory.min, memory.low, memory.high), none on cgroup v1 or with memory QoS off.
func (h *Hooks) containerMemoryQoS(pod *corev1.Pod, name string) (map[string]string, error) {
	if !h.qos.enabled() || !h.qos.MemoryQoS || h.qos.Cgroups.Layout().Version != cgroup.V2 {
		return nil, nil
	}
	strategy, err := h.resourceQOS()
	if strategy == nil {
		return nil, err
	}
	var spec *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			spec = &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			spec = &pod.Spec.InitContainers[i]
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("container %s is not in the pod's spec", name)
	}
	ann, annErr := slov1alpha1.GetPodMemoryQoSConfig(pod)
	if annErr != nil {
		ann = nil
	}
	var nodeMemory int64
	if node := h.inputs.Node(); node != nil {
		nodeMemory = node.Status.Allocatable.Memory().Value()
	}
	k := memoryqos.ContainerKnobs(pod, spec, memoryqos.PodConfig(strategy, pod, ann), nodeMemory)
	out := map[string]string{}
	for knob, v := range map[string]*int64{"memory.min": k.Min, "memory.low": k.Low, "memory.high": k.High} {
		switch {
		case v == nil:
		case *v < 0:
			out[knob] = "max"
		default:
			out[knob] = strconv.FormatInt(*v, 10)
		}
	}
	return out, annErr
}

// adjustUnified adds the unified resources to a.
func adjustUnified(a *api.ContainerAdjustment, unified map[string]string) {
	for k, v := range unified {
		a.AddLinuxUnified(k, v)
	}
}
