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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// PreEnqueue keeps a gang's pods out of the active queue until the gang can start, as Koordinator's
// Coscheduling does there: until its pods or PodGroup give it a valid spec, and it has at least minMember
// members (or, under once-satisfied, it was satisfied once). Pods in no gang, and members of a gang that can
// start, pass. A held pod waits UnschedulableAndUnresolvable with the reason, and is tried again when a pod of
// its gang (or gang group) is added or its PodGroup changes (EventsToRegister). PreEnqueue does not count an
// attempt in the gang's schedule cycle; PreFilter still makes every other check.
//
// The pod itself counts even before the plugin's informer has delivered it: kube-scheduler may ask first, and
// the last member of a gang must not wait for an event about itself. It is not recorded from here, so that a
// pod deleted meanwhile is never brought back into its gang.
func (p *Plugin) PreEnqueue(ctx context.Context, pod *corev1.Pod) *fwk.Status {
	id, ok := cache.IDOf(pod)
	if !ok {
		return nil
	}
	v, ok := p.cache.View(id)
	if !ok {
		// No member seen yet: PreFilter makes the checks once the informer has caught up.
		return nil
	}
	if !p.cache.Knows(pod) {
		v.Members++
	}
	status := p.gate(&v)
	if !status.IsSuccess() {
		klog.FromContext(ctx).V(5).Info("Held a gang member out of the active queue", "pod", klog.KObj(pod), "gang", v.ID.String(), "reason", status.Message())
	}
	return status
}

// gate is the part of PreFilter's check that depends on the gang's membership only.
func (p *Plugin) gate(v *cache.View) *fwk.Status {
	switch {
	case v.PodErr != nil:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("gang %q: the pod's gang annotations are invalid: %v", v.ID, v.PodErr))
	case v.SpecErr != nil:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("gang %q: %v", v.ID, v.SpecErr))
	case !v.HasSpec:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("gang %q has no PodGroup and its pods set no %s", v.ID, extension.AnnotationGangMinNum))
	case v.Spec.MatchPolicy == extension.GangMatchPolicyOnceSatisfied && v.OnceSatisfied:
		return nil
	case v.Members < v.Spec.MinMember:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("gang %q has %d of %d members (min %d)", v.ID, v.Members, v.Spec.TotalMember, v.Spec.MinMember))
	}
	return nil
}
