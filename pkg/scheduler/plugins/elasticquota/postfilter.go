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

package elasticquota

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/koord-dev/koord/apis/extension"
)

// PostFilter preempts pods to make room for the pod, as kube-scheduler's default preemption does, but only
// pods of the pod's own quota with a lower priority: never non-preemptible pods, never pods of other quotas,
// and never pods of the default quota with disableDefaultQuotaPreemption. Success with a nominated node when
// victims were found, Unschedulable otherwise.
func (p *Plugin) PostFilter(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if extension.IsReservePod(pod) {
		// Not charged to a quota, so not a preemptor within one.
		return nil, fwk.NewStatus(fwk.Unschedulable, "preemption: reserve pods do not preempt within a quota")
	}
	result, status := p.evaluator.Preempt(ctx, cycle, pod, m)
	if msg := status.Message(); msg != "" {
		return result, fwk.NewStatus(status.Code(), "preemption: "+msg)
	}
	return result, status
}

// isEligibleVictim reports whether every pod of victim may be preempted for preemptor; the victim's lower
// priority is checked by the default preemption.
func (p *Plugin) isEligibleVictim(_ fwk.NodeInfo, victim preemption.Victim, preemptor *corev1.Pod) bool {
	quota := p.manager.QuotaOf(preemptor)
	if quota == extension.DefaultQuotaName && p.args.DisableDefaultQuotaPreemption {
		return false
	}
	for _, pi := range victim.Pods() {
		v := pi.GetPod()
		if extension.IsPodNonPreemptible(v) || p.manager.QuotaOf(v) != quota {
			return false
		}
	}
	return true
}

// PreEnqueue holds back pods whose preemption is still running asynchronously, as the default preemption
// does for its own.
func (p *Plugin) PreEnqueue(ctx context.Context, pod *corev1.Pod) *fwk.Status {
	return p.preemption.PreEnqueue(ctx, pod)
}
