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

// PreScore reads the pod's preferred nodes (from PreFilter's state, or the hint when PreFilter is not in the
// profile). Pods that prefer no node are skipped (Skip), so Score does not run for them.
func (p *Plugin) PreScore(_ context.Context, cycle fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	s, err := readState(cycle)
	if err != nil {
		hint, perr := extension.GetSchedulingHint(pod)
		if perr != nil {
			return fwk.NewStatus(fwk.Skip)
		}
		if s = p.stateOf(hint); s != nil {
			cycle.Write(stateKey, s)
		}
	}
	if s == nil || len(s.preferred) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score prefers the hint's preferred nodes, the first most: MaxScore for the first, then evenly less,
// and 0 for nodes the hint does not prefer. Koordinator tries the preferred nodes before the others; on
// kube-scheduler's plain framework the plugin scores them, so give it a weight that outranks the other
// scores where the preference must win.
func (p *Plugin) Score(_ context.Context, cycle fwk.CycleState, _ *corev1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s, err := readState(cycle)
	if err != nil || s == nil {
		return 0, nil
	}
	rank, ok := s.preferred[nodeInfo.Node().Name]
	if !ok {
		return 0, nil
	}
	n := int64(len(s.preferred))
	return fwk.MaxScore - int64(rank)*(fwk.MaxScore-1)/n, nil
}

// ScoreExtensions returns nil: the scores are already in [0, MaxNodeScore].
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

func readState(cycle fwk.CycleState) (*hintState, error) {
	v, err := cycle.Read(stateKey)
	if err != nil {
		return nil, err
	}
	s, _ := v.(*hintState)
	return s, nil
}
