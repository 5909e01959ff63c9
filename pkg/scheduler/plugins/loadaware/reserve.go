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
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
)

// Reserve records the pod on the node in the assign cache, so that it counts on the node until the node's
// NodeMetric reports its usage. It always returns Success.
//
// Reserve pods are not recorded: they never run, and their Bind hands what they reserve to their Reservation
// (which holds it against other pods by requests) and deletes them. Recorded, a reserve pod would count on
// the node until its deletion reached the pod informer, and kube-scheduler requeues nothing on that deletion
// (it happens inside the pod's binding cycle): a pod rejected in between waited for the periodic flush.
func (p *Plugin) Reserve(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	if extension.IsReservePod(pod) {
		return nil
	}
	ps := p.podStateOf(ctx, cycle, pod)
	p.nodes.Assign(nodeName, p.assignedPod(klog.FromContext(ctx), pod, ps.Estimate, p.clock.Now()))
	return nil
}

// Unreserve forgets the pod on the node.
func (p *Plugin) Unreserve(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, nodeName string) {
	p.nodes.RemoveFrom(nodeName, pod.UID)
}
