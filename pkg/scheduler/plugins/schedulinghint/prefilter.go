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

package schedulinghint

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
)

// PreFilter restricts the pod to the nodes its hint requires (nodeNames), as Koordinator's does: the result
// names them, so kube-scheduler filters only those. A pod without a hint, or whose hint requires no nodes, is
// skipped (Skip); a malformed hint rejects the pod UnschedulableAndUnresolvable, naming the annotation.
func (p *Plugin) PreFilter(_ context.Context, cycle fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	hint, err := extension.GetSchedulingHint(pod)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}
	s := p.stateOf(hint)
	if s == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	cycle.Write(stateKey, s)
	if s.required == nil {
		return nil, nil
	}
	return &fwk.PreFilterResult{NodeNames: s.required.Clone()}, nil
}

// PreFilterExtensions returns nil: the hint does not depend on other pods.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// SignPod signs a pod by its hint, the annotation's text under the key GetSchedulingHint reads: pods with the
// same hint are restricted to and prefer the same nodes, and a pod without one is left alone.
func (p *Plugin) SignPod(_ context.Context, pod *corev1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	raw := pod.Annotations[extension.AnnotationSchedulingHint]
	if raw == "" {
		raw = pod.Annotations[extension.DeprecatedAnnotationSchedulingHint]
	}
	if raw == "" {
		return nil, nil
	}
	return []fwk.SignFragment{{Key: Name, Value: raw}}, nil
}
