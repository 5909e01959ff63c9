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
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/deviceshare/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// rules are what the plugin's args decide about allocations.
type rules struct {
	scoring     config.ScoringStrategy
	unsupported []config.GPUModel
}

// newRules returns the rules of args.
func newRules(args *config.DeviceShareArgs) rules {
	r := rules{unsupported: args.GPUShareUnsupportedModels}
	if args.ScoringStrategy != nil {
		r.scoring = *args.ScoringStrategy
	}
	return r
}

// candidate is a device the pod could get, with what it would get and what the device has free.
type candidate struct {
	dev  *cache.Device
	need quantity.Amounts
	free quantity.Amounts
	used bool
	vf   *cache.VF
	// reserved is set for a device of a Reservation the pod may allocate.
	reserved bool
}

// grant is what the Reservations a pod may allocate hold for it: free for it, and taken first.
type grant struct {
	amounts map[extension.DeviceType]map[int]quantity.Amounts
	vfs     map[string]bool
}

// grantOf gathers what the Reservations resvs hold in u.
func grantOf(u *cache.Usage, resvs []types.UID) grant {
	g := grant{amounts: map[extension.DeviceType]map[int]quantity.Amounts{}, vfs: map[string]bool{}}
	for _, uid := range resvs {
		for t, byMinor := range u.Reserved[uid] {
			if g.amounts[t] == nil {
				g.amounts[t] = map[int]quantity.Amounts{}
			}
			for minor, a := range byMinor {
				if g.amounts[t][minor] == nil {
					g.amounts[t][minor] = quantity.Amounts{}
				}
				g.amounts[t][minor].Add(a)
			}
		}
		maps.Copy(g.vfs, u.ReservedVFs[uid])
	}
	return g
}

// allocate decides which devices of node n the pod gets, or returns why it cannot have them, with the
// numbers a person can act on. numa, when not nil, are the NUMA nodes the pod gets on the node
// (NodeNUMAResource's choice): devices on other NUMA nodes are left out (those of no known NUMA node are not).
//
// g is what the Reservations the pod may allocate hold for it: it takes those devices first.
func (r rules) allocate(n *cache.Node, u *cache.Usage, req *request, numa []int, g grant) (extension.DeviceAllocations, error) {
	order := slices.Sorted(maps.Keys(req.types))
	if req.joint != nil {
		rest := slices.DeleteFunc(slices.Clone(order), func(t extension.DeviceType) bool { return slices.Contains(req.joint.DeviceTypes, t) })
		order = append(slices.Clone(req.joint.DeviceTypes), rest...)
	}
	out := extension.DeviceAllocations{}
	var primaryPCIes []string
	for i, t := range order {
		tr := req.types[t]
		var preferred []string
		count := tr.count
		secondary := req.joint != nil && i > 0 && i < len(req.joint.DeviceTypes)
		if secondary {
			preferred = primaryPCIes
			if req.joint.RequiredScope == extension.SamePCIeDeviceJointAllocateScope {
				count = max(count, len(preferred))
			}
		}
		chosen, err := r.allocateType(n, u, t, tr, count, preferred, numa, g)
		if err != nil {
			return nil, err
		}
		if secondary && req.joint.RequiredScope == extension.SamePCIeDeviceJointAllocateScope {
			if got := pcies(chosen); !slices.Equal(got, primaryPCIes) {
				return nil, fmt.Errorf("the %s devices that fit are on PCIe switches %v, the pod's %s on %v (device-joint-allocate requiredScope %s)",
					t, got, req.joint.DeviceTypes[0], primaryPCIes, extension.SamePCIeDeviceJointAllocateScope)
			}
		}
		if req.joint != nil && i == 0 {
			primaryPCIes = pcies(chosen)
		}
		for _, c := range chosen {
			a := &extension.DeviceAllocation{Minor: int32(c.dev.Minor), Resources: c.need.List(), ID: c.dev.UUID}
			if c.vf != nil {
				a.Extension = extension.VFExtension([]schedulingv1alpha1.VirtualFunction{{Minor: c.vf.Minor, BusID: c.vf.BusID}})
			}
			out[t] = append(out[t], a)
		}
	}
	return out, nil
}

// pcies returns the sorted distinct PCIe switches of the chosen devices.
func pcies(chosen []candidate) []string {
	var out []string
	for _, c := range chosen {
		if c.dev.PCIe != "" && !slices.Contains(out, c.dev.PCIe) {
			out = append(out, c.dev.PCIe)
		}
	}
	slices.Sort(out)
	return out
}

// allocateType picks count devices of type t (every device the hint selects with ApplyForAll); preferred are
// PCIe switches to take devices from first, in turn (a joint allocation's).
func (r rules) allocateType(n *cache.Node, u *cache.Usage, t extension.DeviceType, tr *typeRequest, count int, preferred []string, numa []int, g grant) ([]candidate, error) {
	devs := n.Devices[t]
	if len(devs) == 0 {
		return nil, fmt.Errorf("node has no %s devices", t)
	}
	if t == extension.DeviceTypeGPU && tr.shared {
		if m := r.unsupportedModel(n); m != nil {
			return nil, fmt.Errorf("GPUs of model %s (vendor %s) are not shared (gpuShareUnsupportedModels); the pod asks for a part of a GPU", m.Model, m.Vendor)
		}
	}
	var sel, vfSel labels.Selector
	if h := tr.hint; h != nil {
		var err error
		if sel, err = selectorOf(h.Selector); err != nil {
			return nil, err
		}
		if h.VFSelector != nil {
			if vfSel, err = selectorOf(h.VFSelector); err != nil {
				return nil, err
			}
		}
	}
	var fitting, selected []candidate
	unhealthy, best := 0, candidate{}
	for i := range devs {
		d := &devs[i]
		if sel != nil && !sel.Matches(labels.Set(d.Labels)) {
			continue
		}
		if numa != nil && d.NUMA >= 0 && !slices.Contains(numa, d.NUMA) {
			continue
		}
		if !d.Healthy {
			unhealthy++
			continue
		}
		c := candidate{dev: d, need: needOn(t, tr.per, d), free: freeOf(d, u.Used[t][d.Minor])}
		c.used = !u.Used[t][d.Minor].IsZero()
		if held := g.amounts[t][d.Minor]; !held.IsZero() {
			c.reserved = true
			for name, v := range held {
				if total, ok := d.Total[name]; ok {
					c.free[name] = min(c.free[name]+max(v, 0), total)
				}
			}
		}
		selected = append(selected, c)
		// The freest device, named when none fits: by the share left free, LeastAllocated's view.
		if best.dev == nil || freeShare(c) > freeShare(best) {
			best = c
		}
		if !fits(c.need, c.free) {
			continue
		}
		if vfSel != nil {
			if c.vf = freeVF(d, u, g, vfSel); c.vf == nil {
				continue
			}
		}
		fitting = append(fitting, c)
	}
	if tr.hint != nil && tr.hint.ExclusivePolicy == extension.PCIExpressLevelDeviceExclusivePolicy {
		fitting = wholeSwitches(fitting, selected)
	}
	if tr.all {
		count = len(selected)
		if count == 0 {
			return nil, fmt.Errorf("node has no %s devices the device-allocate-hint's selector keeps", t)
		}
	}
	if len(fitting) < count {
		err := r.misfit(t, tr, count, len(devs), unhealthy, len(fitting), best, vfSel != nil)
		if numa != nil {
			err = fmt.Errorf("on NUMA nodes %v (the pod's CPUs and memory there, NodeNUMAResource): %w", numa, err)
		}
		return nil, err
	}
	// A part of a device goes where parts are already taken (keeping whole devices whole), the best scored
	// first, then by minor.
	slices.SortStableFunc(fitting, func(a, b candidate) int {
		if a.reserved != b.reserved {
			if a.reserved {
				return -1
			}
			return 1
		}
		if tr.shared && a.used != b.used {
			if a.used {
				return -1
			}
			return 1
		}
		return cmp.Compare(r.deviceScore(b), r.deviceScore(a))
	})
	if len(preferred) > 0 {
		return roundRobin(fitting, preferred, count), nil
	}
	scope := extension.DeviceTopologyScopeNode
	if tr.hint != nil && tr.hint.RequiredTopologyScope != "" {
		scope = tr.hint.RequiredTopologyScope
	}
	chosen, err := inScope(fitting, selected, count, scope)
	if err != nil {
		return nil, fmt.Errorf("%d of the node's %s devices fit the pod, %w", len(fitting), t, err)
	}
	return chosen, nil
}

// inScope takes count of the fitting devices: from one PCIe switch when some has that many, else one NUMA
// node, else anywhere (a required scope allows no further), the group with the most of its selected devices
// already in use first (bin packing), then the one with the fewest fitting.
func inScope(fitting, selected []candidate, count int, required extension.DeviceTopologyScope) ([]candidate, error) {
	if count == 0 {
		return nil, nil
	}
	levels := []struct {
		scope extension.DeviceTopologyScope
		key   func(c candidate) string
	}{
		{extension.DeviceTopologyScopePCIe, func(c candidate) string { return c.dev.PCIe }},
		{extension.DeviceTopologyScopeNUMANode, func(c candidate) string {
			if c.dev.NUMA < 0 {
				return ""
			}
			return fmt.Sprint(c.dev.NUMA)
		}},
	}
	for _, l := range levels {
		groups, inUse := map[string][]candidate{}, map[string]int{}
		for _, c := range fitting {
			if k := l.key(c); k != "" {
				groups[k] = append(groups[k], c)
			}
		}
		for _, c := range selected {
			if k := l.key(c); k != "" && c.used {
				inUse[k]++
			}
		}
		var best []candidate
		bestUsed := -1
		for _, k := range slices.Sorted(maps.Keys(groups)) {
			g := groups[k]
			if len(g) < count {
				continue
			}
			used := inUse[k]
			if used > bestUsed || (used == bestUsed && len(g) < len(best)) {
				best, bestUsed = g, used
			}
		}
		if best != nil {
			return best[:count], nil
		}
		if required == l.scope {
			most := 0
			for _, g := range groups {
				most = max(most, len(g))
			}
			return nil, fmt.Errorf("at most %d on one %s; the pod needs %d on one (requiredTopologyScope %s)", most, l.scope, count, required)
		}
	}
	return fitting[:count], nil
}

// roundRobin takes count devices, first the best of each preferred PCIe switch in turn, then the others.
func roundRobin(fitting []candidate, preferred []string, count int) []candidate {
	var out []candidate
	taken := make([]bool, len(fitting))
	for len(out) < count {
		progress := false
		for _, p := range preferred {
			for i, c := range fitting {
				if !taken[i] && c.dev.PCIe == p {
					out, taken[i], progress = append(out, c), true, true
					break
				}
			}
			if len(out) == count {
				return out
			}
		}
		if !progress {
			break
		}
	}
	for i, c := range fitting {
		if len(out) == count {
			break
		}
		if !taken[i] {
			out, taken[i] = append(out, c), true
		}
	}
	return out
}

// wholeSwitches keeps the fitting devices whose PCIe switch has no device in use among selected.
func wholeSwitches(fitting, selected []candidate) []candidate {
	busy := map[string]bool{}
	for _, c := range selected {
		if c.used || c.dev.PCIe == "" {
			busy[c.dev.PCIe] = true
		}
	}
	return slices.DeleteFunc(fitting, func(c candidate) bool { return busy[c.dev.PCIe] })
}

// freeVF returns the first virtual function of d (by bus ID) in a group vfSel matches that no pod holds
// (a Reservation's the pod may allocate first).
func freeVF(d *cache.Device, u *cache.Usage, g grant, vfSel labels.Selector) *cache.VF {
	var first *cache.VF
	for i := range d.VFs {
		vf := &d.VFs[i]
		if !vfSel.Matches(labels.Set(vf.Labels)) {
			continue
		}
		if g.vfs[vf.BusID] {
			return vf
		}
		if !u.VFs[vf.BusID] && first == nil {
			first = vf
		}
	}
	return first
}

// needOn is what a device gives of per: for a GPU, the memory in bytes and its ratio both (the one the pod
// names, the other from the GPU's memory).
func needOn(t extension.DeviceType, per quantity.Amounts, d *cache.Device) quantity.Amounts {
	need := per.Clone()
	if t != extension.DeviceTypeGPU {
		return need
	}
	total := d.Total[extension.ResourceGPUMemory]
	ratio, hasRatio := per[extension.ResourceGPUMemoryRatio]
	memory, hasMemory := per[extension.ResourceGPUMemory]
	switch {
	case hasRatio && !hasMemory && total > 0:
		need[extension.ResourceGPUMemory] = total * ratio / 100
	case hasMemory && !hasRatio && total > 0:
		need[extension.ResourceGPUMemoryRatio] = memory * 100 / total
	}
	return need
}

// freeOf is what d has left with used held on it, never below zero.
func freeOf(d *cache.Device, used quantity.Amounts) quantity.Amounts {
	free := d.Total.Clone()
	for name, v := range used {
		if _, ok := free[name]; ok {
			free[name] = max(free[name]-v, 0)
		}
	}
	return free
}

// fits tells whether free covers need; a resource the device does not have fits nothing.
func fits(need, free quantity.Amounts) bool {
	for name, v := range need {
		if v > 0 && free[name] < v {
			return false
		}
	}
	return true
}

// deviceScore rates a device for the pod by the scoring strategy, with the pod placed on it: LeastAllocated
// 100 × the weighted share left free, MostAllocated 100 × the share used.
func (r rules) deviceScore(c candidate) int64 {
	if c.dev == nil {
		return -1
	}
	return r.score(c.dev.Total, c.free, c.need)
}

// freeShare is the share of c's device left free, in per mille, over the resources the pod needs.
func freeShare(c candidate) int64 {
	var sum, n int64
	for name := range c.need {
		if t := c.dev.Total[name]; t > 0 {
			sum += c.free[name] * 1000 / t
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// score is the scoring strategy over total, free and the request need.
func (r rules) score(total, free, need quantity.Amounts) int64 {
	var sum, weights int64
	for _, res := range r.scoring.Resources {
		name := corev1.ResourceName(res.Name)
		t := total[name]
		if t <= 0 {
			continue
		}
		used := min(max(t-free[name]+need[name], 0), t)
		share := used * fwk.MaxScore / t
		if r.scoring.Type != config.MostAllocated {
			share = fwk.MaxScore - share
		}
		sum += share * res.Weight
		weights += res.Weight
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// misfit explains why too few devices of type t fit.
func (r rules) misfit(t extension.DeviceType, tr *typeRequest, count, total, unhealthy, fitting int, best candidate, vfs bool) error {
	what := describe(tr.per)
	if vfs {
		what += " and a free virtual function of the vfSelector"
	}
	var b strings.Builder
	if count == 1 {
		fmt.Fprintf(&b, "no %s device on the node has %s free", t, what)
	} else {
		fmt.Fprintf(&b, "the pod needs %d %s devices with %s free each, %d of them have", count, t, what, fitting)
	}
	fmt.Fprintf(&b, " (%d devices", total)
	if unhealthy > 0 {
		fmt.Fprintf(&b, ", %d unhealthy", unhealthy)
	}
	b.WriteString(")")
	if best.dev != nil && count == 1 {
		fmt.Fprintf(&b, "; the freest, minor %d, has %s", best.dev.Minor, describe(pick(best.free, best.need)))
	}
	return errors.New(b.String())
}

// pick returns the amounts of free named in need.
func pick(free, need quantity.Amounts) quantity.Amounts {
	out := quantity.Amounts{}
	for name := range need {
		out[name] = free[name]
	}
	return out
}

// describe formats device amounts for a person: "50 gpu-core, 8Gi gpu-memory".
func describe(a quantity.Amounts) string {
	var parts []string
	for _, name := range a.Names() {
		parts = append(parts, quantity.Format(name, a[name])+" "+strings.TrimPrefix(string(name), extension.DomainPrefix))
	}
	return strings.Join(parts, ", ")
}

// unsupportedModel returns the gpuShareUnsupportedModels entry of the node's GPUs, or nil.
func (r rules) unsupportedModel(n *cache.Node) *config.GPUModel {
	vendor, model := n.Labels[extension.LabelGPUVendor], n.Labels[extension.LabelGPUModel]
	for i, m := range r.unsupported {
		if m.Model == model && (m.Vendor == "" || m.Vendor == vendor) {
			return &r.unsupported[i]
		}
	}
	return nil
}

// selectorOf converts a hint's label selector.
func selectorOf(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, fmt.Errorf("device-allocate-hint selector: %w", err)
	}
	return sel, nil
}
