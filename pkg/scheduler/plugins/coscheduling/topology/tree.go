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

// Package topology is the cluster's network topology as network-topology-aware gang placement sees it: a
// tree of domains (cluster, then the layers of the ClusterNetworkTopology, then nodes) built from the
// topology's layers and the nodes' labels (tree.go), and the placement of a gang's members in the fewest,
// tightest domains that hold them all (place.go).
package topology

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// Domain is a node of the tree: the cluster, a domain of a layer, or a node.
type Domain struct {
	// Layer and Name name the domain; a node's name is the node's.
	Layer schedv1alpha1.TopologyLayer
	Name  string
	// Parent is the domain above; nil for the cluster.
	Parent *Domain
	// Children are the domains below, sorted by name; none for a node.
	Children []*Domain
	// depth is the domain's layer's index: 0 for the cluster.
	depth int
}

// IsNode reports whether the domain is a node.
func (d *Domain) IsNode() bool { return d.Layer == schedv1alpha1.NodeTopologyLayer }

// Nodes returns the number of nodes in the domain.
func (d *Domain) Nodes() int {
	if d.IsNode() {
		return 1
	}
	n := 0
	for _, c := range d.Children {
		n += c.Nodes()
	}
	return n
}

// Tree is the topology of the cluster's nodes.
type Tree struct {
	// Layers are the layers from the cluster down to the node layer.
	Layers []schedv1alpha1.TopologyLayer
	// Root is the cluster.
	Root *Domain
	// labelKeys are the node labels of each layer.
	labelKeys map[schedv1alpha1.TopologyLayer][]string
	// domains index the domains by layer and name.
	domains map[domainKey]*Domain
	// Skipped are the nodes left out of the tree, with the layer whose label they lack.
	Skipped map[string]schedv1alpha1.TopologyLayer
}

type domainKey struct {
	layer schedv1alpha1.TopologyLayer
	name  string
}

// SortLayers returns the layers of spec from the top (the layer under the cluster) down to the node layer,
// following each layer's parent up from NodeTopologyLayer. It fails, naming the layer, when the node layer is
// missing, a layer is listed twice, a parent is not listed, or a layer is not on the chain.
func SortLayers(spec []schedv1alpha1.NetworkTopologySpec) ([]schedv1alpha1.TopologyLayer, error) {
	parent := map[schedv1alpha1.TopologyLayer]schedv1alpha1.TopologyLayer{}
	for _, s := range spec {
		if s.TopologyLayer == "" {
			return nil, fmt.Errorf("a layer has no name")
		}
		if s.TopologyLayer == schedv1alpha1.ClusterTopologyLayer {
			return nil, fmt.Errorf("layer %s is the cluster itself and is not listed", s.TopologyLayer)
		}
		if _, dup := parent[s.TopologyLayer]; dup {
			return nil, fmt.Errorf("layer %s is listed twice", s.TopologyLayer)
		}
		p := s.ParentTopologyLayer
		if p == "" {
			p = schedv1alpha1.ClusterTopologyLayer
		}
		parent[s.TopologyLayer] = p
	}
	if _, ok := parent[schedv1alpha1.NodeTopologyLayer]; !ok {
		return nil, fmt.Errorf("layer %s is missing", schedv1alpha1.NodeTopologyLayer)
	}
	var chain []schedv1alpha1.TopologyLayer
	for l := schedv1alpha1.NodeTopologyLayer; l != schedv1alpha1.ClusterTopologyLayer; {
		if slices.Contains(chain, l) {
			return nil, fmt.Errorf("layer %s is its own ancestor", l)
		}
		chain = append(chain, l)
		p, ok := parent[l]
		if !ok {
			return nil, fmt.Errorf("layer %s, the parent of %s, is not listed", l, chain[len(chain)-2])
		}
		l = p
	}
	if len(chain) != len(parent) {
		for l := range parent {
			if !slices.Contains(chain, l) {
				return nil, fmt.Errorf("layer %s is not on the chain from %s up", l, schedv1alpha1.NodeTopologyLayer)
			}
		}
	}
	chain = append(chain, schedv1alpha1.ClusterTopologyLayer)
	slices.Reverse(chain)
	return chain, nil
}

// Build returns the tree of nodes under spec. A node's domain in a layer is the value of the first of the
// layer's label keys it has. A node without one is left out (Skipped), except in the layer right above the
// nodes, where it gets a domain of its own named after it, so that every node sits at the same depth. Domain
// names are unique per layer across the cluster: a domain is under the parent it was first seen under.
func Build(spec []schedv1alpha1.NetworkTopologySpec, nodes []*corev1.Node) (*Tree, error) {
	layers, err := SortLayers(spec)
	if err != nil {
		return nil, err
	}
	t := &Tree{
		Layers:    layers,
		Root:      &Domain{Layer: schedv1alpha1.ClusterTopologyLayer},
		labelKeys: map[schedv1alpha1.TopologyLayer][]string{},
		domains:   map[domainKey]*Domain{},
		Skipped:   map[string]schedv1alpha1.TopologyLayer{},
	}
	for _, s := range spec {
		t.labelKeys[s.TopologyLayer] = s.LabelKey
	}
	for _, n := range nodes {
		t.add(n)
	}
	var sortChildren func(d *Domain)
	sortChildren = func(d *Domain) {
		slices.SortFunc(d.Children, func(a, b *Domain) int { return cmp.Compare(a.Name, b.Name) })
		for _, c := range d.Children {
			sortChildren(c)
		}
	}
	sortChildren(t.Root)
	return t, nil
}

// add puts node n in the tree.
func (t *Tree) add(n *corev1.Node) {
	names := make([]string, len(t.Layers))
	for i := 1; i < len(t.Layers); i++ {
		l := t.Layers[i]
		if l == schedv1alpha1.NodeTopologyLayer {
			names[i] = n.Name
			continue
		}
		for _, k := range t.labelKeys[l] {
			if v := n.Labels[k]; v != "" {
				names[i] = v
				break
			}
		}
		if names[i] == "" {
			if i != len(t.Layers)-2 {
				t.Skipped[n.Name] = l
				return
			}
			names[i] = n.Name
		}
	}
	parent := t.Root
	for i := 1; i < len(t.Layers); i++ {
		key := domainKey{layer: t.Layers[i], name: names[i]}
		d, ok := t.domains[key]
		if !ok {
			d = &Domain{Layer: key.layer, Name: key.name, Parent: parent, depth: i}
			parent.Children = append(parent.Children, d)
			t.domains[key] = d
		}
		parent = d
	}
}

// Node returns the domain of node name, nil when the node is not in the tree.
func (t *Tree) Node(name string) *Domain {
	return t.domains[domainKey{layer: schedv1alpha1.NodeTopologyLayer, name: name}]
}

// Ancestor returns the domain of layer that holds node, nil when the node is not in the tree.
func (t *Tree) Ancestor(node string, layer schedv1alpha1.TopologyLayer) *Domain {
	for d := t.Node(node); d != nil; d = d.Parent {
		if d.Layer == layer {
			return d
		}
	}
	return nil
}

// NodeNames returns the names of the nodes in d.
func (d *Domain) NodeNames() []string {
	if d.IsNode() {
		return []string{d.Name}
	}
	var names []string
	for _, c := range d.Children {
		names = append(names, c.NodeNames()...)
	}
	return names
}

// Status returns the tree as a ClusterNetworkTopology's status: one entry per domain above the nodes, the
// cluster first, in depth-first order by name.
func (t *Tree) Status() schedv1alpha1.ClusterNetworkTopologyStatus {
	var status schedv1alpha1.ClusterNetworkTopologyStatus
	var walk func(d *Domain)
	walk = func(d *Domain) {
		if d.IsNode() {
			return
		}
		s := schedv1alpha1.ClusterNetworkTopologyDetailStatus{
			TopologyInfo: schedv1alpha1.TopologyInfo{TopologyLayer: d.Layer, TopologyName: d.Name},
			NodeNum:      int32(d.Nodes()),
		}
		if d.Parent != nil {
			s.ParentTopologyInfo = &schedv1alpha1.TopologyInfo{TopologyLayer: d.Parent.Layer, TopologyName: d.Parent.Name}
		}
		if d.depth+1 < len(t.Layers) {
			s.ChildTopologyLayer = t.Layers[d.depth+1]
		}
		if s.ChildTopologyLayer != schedv1alpha1.NodeTopologyLayer {
			for _, c := range d.Children {
				s.ChildTopologyNames = append(s.ChildTopologyNames, c.Name)
			}
		}
		status.DetailStatus = append(status.DetailStatus, s)
		for _, c := range d.Children {
			walk(c)
		}
	}
	walk(t.Root)
	return status
}
