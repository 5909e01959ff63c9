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

package cache

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// refresh recomputes the requests and runtime quotas when an input changed. The caller holds m.mu. It reuses
// the quotas' maps: readers get copies.
func (m *Manager) refresh() {
	if !m.dirty {
		return
	}
	for _, n := range m.quotas {
		if !n.inTree {
			n.request, n.runtime = nil, nil
		}
	}
	for _, n := range m.top {
		computeRequest(n)
	}
	// The tree shares what the system and default quotas do not use.
	total := reset(m.scratch.total)
	total.Add(m.total)
	m.scratch.total = total
	for _, name := range []string{extension.SystemQuotaName, extension.DefaultQuotaName} {
		n := m.quotas[name]
		total.Sub(n.used)
		n.request = n.ownRequest.Clone()
		n.runtime = n.Max.Clone()
	}
	if !m.opts.MultiQuotaTree {
		m.distribute(total, m.top)
		m.dirty = false
		return
	}
	// Each tree shares its root's total; the default tree what is left of the cluster's.
	trees := map[string][]*node{}
	for _, n := range m.top {
		trees[n.TreeID] = append(trees[n.TreeID], n)
	}
	for _, id := range slices.Sorted(maps.Keys(trees)) {
		if id == "" {
			continue
		}
		treeTotal := quantity.Amounts{}
		for _, n := range trees[id] {
			if n.TreeRoot && n.TreeTotal != nil {
				treeTotal = n.TreeTotal.Clone()
				if !n.IgnoreDefaultTree {
					total.Sub(n.TreeTotal)
				}
				break
			}
		}
		m.distribute(treeTotal, trees[id])
	}
	for name, v := range total {
		total[name] = max(v, 0)
	}
	m.distribute(total, trees[""])
	m.dirty = false
}

// reset returns v emptied, or a new quantity.Amounts when v is nil.
func reset(v quantity.Amounts) quantity.Amounts {
	if v == nil {
		return quantity.Amounts{}
	}
	clear(v)
	return v
}

// computeRequest sets n.request: its own pods' requests plus each child's request capped by the child's max.
// A quota that does not lend requests at least its min, so that its ancestors keep the min for it instead of
// lending it to their siblings, as Koordinator does.
func computeRequest(n *node) {
	n.request = reset(n.request)
	n.request.Add(n.ownRequest)
	for _, c := range n.children {
		computeRequest(c)
		for name, maxValue := range c.Max {
			n.request[name] = quantity.Add(n.request[name], min(c.request[name], maxValue))
		}
	}
	if !n.AllowLentResource {
		for name, minValue := range n.Min {
			n.request[name] = max(n.request[name], minValue)
		}
	}
}

// distribute shares total among the sibling quotas children, one resource at a time, then each parent's
// runtime among its own children.
func (m *Manager) distribute(total quantity.Amounts, children []*node) {
	if len(children) == 0 {
		return
	}
	resources := m.scratch.resources[:0]
	for _, c := range children {
		c.runtime = reset(c.runtime)
		for name := range c.Max {
			if !slices.Contains(resources, name) {
				resources = append(resources, name)
			}
		}
		for name := range c.Min {
			if !slices.Contains(resources, name) {
				resources = append(resources, name)
			}
		}
	}
	m.scratch.resources = resources
	shares := slices.Grow(m.scratch.shares[:0], len(children))[:len(children)]
	m.scratch.shares = shares
	for _, name := range resources {
		for i, c := range children {
			request := int64(0)
			if maxValue, ok := c.Max[name]; ok {
				request = min(c.request[name], maxValue)
			}
			shares[i] = share{
				min:        c.Min[name],
				guaranteed: c.Guaranteed[name],
				request:    request,
				max:        c.Max[name],
				weight:     c.weight(name),
				allowLent:  c.AllowLentResource,
			}
		}
		distribute(total[name], shares, m.opts.EnableMinQuotaScale)
		for i, c := range children {
			if _, ok := c.Max[name]; ok {
				c.runtime[name] = shares[i].runtime
			}
		}
	}
	for _, c := range children {
		m.distribute(c.runtime, c.children)
	}
}

// weight is n's shared weight for resource name: the shared-weight annotation's value, else its max.
func (n *node) weight(name corev1.ResourceName) int64 {
	if w, ok := n.SharedWeight[name]; ok {
		return w
	}
	return n.Max[name]
}
