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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// Permit lets an assumed member go on to bind once its gang group is satisfied (every gang of the group
// has enough members waiting, or waiting and bound, by its match policy; or was satisfied once under
// once-satisfied), and then allows the group's other waiting members too. Until then the member waits, for
// the gang's waiting time, and the gang's members still to be tried are moved to the front of the queue.
// Pods in no gang are allowed at once. Status: Success or Wait.
func (p *Plugin) Permit(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, _ string) (*fwk.Status, time.Duration) {
	r, ok := p.cache.Assume(pod)
	if !ok {
		return nil, 0
	}
	logger := klog.FromContext(ctx)
	if r.Satisfied {
		if id, ok := cache.IDOf(pod); ok {
			if v, ok := p.cache.View(id); ok {
				p.bindings.record(v.Spec.Groups, r.Allow)
			}
		}
		for _, uid := range r.Allow {
			if wp := p.handle.GetWaitingPod(uid); wp != nil {
				wp.Allow(Name)
			}
		}
		logger.V(3).Info("Allowed the waiting members of a satisfied gang group", "pod", klog.KObj(pod), "allowed", len(r.Allow))
		return nil, 0
	}
	activateInCycle(state, r.Pending)
	return fwk.NewStatus(fwk.Wait, r.Short), r.WaitTime
}

// activateInCycle asks kube-scheduler to move pods to the front of the queue at the end of the cycle.
func activateInCycle(state fwk.CycleState, pods []*corev1.Pod) {
	if len(pods) == 0 {
		return
	}
	data, err := state.Read(framework.PodsToActivateKey)
	if err != nil {
		return
	}
	toActivate, ok := data.(*framework.PodsToActivate)
	if !ok {
		return
	}
	toActivate.Lock()
	defer toActivate.Unlock()
	for _, pod := range pods {
		toActivate.Map[pod.Namespace+"/"+pod.Name] = pod
	}
}

// Reserve does nothing: a member counts as assumed from Permit on.
func (p *Plugin) Reserve(context.Context, fwk.CycleState, *corev1.Pod, string) *fwk.Status {
	return nil
}

// Unreserve releases a member that was assumed: rejected while waiting in Permit or failing after it. When
// the member waited its gang's full waiting time the gang timed out: the group's waiting members are
// rejected, releasing their resources, the pods are marked with the gang timeout annotation, and the gang's
// members are rejected in PreFilter until it has backed off. Otherwise a Strict gang (not satisfied once
// under once-satisfied) fails its group's cycle and its group's waiting members are rejected; a NonStrict
// gang keeps them waiting.
func (p *Plugin) Unreserve(ctx context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) {
	p.bindings.forget(pod.UID)
	r := p.cache.Unreserve(pod)
	if len(r.Reject) == 0 && len(r.Retry) == 0 && !r.TimedOut {
		return
	}
	id, _ := cache.IDOf(pod)
	msg := fmt.Sprintf("gang %q: member %s/%s was released", id, pod.Namespace, pod.Name)
	if r.TimedOut {
		msg = fmt.Sprintf("gang %q timed out", id)
	}
	p.release(r.Release, msg)
	for _, nn := range r.Timeout {
		p.queue.Add(workItem{kind: podTimeout, namespace: nn.Namespace, name: nn.Name})
	}
	klog.FromContext(ctx).V(3).Info("Released a gang member", "pod", klog.KObj(pod), "gang", id.String(), "timedOut", r.TimedOut, "rejected", len(r.Reject))
}

// release rejects the waiting pods of a failed cycle with msg, and, once each failed gang has backed off,
// moves its pending members to the front of the queue: the first one to be tried starts the gang's next
// cycle. Until then they are rejected in PreFilter, and may wait for no event the plugin knows of.
func (p *Plugin) release(r cache.Release, msg string) {
	p.reject(r.Reject, msg, rejectTries)
	if p.topology != nil {
		// A failed cycle plans anew.
		for _, retry := range r.Retry {
			p.topology.forget(retry.ID)
		}
	}
	logger := klog.FromContext(p.runCtx)
	for _, retry := range r.Retry {
		p.clock.AfterFunc(retry.After, func() {
			if p.runCtx.Err() != nil {
				return
			}
			logger.V(4).Info("Activated the pending members of a gang after its backoff", "gang", retry.ID.String())
			p.activate(logger, p.cache.Pending(retry.ID))
		})
	}
}

// A member is waiting for the plugin from Permit on, but for the framework only once the scheduling cycle
// has added it to its waiting pods, a moment later. A member to reject that is not a waiting pod yet is tried
// again rejectTries times, rejectRetryDelay apart, for as long as the cache has it waiting.
const (
	rejectTries      = 4
	rejectRetryDelay = 100 * time.Millisecond
)

// reject rejects the waiting pods uids with msg, trying tries times in all for those that are not waiting
// pods of the framework yet.
func (p *Plugin) reject(uids []types.UID, msg string, tries int) {
	var missed []types.UID
	for _, uid := range uids {
		if wp := p.handle.GetWaitingPod(uid); wp != nil {
			wp.Reject(Name, msg)
		} else if p.cache.Rejecting(uid) {
			missed = append(missed, uid)
		}
	}
	if len(missed) == 0 || tries <= 1 {
		return
	}
	p.clock.AfterFunc(rejectRetryDelay, func() {
		if p.runCtx.Err() == nil {
			p.reject(missed, msg, tries-1)
		}
	})
}

// PostBind counts the member as bound and schedules a status write for its PodGroup.
func (p *Plugin) PostBind(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) {
	p.bindings.forget(pod.UID)
	p.cache.Bind(pod)
	p.podGroupChanged(pod)
}
