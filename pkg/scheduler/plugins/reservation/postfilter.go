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

package reservation

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
)

// PostFilter keeps a reserve pod that found no node from preempting anything, unless enablePreemption is
// set: it returns UnschedulableAndUnresolvable, which ends the PostFilter phase, so it must come before the
// preemption plugins (ElasticQuota, DefaultPreemption) in the profile. For every other pod it returns
// Unschedulable and the next PostFilter plugin runs.
func (p *Plugin) PostFilter(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, _ fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if extension.IsReservePod(pod) && !p.args.EnablePreemption {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "reservations do not preempt (enablePreemption is false)")
	}
	return nil, fwk.NewStatus(fwk.Unschedulable)
}
