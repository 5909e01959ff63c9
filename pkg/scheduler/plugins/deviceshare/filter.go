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

package deviceshare

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/numahint"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation"
)

// stateKey keys the pod's request in the CycleState.
const stateKey fwk.StateKey = "PreFilter" + Name

// state is the pod's request, immutable after PreFilter.
type state struct{ req *request }

// Clone returns the state itself: it is immutable.
func (s *state) Clone() fwk.StateData { return s }

func getState(cs fwk.CycleState) *state {
	data, err := cs.Read(stateKey)
	if err != nil {
		return nil
	}
	s, _ := data.(*state)
	return s
}

// PreFilter reads the pod's device requests. It returns Skip for a pod that asks for no device, and
// UnschedulableAndUnresolvable for a request the plugin cannot place or a malformed hint annotation.
func (p *Plugin) PreFilter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	req, err := requestOf(pod)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}
	if req == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	cs.Write(stateKey, &state{req: req})
	if !p.args.DisableDeviceNUMATopologyAlignment {
		numahint.Of(cs).Add(&numaProvider{p: p, cs: cs, pod: pod, req: req})
	}
	return nil, nil
}

// numaProvider is the pod's devices for NodeNUMAResource's choice of NUMA nodes.
type numaProvider struct {
	p   *Plugin
	cs  fwk.CycleState
	pod *corev1.Pod
	req *request
}

// Name implements numahint.Provider.
func (n *numaProvider) Name() string { return Name }

// FitsNUMA implements numahint.Provider: the pod's devices fit on node within the NUMA nodes numa.
func (n *numaProvider) FitsNUMA(node string, numa []int) bool {
	var resvs []types.UID
	if ni, err := n.p.handle.SnapshotSharedLister().NodeInfos().Get(node); err == nil {
		resvs = reservation.Matched(n.cs, ni)
	}
	_, err := n.p.allocationOn(n.pod, n.req, node, numa, resvs)
	return err == nil
}

// PreFilterExtensions returns nil: the plugin keeps its own account of the devices.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node that cannot give the pod its devices, with the numbers: no Device, no device of a
// type, or too few with enough free.
func (p *Plugin) Filter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo) *fwk.Status {
	s := getState(cs)
	if s == nil {
		return nil
	}
	if _, err := p.allocationOn(pod, s.req, ni.Node().Name, p.numaOf(cs, ni.Node().Name), reservation.Matched(cs, ni)); err != nil {
		return fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	return nil
}

// numaOf returns the NUMA nodes NodeNUMAResource chose for the pod on node in this cycle, nil for none (or
// with disableDeviceNUMATopologyAlignment).
func (p *Plugin) numaOf(cs fwk.CycleState, node string) []int {
	if p.args.DisableDeviceNUMATopologyAlignment {
		return nil
	}
	numa, _ := numahint.Get(cs).Chosen(node)
	return numa
}

// allocationOn is what node would give the pod now, within the NUMA nodes numa when not nil, taking first
// the devices of the Reservations resvs (which the pod may allocate).
func (p *Plugin) allocationOn(pod *corev1.Pod, req *request, node string, numa []int, resvs []types.UID) (extension.DeviceAllocations, error) {
	n, ok := p.cache.Node(node)
	if !ok {
		if msg, bad := p.problems.Load(node); bad {
			return nil, fmt.Errorf("%s", msg)
		}
		return nil, fmt.Errorf("node has no devices (no Device object, which koordlet writes)")
	}
	u := p.cache.Usage(node, pod.UID)
	return p.rules.allocate(n, u, req, numa, grantOf(u, resvs))
}

// SignPod signs pods that ask for no device with nothing, so that kube-scheduler may batch them; it refuses
// the others, whose result depends on the devices other pods hold.
func (p *Plugin) SignPod(_ context.Context, pod *corev1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	req, err := requestOf(pod)
	if err != nil || req != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, "pods that ask for devices are not signable")
	}
	return nil, nil
}
