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

// Package cache holds what the DeviceShare plugin knows: each node's devices (from its Device object) and what
// the pods on it hold (from their device-allocated annotations and the plugin's own Reserve).
package cache

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Device is one device of a node.
type Device struct {
	Type  extension.DeviceType
	Minor int
	UUID  string
	// Healthy devices are allocated; unhealthy ones keep what pods hold on them, and give nothing new.
	Healthy bool
	// Total is what the device has, e.g. gpu-core 100, gpu-memory-ratio 100, gpu-memory in bytes.
	Total quantity.Amounts
	// NUMA is its NUMA node, -1 when unknown; PCIe its PCIe switch (root), "" when unknown.
	NUMA int
	PCIe string
	// Labels are the device's labels, which a hint's selector matches.
	Labels map[string]string
	// VFs are its virtual functions.
	VFs []VF
}

// VF is a virtual function of a device, with the labels of its group.
type VF struct {
	Minor  int32
	BusID  string
	Labels map[string]string
}

// Node is what a node offers: its devices by type, in minor order, and the Device object's labels.
type Node struct {
	Devices map[extension.DeviceType][]Device
	Labels  map[string]string
}

// NodeFromDevice reads a Device object. Devices without a type or minor, or with a minor seen before for
// their type, are left out and named in the error; the rest is still returned.
func NodeFromDevice(d *schedulingv1alpha1.Device) (*Node, error) {
	n := &Node{Devices: map[extension.DeviceType][]Device{}, Labels: d.Labels}
	var problems []string
	seen := map[string]bool{}
	for i, info := range d.Spec.Devices {
		if info.Type == "" || info.Minor == nil {
			problems = append(problems, fmt.Sprintf("devices[%d] has no type or minor", i))
			continue
		}
		key := fmt.Sprintf("%s/%d", info.Type, *info.Minor)
		if seen[key] {
			problems = append(problems, fmt.Sprintf("devices[%d]: a second %s with minor %d", i, info.Type, *info.Minor))
			continue
		}
		seen[key] = true
		dev := Device{Type: info.Type, Minor: int(*info.Minor), UUID: info.UUID, Healthy: info.Health, Total: quantity.FromList(info.Resources),
			NUMA: -1, Labels: info.Labels}
		if t := info.Topology; t != nil {
			dev.NUMA, dev.PCIe = int(t.NodeID), t.PCIEID
		}
		for _, g := range info.VFGroups {
			for _, vf := range g.VFs {
				dev.VFs = append(dev.VFs, VF{Minor: vf.Minor, BusID: vf.BusID, Labels: g.Labels})
			}
		}
		slices.SortFunc(dev.VFs, func(a, b VF) int { return cmp.Compare(a.BusID, b.BusID) })
		n.Devices[info.Type] = append(n.Devices[info.Type], dev)
	}
	for t := range n.Devices {
		slices.SortFunc(n.Devices[t], func(a, b Device) int { return cmp.Compare(a.Minor, b.Minor) })
	}
	if len(problems) > 0 {
		return n, fmt.Errorf("Device %s: %v", d.Name, problems)
	}
	return n, nil
}

// Allocation is what one pod holds on a node.
type Allocation struct {
	Node    string
	Devices extension.DeviceAllocations
	// Reservation is, for an owner pod, the Reservation it allocates; Reserves is set for the allocation of a
	// Reservation itself (keyed by the Reservation's UID), whose devices its owners take.
	Reservation types.UID
	Reserves    bool
	// assumed is set from Reserve until the pod is seen bound with its annotation.
	assumed bool
}

// Usage is what the pods and Reservations on a node hold.
type Usage struct {
	// Used are the amounts held on each device, by type and minor; what an owner takes of its Reservation's
	// devices is in it once, as the Reservation's.
	Used map[extension.DeviceType]map[int]quantity.Amounts
	// VFs are the bus IDs of the virtual functions held.
	VFs map[string]bool
	// Reserved are, per Reservation, the amounts it holds that its owners have not taken, by type and minor;
	// ReservedVFs its virtual functions no owner took.
	Reserved    map[types.UID]map[extension.DeviceType]map[int]quantity.Amounts
	ReservedVFs map[types.UID]map[string]bool
}

// Cache is safe for concurrent use.
type Cache struct {
	mu     sync.RWMutex
	nodes  map[string]*Node
	allocs map[types.UID]*Allocation
	byNode map[string]map[types.UID]*Allocation
	usage  map[string]*Usage
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{nodes: map[string]*Node{}, allocs: map[types.UID]*Allocation{}, byNode: map[string]map[types.UID]*Allocation{}, usage: map[string]*Usage{}}
}

// SetNode records node's devices; nil forgets them (the Device is gone).
func (c *Cache) SetNode(name string, n *Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n == nil {
		delete(c.nodes, name)
		return
	}
	c.nodes[name] = n
}

// Node returns the devices of node.
func (c *Cache) Node(name string) (*Node, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n, ok := c.nodes[name]
	return n, ok
}

// Assume records what Reserve gave pod uid until the pod is seen bound.
func (c *Cache) Assume(uid types.UID, a Allocation) {
	a.assumed = true
	c.set(uid, &a)
}

// SetBound records what a bound pod holds (from its annotation).
func (c *Cache) SetBound(uid types.UID, a Allocation) { c.set(uid, &a) }

func (c *Cache) set(uid types.UID, a *Allocation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(uid)
	c.allocs[uid] = a
	if c.byNode[a.Node] == nil {
		c.byNode[a.Node] = map[types.UID]*Allocation{}
	}
	c.byNode[a.Node][uid] = a
	delete(c.usage, a.Node)
}

// Forget drops what pod uid holds.
func (c *Cache) Forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(uid)
}

// ForgetAssumed drops what Reserve gave pod uid, unless the pod was seen bound since.
func (c *Cache) ForgetAssumed(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.allocs[uid]; ok && a.assumed {
		c.forgetLocked(uid)
	}
}

// IsAssumed tells whether uid holds what Reserve gave it and has not been seen bound with it yet.
func (c *Cache) IsAssumed(uid types.UID) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a, ok := c.allocs[uid]
	return ok && a.assumed
}

func (c *Cache) forgetLocked(uid types.UID) {
	a, ok := c.allocs[uid]
	if !ok {
		return
	}
	delete(c.allocs, uid)
	delete(c.byNode[a.Node], uid)
	if len(c.byNode[a.Node]) == 0 {
		delete(c.byNode, a.Node)
	}
	delete(c.usage, a.Node)
}

// Usage returns what the pods on node hold, without the pod skip (a pod scheduled again). It is computed once
// per change of the node's allocations; the result must not be changed.
func (c *Cache) Usage(node string, skip types.UID) *Usage {
	c.mu.RLock()
	_, own := c.byNode[node][skip]
	u, ok := c.usage[node]
	c.mu.RUnlock()
	if ok && !own {
		return u
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, own = c.byNode[node][skip]
	if u, ok := c.usage[node]; ok && !own {
		return u
	}
	u = &Usage{Used: map[extension.DeviceType]map[int]quantity.Amounts{}, VFs: map[string]bool{}}
	for uid, a := range c.byNode[node] {
		if uid == skip {
			continue
		}
		for t, list := range a.Devices {
			if u.Used[t] == nil {
				u.Used[t] = map[int]quantity.Amounts{}
			}
			for _, d := range list {
				if u.Used[t][int(d.Minor)] == nil {
					u.Used[t][int(d.Minor)] = quantity.Amounts{}
				}
				u.Used[t][int(d.Minor)].Add(quantity.FromList(d.Resources))
				for _, vf := range d.VirtualFunctions() {
					u.VFs[vf.BusID] = true
				}
			}
		}
	}
	c.reservedLocked(node, skip, u)
	if !own {
		c.usage[node] = u
	}
	return u
}

// reservedLocked fills u's Reserved and ReservedVFs, and takes out of u.Used what owners hold inside their
// Reservation's devices (it is there as the Reservation's); c.mu is held.
func (c *Cache) reservedLocked(node string, skip types.UID, u *Usage) {
	for uid, r := range c.byNode[node] {
		if !r.Reserves || uid == skip {
			continue
		}
		left := map[extension.DeviceType]map[int]quantity.Amounts{}
		vfs := map[string]bool{}
		for t, list := range r.Devices {
			left[t] = map[int]quantity.Amounts{}
			for _, d := range list {
				if left[t][int(d.Minor)] == nil {
					left[t][int(d.Minor)] = quantity.Amounts{}
				}
				left[t][int(d.Minor)].Add(quantity.FromList(d.Resources))
				for _, vf := range d.VirtualFunctions() {
					vfs[vf.BusID] = true
				}
			}
		}
		for ouid, o := range c.byNode[node] {
			if o.Reservation != uid || ouid == skip {
				continue
			}
			for t, list := range o.Devices {
				for _, d := range list {
					held := left[t][int(d.Minor)]
					for name, v := range quantity.FromList(d.Resources) {
						inside := min(v, max(held[name], 0))
						if inside <= 0 {
							continue
						}
						held[name] -= inside
						u.Used[t][int(d.Minor)][name] -= inside
					}
					for _, vf := range d.VirtualFunctions() {
						delete(vfs, vf.BusID)
					}
				}
			}
		}
		if u.Reserved == nil {
			u.Reserved = map[types.UID]map[extension.DeviceType]map[int]quantity.Amounts{}
			u.ReservedVFs = map[types.UID]map[string]bool{}
		}
		u.Reserved[uid], u.ReservedVFs[uid] = left, vfs
	}
}

// Resources of the GPU that allocations record: the core, the memory in bytes and its ratio.
var gpuResources = []corev1.ResourceName{extension.ResourceGPUCore, extension.ResourceGPUMemory, extension.ResourceGPUMemoryRatio}

// GPUResources are the resources of a GPU that the plugin accounts.
func GPUResources() []corev1.ResourceName { return slices.Clone(gpuResources) }
