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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota/cache"
)

// stateKey is the plugin's CycleState key.
const stateKey fwk.StateKey = "PreFilter" + Name

// cycleState is the pod's admission to its quota in one scheduling cycle.
type cycleState struct {
	admission *cache.Admission
	charge    cache.Charge
	// admitted is PreFilter's verdict; changed is set once preemption's what-if added or removed pods.
	admitted, changed bool
}

// Clone copies the state for preemption's what-if.
func (s *cycleState) Clone() fwk.StateData {
	return &cycleState{admission: s.admission.Clone(), charge: s.charge, admitted: s.admitted, changed: s.changed}
}

func readState(cycle fwk.CycleState) (*cycleState, error) {
	data, err := cycle.Read(stateKey)
	if err != nil {
		return nil, err
	}
	s, ok := data.(*cycleState)
	if !ok {
		return nil, fmt.Errorf("%s holds %T, not the ElasticQuota state", stateKey, data)
	}
	return s, nil
}

// PreFilter admits the pod to its quota: Success when the quota's used resources plus the pod's request
// stay within the quota's runtime quota (or max) on every resource the pod requests and the quota's max names
// (and within min for non-preemptible pods, and within every ancestor with enableCheckParentQuota);
// Unschedulable with one reason per quota and resource otherwise, so that PostFilter may preempt pods of
// the same quota; UnschedulableAndUnresolvable when the quota takes no pods (a parent quota, or a quota
// whose parent is missing).
//
// Reserve pods (extension.IsReservePod) are not charged to any quota: PreFilter returns Skip for them, which
// also skips Filter.
func (p *Plugin) PreFilter(_ context.Context, cycle fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if extension.IsReservePod(pod) {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	p.manager.EnsurePod(pod)
	charge := p.manager.ChargeOf(pod)
	admission, err := p.manager.Admission(charge.Quota, p.args.EnableCheckParentQuota)
	if err != nil {
		if _, ok := errors.AsType[*cache.NotAdmittableError](err); ok {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
		}
		return nil, fwk.AsStatus(err)
	}
	s := &cycleState{admission: admission, charge: charge}
	reasons := admission.Check(charge.Request, charge.NonPreemptible)
	s.admitted = len(reasons) == 0
	cycle.Write(stateKey, s)
	if !s.admitted {
		p.metrics.QuotaRejections.Inc()
		return nil, fwk.NewStatus(fwk.Unschedulable, reasons...)
	}
	return nil, nil
}

// PreFilterExtensions returns the plugin, whose AddPod and RemovePod let preemption try removing pods.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return p }

// AddPod counts podInfoToAdd in the quotas of the cycle it belongs to.
func (p *Plugin) AddPod(_ context.Context, cycle fwk.CycleState, _ *corev1.Pod, podInfoToAdd fwk.PodInfo, _ fwk.NodeInfo) *fwk.Status {
	return p.whatIf(cycle, podInfoToAdd.GetPod(), true)
}

// RemovePod stops counting podInfoToRemove in the quotas of the cycle it belongs to.
func (p *Plugin) RemovePod(_ context.Context, cycle fwk.CycleState, _ *corev1.Pod, podInfoToRemove fwk.PodInfo, _ fwk.NodeInfo) *fwk.Status {
	return p.whatIf(cycle, podInfoToRemove.GetPod(), false)
}

func (p *Plugin) whatIf(cycle fwk.CycleState, pod *corev1.Pod, add bool) *fwk.Status {
	if extension.IsReservePod(pod) {
		return nil
	}
	s, err := readState(cycle)
	if err != nil {
		// PreFilter found the quota takes no pods: nothing to count.
		if errors.Is(err, fwk.ErrNotFound) {
			return nil
		}
		return fwk.AsStatus(err)
	}
	s.admission.Add(p.manager.ChargeOf(pod), add)
	s.changed = true
	return nil
}

// Filter repeats PreFilter's check once preemption's what-if (or nominated pods) changed the quota's used
// resources: Unschedulable with PreFilter's reasons when the pod still does not fit its quota. Otherwise it
// returns PreFilter's verdict at no cost.
func (p *Plugin) Filter(_ context.Context, cycle fwk.CycleState, _ *corev1.Pod, _ fwk.NodeInfo) *fwk.Status {
	s, err := readState(cycle)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !s.changed && s.admitted {
		return nil
	}
	if reasons := s.admission.Check(s.charge.Request, s.charge.NonPreemptible); len(reasons) > 0 {
		return fwk.NewStatus(fwk.Unschedulable, reasons...)
	}
	return nil
}
