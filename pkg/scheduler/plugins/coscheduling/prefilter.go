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

package coscheduling

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// preFilterKey is the CycleState key of the plugin's PreFilter result.
const preFilterKey fwk.StateKey = "PreFilter" + Name

// preFilterState records that PreFilter rejected the pod for a reason of its gang, so that PostFilter does
// not count that as a member failing.
type preFilterState struct {
	rejected bool
}

// Clone returns the state itself: it is never changed.
func (s *preFilterState) Clone() fwk.StateData { return s }

// passed and rejected are the two states PreFilter writes; they are never changed, so they are shared.
var (
	passed   = &preFilterState{}
	rejected = &preFilterState{rejected: true}
)

// PreFilter checks the pod's gang before any node is looked at. Pods in no gang are skipped (Skip). A member
// is rejected UnschedulableAndUnresolvable when its own gang annotations or its PodGroup's are malformed, when
// its gang has no spec (no PodGroup and no min-available), or when the gang has fewer members than its
// minimum; it is rejected Unschedulable when the gang timed out in its current schedule cycle, and, for
// Strict gangs (unless skipCheckScheduleCycle), when another member failed in the cycle or the pod was tried
// in the cycle already and waits for the other members to be tried. A gang satisfied once under
// once-satisfied no longer constrains its members. Each attempt counts as the pod's try in the gang's cycle.
func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if _, err := state.Read(planningKey); err == nil {
		// The dry run of a network-topology placement, which this plugin runs itself.
		return nil, fwk.NewStatus(fwk.Skip)
	}
	v, ok := p.cache.BeginCycle(pod)
	if !ok {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	status := p.check(&v, p.clock.Now())
	if status.IsSuccess() {
		state.Write(preFilterKey, passed)
		if p.topology != nil && v.Spec.NetworkTopology != nil {
			// A member that cannot be planned fails like one that found no node (PostFilter).
			return p.topologyPreFilter(ctx, pod, &v)
		}
	} else {
		state.Write(preFilterKey, rejected)
		klog.FromContext(ctx).V(4).Info("Rejected a gang member", "pod", klog.KObj(pod), "gang", v.ID.String(), "reason", status.Message())
	}
	return nil, status
}

// check decides PreFilter, at now, for a member whose gang is v.
func (p *Plugin) check(v *cache.View, now time.Time) *fwk.Status {
	if status := p.gate(v); !status.IsSuccess() {
		return status
	}
	switch {
	case v.Spec.MatchPolicy == extension.GangMatchPolicyOnceSatisfied && v.OnceSatisfied:
		return nil
	case v.TimedOut:
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("gang %q %s in schedule cycle %d; %s", v.ID, v.Failure, v.Cycle, nextCycle(v, now)))
	case !p.checkCycle || v.Spec.Mode != extension.GangModeStrict:
		return nil
	case !v.CycleValid:
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("gang %q failed in schedule cycle %d: %s; %s", v.ID, v.Cycle, v.Failure, nextCycle(v, now)))
	case v.PodCycle >= v.Cycle:
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("the pod was tried in schedule cycle %d of gang %q already and waits for the other members to be tried", v.Cycle, v.ID))
	}
	return nil
}

// nextCycle says when the failed gang v is tried again.
func nextCycle(v *cache.View, now time.Time) string {
	if wait := v.RetryAt.Sub(now); wait > 0 {
		return fmt.Sprintf("the next cycle starts in %v", wait.Round(time.Millisecond))
	}
	return "the next cycle starts once its rejected members are released"
}

// PreFilterExtensions returns nil: the plugin does not look at nodes.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// PostFilter runs when a member could not be placed. With enablePreemption, a member of a gang that
// constrains it preempts for its whole gang group (see preempt): on success it returns Success with the
// node the pod is nominated to; otherwise UnschedulableAndUnresolvable, so that no per-pod preemption after
// it evicts for one member. When the member passed the gang checks and its gang is Strict, the gang group's
// schedule cycle fails: the group's members waiting in Permit are rejected, releasing what they hold (after a
// preemption, nominated to the nodes they held), and the gangs back off before their next cycle. Otherwise
// it returns Unschedulable, so that preemption plugins after it run; for a pod PreFilter rejected for its
// gang (too few members, failed or timed-out cycle) UnschedulableAndUnresolvable, so that they do not.
func (p *Plugin) PostFilter(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, statuses fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if s, err := state.Read(preFilterKey); err == nil {
		if s, ok := s.(*preFilterState); ok && s.rejected {
			// What holds the pod back is its gang, which no eviction changes: no preemption plugin after
			// this one evicts for it.
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "its gang holds it back; preemption would not help")
		}
	}
	id, ok := cache.IDOf(pod)
	if !ok {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	var (
		result    *fwk.PostFilterResult
		preempted *fwk.Status
	)
	if p.executor != nil {
		if group, ok := p.cache.GroupOf(pod); ok {
			if v, _ := p.cache.View(id); p.topology != nil && v.Spec.NetworkTopology != nil {
				preempted = unresolvable("gang preemption does not place by network topology yet, so it preempts nothing for a gang with a network topology spec")
			} else {
				result, preempted = p.preempt(ctx, state, pod, statuses, group)
			}
		}
	}
	r, failed := p.cache.Fail(pod, "it could not be placed")
	if failed {
		if preempted != nil && preempted.IsSuccess() {
			p.nominateWaiting(ctx, r.Reject)
		}
		msg := fmt.Sprintf("gang %q: member %s/%s could not be placed", id, pod.Namespace, pod.Name)
		p.release(r, msg)
		klog.FromContext(ctx).V(3).Info("Failed the schedule cycle of a Strict gang", "pod", klog.KObj(pod), "gang", id.String(), "rejected", len(r.Reject))
		if preempted == nil {
			return nil, fwk.NewStatus(fwk.Unschedulable, msg)
		}
	}
	if preempted == nil {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	return result, preempted
}

// SignPod signs every pod alike, since the plugin accepts or rejects a pod as a whole, except where it has a
// say on nodes (awareNetworkTopology): a member of a gang placed by topology goes to its own planned node, and
// a pod with a network-topology-selector is scored by where the pods of its selector are, which each placement
// changes. Those it refuses to sign, so that kube-scheduler never reuses another pod's node ranking for them.
func (p *Plugin) SignPod(_ context.Context, pod *corev1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	if p.topology == nil {
		return nil, nil
	}
	if pod.Annotations[extension.AnnotationNetworkTopologySelector] != "" {
		return nil, fwk.NewStatus(fwk.Unschedulable, "the pod is scored by network topology")
	}
	if id, ok := cache.IDOf(pod); ok {
		if v, known := p.cache.View(id); known && v.Spec.NetworkTopology != nil {
			return nil, fwk.NewStatus(fwk.Unschedulable, "the pod's gang is placed by network topology")
		}
	}
	return nil, nil
}
