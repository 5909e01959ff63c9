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

package nodenumaresource

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/numahint"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation"
	"github.com/koord-dev/koord/pkg/util/quantity"
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

// requestOf reads what the pod asks: CPUs to bind for an LSE or LSR pod with an integer CPU request (its
// resource-spec's required or preferred bind policy, else the args' default; its preferred exclusive policy),
// and its numa-topology-spec policy. It fails on a malformed annotation.
func (p *Plugin) requestOf(pod *corev1.Pod) (*request, error) {
	req := &request{shape: shape{bind: p.defaultBind}, amounts: quantity.FromList(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))}
	for name := range req.amounts {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			delete(req.amounts, name)
		}
	}
	spec, err := extension.GetResourceSpec(pod.Annotations)
	if err != nil {
		return nil, err
	}
	numa, err := extension.GetNUMATopologySpec(pod.Annotations)
	if err != nil {
		return nil, err
	}
	if numa != nil {
		req.numaPolicy, req.numaExclusive = numa.NUMATopologyPolicy, numa.SingleNUMANodeExclusive
		if req.numaExclusive == "" && req.numaPolicy != extension.NUMATopologyPolicyNone {
			// Koordinator's default: a pod with a NUMA policy of its own is not mixed with pods of the other kind.
			req.numaExclusive = extension.NUMATopologyExclusiveRequired
		}
	}
	qos := extension.GetPodQoSClassRaw(pod)
	milli := req.amounts[corev1.ResourceCPU]
	if (qos == extension.QoSLSE || qos == extension.QoSLSR) && milli > 0 && milli%1000 == 0 {
		req.cpus = int(milli / 1000)
	}
	if spec != nil {
		switch {
		case spec.RequiredCPUBindPolicy != "" && spec.RequiredCPUBindPolicy != extension.CPUBindPolicyDefault:
			req.bind, req.requiredBind = spec.RequiredCPUBindPolicy, true
		case spec.PreferredCPUBindPolicy != "" && spec.PreferredCPUBindPolicy != extension.CPUBindPolicyDefault:
			req.bind = spec.PreferredCPUBindPolicy
		}
		req.exclusive = spec.PreferredCPUExclusivePolicy
	}
	if req.bind == extension.CPUBindPolicyConstrainedBurst {
		// Koordinator's policy for LS pods confined to a part of the shared pool; Koord binds no CPUs for it.
		req.cpus = 0
	}
	return req, nil
}

// PreFilter reads the pod's request. It returns Skip for a pod that binds no CPUs and has no NUMA policy of
// its own (unless some node's label gives it one), and UnschedulableAndUnresolvable for a malformed
// resource-spec or numa-topology-spec annotation.
func (p *Plugin) PreFilter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	req, err := p.requestOf(pod)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}
	if req.cpus == 0 && req.numaPolicy == extension.NUMATopologyPolicyNone && !p.anyNodePolicy() {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	cs.Write(stateKey, &state{req: req})
	return nil, nil
}

// anyNodePolicy reports whether some node has a NUMA topology policy label: pods without a policy of their own
// are then NUMA-aligned there.
func (p *Plugin) anyNodePolicy() bool {
	p.policyMu.RLock()
	labelled := len(p.policyNodes) > 0
	p.policyMu.RUnlock()
	return labelled || p.cache.AnyPolicy()
}

// notePolicy records whether node has a NUMA topology policy label.
func (p *Plugin) notePolicy(node *corev1.Node, deleted bool) {
	p.policyMu.Lock()
	defer p.policyMu.Unlock()
	if !deleted && node.Labels[extension.LabelNUMATopologyPolicy] != "" {
		p.policyNodes.Insert(node.Name)
	} else {
		p.policyNodes.Delete(node.Name)
	}
}

// PreFilterExtensions returns nil: the plugin keeps its own account of the nodes' CPUs.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node that cannot give the pod its CPUs or NUMA alignment, with the numbers: a node
// without a NodeResourceTopology (for a pod that binds CPUs), too few free CPUs or whole cores, or no NUMA
// node (set) that holds the pod under its policy.
func (p *Plugin) Filter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo) *fwk.Status {
	s := getState(cs)
	if s == nil {
		return nil
	}
	if _, err := p.allocationOn(pod, s.req, ni.Node(), reservation.Matched(cs, ni), numahint.Get(cs)); err != nil {
		return fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	return nil
}

// allocationOn is what node would give the pod now, taking first the CPUs of the Reservations resvs (which the
// pod may allocate): nil for a node where the pod needs nothing of the plugin (it binds no CPUs and neither it
// nor the node has a NUMA policy). With hints, the NUMA nodes chosen must hold the other plugins' parts (the
// pod's devices), and the choice is recorded for them.
func (p *Plugin) allocationOn(pod *corev1.Pod, req *request, node *corev1.Node, resvs []types.UID, hints *numahint.State) (alloc *allocation, err error) {
	defer func() {
		if alloc != nil && len(alloc.numa) > 0 {
			hints.Choose(node.Name, slices.Sorted(maps.Keys(alloc.numa)))
		} else {
			hints.Choose(node.Name, nil)
		}
	}()
	n, ok := p.cache.Node(node.Name)
	policyHere := req.numaPolicy != extension.NUMATopologyPolicyNone || node.Labels[extension.LabelNUMATopologyPolicy] != "" ||
		(ok && n.Policy != extension.NUMATopologyPolicyNone)
	if req.cpus == 0 && !policyHere {
		return nil, nil
	}
	if !ok {
		if msg, bad := p.problems.Load(node.Name); bad {
			return nil, fmt.Errorf("%s", msg)
		}
		return nil, fmt.Errorf("node has no CPU topology yet (its NodeResourceTopology, which koordlet writes)")
	}
	u := p.cache.Usage(node.Name, n, pod.UID)
	// What a node gives depends on its usage, the request and the node's labels alone when no Reservation
	// and no other plugin's hints take part: Score, Reserve and the next pods asking the same get Filter's
	// answer until an allocation on the node changes.
	if len(resvs) == 0 && u.Derived != nil && !hints.HasProviders() {
		memo := allocationsOf(u)
		key := keyOf(req, node.Labels)
		if a, ok := memo.get(key); ok {
			return a.alloc, a.err
		}
		alloc, err = p.rules.allocate(n, u, req, node.Labels, grant{cpus: cpuset.New()}, nil)
		memo.put(key, allocated{alloc: alloc, err: err})
		return alloc, err
	}
	g := grant{cpus: cpuset.New(), numa: map[int]quantity.Amounts{}}
	for _, uid := range resvs {
		g.cpus = g.cpus.Union(u.Reserved[uid])
		for id, amounts := range u.ReservedNUMA[uid] {
			if g.numa[id] == nil {
				g.numa[id] = quantity.Amounts{}
			}
			g.numa[id].Add(amounts)
		}
	}
	var fitsNUMA func(set []int) (bool, string)
	if hints.HasProviders() {
		fitsNUMA = func(set []int) (bool, string) { return hints.Fits(node.Name, set) }
	}
	return p.rules.allocate(n, u, req, node.Labels, g, fitsNUMA)
}

// SignPod signs pods the plugin has nothing to give (they bind no CPUs and no node has a NUMA topology
// policy) with nothing, so that kube-scheduler may batch them; it refuses the others, whose result depends on
// the CPUs other pods hold.
func (p *Plugin) SignPod(_ context.Context, pod *corev1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	req, err := p.requestOf(pod)
	if err != nil || req.cpus > 0 || req.numaPolicy != extension.NUMATopologyPolicyNone || p.anyNodePolicy() {
		return nil, fwk.NewStatus(fwk.Unschedulable, "pods that bind CPUs or follow a NUMA topology policy are not signable")
	}
	return nil, nil
}
