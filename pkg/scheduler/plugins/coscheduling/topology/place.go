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

package topology

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// Request is what a gang asks of the topology.
type Request struct {
	// Members is how many members to place.
	Members int
	// MustGather is the deepest layer the gang must stay within one domain of; empty when none.
	MustGather schedv1alpha1.TopologyLayer
	// Multiples are, per layer, the multiple of members each of its domains must take.
	Multiples map[schedv1alpha1.TopologyLayer]int
}

// RequestOf returns the request of a gang with members pending members and the network topology spec.
// Rules of layers the tree does not have are an error.
func (t *Tree) RequestOf(members int, spec *extension.NetworkTopologySpec) (Request, error) {
	r := Request{Members: members, Multiples: map[schedv1alpha1.TopologyLayer]int{}}
	depth := -1
	for _, rule := range spec.GatherStrategy {
		i := slices.Index(t.Layers, rule.Layer)
		if i < 1 {
			return Request{}, fmt.Errorf("layer %s of the gang's network topology spec is not a layer of the ClusterNetworkTopology (%v)", rule.Layer, t.Layers[1:])
		}
		if rule.Strategy == extension.NetworkTopologyMustGather && i > depth {
			depth, r.MustGather = i, rule.Layer
		}
		if rule.PodCountMultiple > 1 {
			r.Multiples[rule.Layer] = rule.PodCountMultiple
		}
	}
	return r, nil
}

// NodeInput is what a node offers the gang: how many of its members fit on it, and how many pods that want
// to be near the gang (same network-topology-selector) it runs.
type NodeInput struct {
	Offer    int
	Existing int
}

// Placement is how many members each node takes, and the nodes in the order members fill them.
type Placement struct {
	Counts map[string]int
	Order  []string
	// Domain is the domain the gang was placed in.
	Domain *Domain
}

// score is a domain's totals for one request.
type score struct {
	offer, existing int
}

// Place chooses the domain and nodes for a gang: within each domain of the must-gather layer (or the whole
// cluster), it goes down as long as some domain of the next layer still offers room for every member, and
// takes the domains of the deepest such layer as candidates. Candidates with more pods that want to be near
// the gang come first, then the tightest fit (the least room, so that bigger domains stay whole for bigger
// gangs), the ancestors deciding ties, then the name. The first candidate whose room, laid out by the
// multiples, holds every member is the placement; its members fill nodes with more such pods, then more room,
// first. It returns an error saying how many members each must-gather domain could hold when none can.
func (t *Tree) Place(nodes map[string]NodeInput, r Request) (*Placement, error) {
	scores := map[*Domain]score{}
	t.sum(t.Root, nodes, r, scores)

	var roots []*Domain
	if r.MustGather == "" {
		roots = []*Domain{t.Root}
	} else {
		roots = t.layer(slices.Index(t.Layers, r.MustGather))
	}
	var candidates []*Domain
	for level := filter(roots, scores, r.Members); len(level) > 0; {
		candidates = level
		var next []*Domain
		for _, d := range level {
			next = append(next, d.Children...)
		}
		level = filter(next, scores, r.Members)
	}
	slices.SortFunc(candidates, func(a, b *Domain) int { return compare(a, b, scores, true) })
	for _, d := range candidates {
		counts := map[string]int{}
		var order []string
		if got := distribute(d, r.Members, r, scores, counts, &order); got >= r.Members {
			return &Placement{Counts: counts, Order: order, Domain: d}, nil
		}
	}
	var room []string
	for _, d := range roots {
		room = append(room, fmt.Sprintf("%s/%s holds %d", d.Layer, d.Name, scores[d].offer))
	}
	if r.MustGather == "" {
		room = []string{fmt.Sprintf("the cluster holds %d", scores[t.Root].offer)}
	}
	msg := fmt.Sprintf("no topology domain can hold the gang's %d pending members: %s", r.Members, strings.Join(room, ", "))
	if len(r.Multiples) > 0 {
		var m []string
		for _, l := range t.Layers {
			if n := r.Multiples[l]; n > 1 {
				m = append(m, fmt.Sprintf("%s=%d", l, n))
			}
		}
		msg += " (podCountMultiple " + strings.Join(m, ", ") + ")"
	}
	return nil, fmt.Errorf("%s", msg)
}

// sum computes the room and existing pods of d and the domains below it, the room of each domain being the
// sum of its children's, rounded down to its layer's multiple.
func (t *Tree) sum(d *Domain, nodes map[string]NodeInput, r Request, scores map[*Domain]score) score {
	var s score
	if d.IsNode() {
		in := nodes[d.Name]
		s = score{offer: in.Offer, existing: in.Existing}
	} else {
		for _, c := range d.Children {
			cs := t.sum(c, nodes, r, scores)
			s.offer += cs.offer
			s.existing += cs.existing
		}
	}
	s.offer = roundDown(s.offer, r.Multiples[d.Layer])
	scores[d] = s
	return s
}

// layer returns the domains of the layer at depth.
func (t *Tree) layer(depth int) []*Domain {
	level := []*Domain{t.Root}
	for range depth {
		var next []*Domain
		for _, d := range level {
			next = append(next, d.Children...)
		}
		level = next
	}
	return level
}

// filter returns the domains with room for n members.
func filter(domains []*Domain, scores map[*Domain]score, n int) []*Domain {
	var out []*Domain
	for _, d := range domains {
		if scores[d].offer >= n {
			out = append(out, d)
		}
	}
	return out
}

// compare orders domains: more existing pods first, then less room (tight) or more room (!tight), the
// ancestors deciding ties in the same way, then by name.
func compare(a, b *Domain, scores map[*Domain]score, tight bool) int {
	for x, y := a, b; x != nil && y != nil; x, y = x.Parent, y.Parent {
		if c := cmp.Compare(scores[y].existing, scores[x].existing); c != 0 {
			return c
		}
	}
	for x, y := a, b; x != nil && y != nil; x, y = x.Parent, y.Parent {
		c := cmp.Compare(scores[x].offer, scores[y].offer)
		if !tight {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Name, b.Name)
}

// distribute lays up to want members out in d: as many as its room, rounded down to its layer's multiple,
// filling its children with more existing pods, then more room, first. It returns how many it laid out.
func distribute(d *Domain, want int, r Request, scores map[*Domain]score, counts map[string]int, order *[]string) int {
	limit := roundDown(min(scores[d].offer, want), r.Multiples[d.Layer])
	if d.IsNode() {
		counts[d.Name] = limit
		*order = append(*order, d.Name)
		return limit
	}
	children := slices.Clone(d.Children)
	slices.SortFunc(children, func(a, b *Domain) int { return compare(a, b, scores, false) })
	got := 0
	for _, c := range children {
		if got >= limit {
			break
		}
		got += distribute(c, limit-got, r, scores, counts, order)
	}
	return got
}

// roundDown rounds n down to a multiple of m, when m is above 1.
func roundDown(n, m int) int {
	if m > 1 {
		return n - n%m
	}
	return n
}

// Rank orders candidates, nodes of the tree, for a pod that wants to be near the pods counted in existing
// (pods per node with the same network-topology-selector, over every node): nodes in domains with more such
// pods first (the node's own count, then its block's, and so on up), then nodes in domains with fewer
// candidates (the tighter fit), then by name, as Koordinator's Coscheduling Score does. It returns each
// candidate's rank, 0 for the best; candidates not in the tree are left out.
func (t *Tree) Rank(candidates []string, existing map[string]int) map[string]int {
	nodes := make(map[string]NodeInput, len(existing)+len(candidates))
	for n, e := range existing {
		nodes[n] = NodeInput{Existing: e}
	}
	var leaves []*Domain
	for _, n := range candidates {
		d := t.Node(n)
		if d == nil {
			continue
		}
		in := nodes[n]
		in.Offer = 1
		nodes[n] = in
		leaves = append(leaves, d)
	}
	scores := map[*Domain]score{}
	t.sum(t.Root, nodes, Request{}, scores)
	slices.SortFunc(leaves, func(a, b *Domain) int { return compare(a, b, scores, true) })
	ranks := make(map[string]int, len(leaves))
	for i, d := range leaves {
		ranks[d.Name] = i
	}
	return ranks
}
