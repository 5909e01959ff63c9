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

package loadaware

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PreFilter does the plugin's per-pod work once per cycle, as Koordinator's LoadAwareScheduling does there: the
// pod's estimated usage, whether it is a koord-prod or DaemonSet pod, and the time the cycle judges NodeMetrics
// and assignments against. Filter, Score and Reserve read it from the CycleState. The extension point is
// optional: without it, whichever of them comes first computes the same state, so a profile that leaves
// PreFilter out (as Koord's does) gets the same answers. It never restricts the nodes.
func (p *Plugin) PreFilter(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	p.podStateOf(ctx, cycle, pod)
	return nil, nil
}

// PreFilterExtensions returns nil: the state does not depend on the pods added or removed by preemption.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }
