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
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

const (
	spine = schedv1alpha1.TopologyLayer("SpineLayer")
	block = schedv1alpha1.TopologyLayer("BlockLayer")
	node  = schedv1alpha1.NodeTopologyLayer
)

var spec = []schedv1alpha1.NetworkTopologySpec{
	{TopologyLayer: spine, LabelKey: []string{"spine"}},
	{TopologyLayer: block, ParentTopologyLayer: spine, LabelKey: []string{"block"}},
	{TopologyLayer: node, ParentTopologyLayer: block},
}

func labelled(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// eightNodes is Koordinator's test cluster: spines s1 (blocks b1, b2) and s2 (b3, b4), two nodes per block.
func eightNodes() []*corev1.Node {
	var nodes []*corev1.Node
	for i := 1; i <= 8; i++ {
		b := (i + 1) / 2
		s := (b + 1) / 2
		nodes = append(nodes, labelled(fmt.Sprintf("node-%d", i), map[string]string{"spine": fmt.Sprintf("s%d", s), "block": fmt.Sprintf("b%d", b)}))
	}
	return nodes
}

func TestSortLayers(t *testing.T) {
	tests := map[string]struct {
		spec    []schedv1alpha1.NetworkTopologySpec
		want    []schedv1alpha1.TopologyLayer
		wantErr string
	}{
		"chain":          {spec: spec, want: []schedv1alpha1.TopologyLayer{schedv1alpha1.ClusterTopologyLayer, spine, block, node}},
		"nodes only":     {spec: []schedv1alpha1.NetworkTopologySpec{{TopologyLayer: node}}, want: []schedv1alpha1.TopologyLayer{schedv1alpha1.ClusterTopologyLayer, node}},
		"no node layer":  {spec: spec[:2], wantErr: "layer NodeTopologyLayer is missing"},
		"twice":          {spec: append([]schedv1alpha1.NetworkTopologySpec{spec[0]}, spec...), wantErr: "layer SpineLayer is listed twice"},
		"unknown parent": {spec: spec[1:], wantErr: "layer SpineLayer, the parent of BlockLayer, is not listed"},
		"orphan": {spec: append([]schedv1alpha1.NetworkTopologySpec{{TopologyLayer: "RackLayer"}}, spec...),
			wantErr: "layer RackLayer is not on the chain"},
		"cycle": {spec: []schedv1alpha1.NetworkTopologySpec{{TopologyLayer: node, ParentTopologyLayer: block}, {TopologyLayer: block, ParentTopologyLayer: node}},
			wantErr: "its own ancestor"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SortLayers(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("layers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuild: the tree and its status, a node without a block label gets a block of its own, a node without
// a spine label is left out.
func TestBuild(t *testing.T) {
	nodes := append(eightNodes(), labelled("lone", map[string]string{"spine": "s2"}), labelled("nowhere", map[string]string{"block": "b1"}))
	tree, err := Build(spec, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]schedv1alpha1.TopologyLayer{"nowhere": spine}, tree.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if d := tree.Node("lone"); d == nil || d.Parent.Name != "lone" || d.Parent.Layer != block || d.Parent.Parent.Name != "s2" {
		t.Errorf("node lone is at %+v, want under a block of its own in s2", d)
	}
	info := func(l schedv1alpha1.TopologyLayer, n string) *schedv1alpha1.TopologyInfo {
		return &schedv1alpha1.TopologyInfo{TopologyLayer: l, TopologyName: n}
	}
	detail := func(l schedv1alpha1.TopologyLayer, n string, parent *schedv1alpha1.TopologyInfo, child schedv1alpha1.TopologyLayer, children []string, nodes int32) schedv1alpha1.ClusterNetworkTopologyDetailStatus {
		return schedv1alpha1.ClusterNetworkTopologyDetailStatus{TopologyInfo: *info(l, n), ParentTopologyInfo: parent, ChildTopologyLayer: child, ChildTopologyNames: children, NodeNum: nodes}
	}
	want := schedv1alpha1.ClusterNetworkTopologyStatus{DetailStatus: []schedv1alpha1.ClusterNetworkTopologyDetailStatus{
		detail(schedv1alpha1.ClusterTopologyLayer, "", nil, spine, []string{"s1", "s2"}, 9),
		detail(spine, "s1", info(schedv1alpha1.ClusterTopologyLayer, ""), block, []string{"b1", "b2"}, 4),
		detail(block, "b1", info(spine, "s1"), node, nil, 2),
		detail(block, "b2", info(spine, "s1"), node, nil, 2),
		detail(spine, "s2", info(schedv1alpha1.ClusterTopologyLayer, ""), block, []string{"b3", "b4", "lone"}, 5),
		detail(block, "b3", info(spine, "s2"), node, nil, 2),
		detail(block, "b4", info(spine, "s2"), node, nil, 2),
		detail(block, "lone", info(spine, "s2"), node, nil, 1),
	}}
	if diff := cmp.Diff(want, tree.Status()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// nonZero drops the nodes given no members.
func nonZero(counts map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range counts {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

// TestDistribute pins the layout under pod-count multiples to Koordinator's tests: nodes n1..n4 with room 5,
// 7, 6, 4; blocks b1 = {n1, n2}, b2 = {n3, n4}.
func TestDistribute(t *testing.T) {
	nodes := []*corev1.Node{
		labelled("n1", map[string]string{"block": "b1"}), labelled("n2", map[string]string{"block": "b1"}),
		labelled("n3", map[string]string{"block": "b2"}), labelled("n4", map[string]string{"block": "b2"}),
	}
	tree, err := Build([]schedv1alpha1.NetworkTopologySpec{{TopologyLayer: block, LabelKey: []string{"block"}}, {TopologyLayer: node, ParentTopologyLayer: block}}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	room := map[string]NodeInput{"n1": {Offer: 5}, "n2": {Offer: 7}, "n3": {Offer: 6}, "n4": {Offer: 4}}
	tests := map[string]struct {
		want      int
		multiples map[schedv1alpha1.TopologyLayer]int
		counts    map[string]int
		total     int
	}{
		"15 members":            {want: 15, counts: map[string]int{"n1": 5, "n2": 7, "n3": 3}, total: 15},
		"node multiple 4":       {want: 20, multiples: map[schedv1alpha1.TopologyLayer]int{node: 4}, counts: map[string]int{"n1": 4, "n2": 4, "n3": 4, "n4": 4}, total: 16},
		"block multiple 8":      {want: 20, multiples: map[schedv1alpha1.TopologyLayer]int{block: 8}, counts: map[string]int{"n1": 1, "n2": 7, "n3": 6, "n4": 2}, total: 16},
		"node 2, block 8":       {want: 20, multiples: map[schedv1alpha1.TopologyLayer]int{node: 2, block: 8}, counts: map[string]int{"n1": 2, "n2": 6, "n3": 6, "n4": 2}, total: 16},
		"multiples leave 2 out": {want: 10, multiples: map[schedv1alpha1.TopologyLayer]int{node: 4}, counts: map[string]int{"n1": 4, "n2": 4}, total: 8},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := Request{Members: tc.want, Multiples: tc.multiples}
			scores := map[*Domain]score{}
			tree.sum(tree.Root, room, r, scores)
			counts := map[string]int{}
			var order []string
			got := distribute(tree.Root, tc.want, r, scores, counts, &order)
			if got != tc.total {
				t.Errorf("distributed %d, want %d", got, tc.total)
			}
			if diff := cmp.Diff(tc.counts, nonZero(counts)); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlace: the lowest domain that holds every member, tightest first, within the must-gather layer.
func TestPlace(t *testing.T) {
	tree, err := Build(spec, eightNodes())
	if err != nil {
		t.Fatal(err)
	}
	ones := map[string]NodeInput{}
	for i := 1; i <= 8; i++ {
		ones[fmt.Sprintf("node-%d", i)] = NodeInput{Offer: 1}
	}
	with := func(changes map[string]NodeInput) map[string]NodeInput {
		out := map[string]NodeInput{}
		for k, v := range ones {
			out[k] = v
		}
		for k, v := range changes {
			out[k] = v
		}
		return out
	}
	tests := map[string]struct {
		nodes      map[string]NodeInput
		spec       extension.NetworkTopologySpec
		members    int
		wantDomain string
		want       map[string]int
		wantErr    string
	}{
		"prefer gather: one spine": {
			nodes: ones, members: 4,
			spec:       extension.NetworkTopologySpec{GatherStrategy: []extension.NetworkTopologyGatherRule{{Layer: block, Strategy: extension.NetworkTopologyPreferGather}, {Layer: spine, Strategy: extension.NetworkTopologyPreferGather}}},
			wantDomain: "SpineLayer/s1", want: map[string]int{"node-1": 1, "node-2": 1, "node-3": 1, "node-4": 1},
		},
		"must gather a block": {
			nodes: ones, members: 2,
			spec:       extension.NetworkTopologySpec{GatherStrategy: []extension.NetworkTopologyGatherRule{{Layer: block, Strategy: extension.NetworkTopologyMustGather}, {Layer: spine, Strategy: extension.NetworkTopologyMustGather}}},
			wantDomain: "BlockLayer/b1", want: map[string]int{"node-1": 1, "node-2": 1},
		},
		"one node holds both": {
			nodes: with(map[string]NodeInput{"node-5": {Offer: 2}}), members: 2,
			spec:       extension.NetworkTopologySpec{GatherStrategy: []extension.NetworkTopologyGatherRule{{Layer: block, Strategy: extension.NetworkTopologyPreferGather}}},
			wantDomain: "NodeTopologyLayer/node-5", want: map[string]int{"node-5": 2},
		},
		"tightest block first": {
			nodes: with(map[string]NodeInput{"node-1": {Offer: 3}, "node-7": {Offer: 0}}), members: 2,
			spec:       extension.NetworkTopologySpec{GatherStrategy: []extension.NetworkTopologyGatherRule{{Layer: block, Strategy: extension.NetworkTopologyMustGather}}},
			wantDomain: "NodeTopologyLayer/node-1", want: map[string]int{"node-1": 2},
		},
		"near the gang's selector": {
			nodes: with(map[string]NodeInput{"node-6": {Offer: 1, Existing: 2}}), members: 2,
			spec:       extension.NetworkTopologySpec{GatherStrategy: []extension.NetworkTopologyGatherRule{{Layer: block, Strategy: extension.NetworkTopologyMustGather}}},
			wantDomain: "BlockLayer/b3", want: map[string]int{"node-5": 1, "node-6": 1},
		},
		"no block holds 3": {
			nodes: ones, members: 3,
			spec:    extension.NetworkTopologySpec{GatherStrategy: []extension.NetworkTopologyGatherRule{{Layer: block, Strategy: extension.NetworkTopologyMustGather}}},
			wantErr: "no topology domain can hold the gang's 3 pending members: BlockLayer/b1 holds 2, BlockLayer/b2 holds 2, BlockLayer/b3 holds 2, BlockLayer/b4 holds 2",
		},
		"spine multiple of 4": {
			nodes: ones, members: 6,
			spec:    extension.NetworkTopologySpec{GatherStrategy: []extension.NetworkTopologyGatherRule{{Layer: block, Strategy: extension.NetworkTopologyPreferGather, PodCountMultiple: 4}}},
			wantErr: "no topology domain can hold the gang's 6 pending members: the cluster holds 0 (podCountMultiple BlockLayer=4)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := tree.RequestOf(tc.members, &tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tree.Place(tc.nodes, r)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := string(got.Domain.Layer) + "/" + got.Domain.Name; d != tc.wantDomain {
				t.Errorf("domain %s, want %s", d, tc.wantDomain)
			}
			if diff := cmp.Diff(tc.want, nonZero(got.Counts)); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestOfUnknownLayer(t *testing.T) {
	tree, err := Build(spec, eightNodes())
	if err != nil {
		t.Fatal(err)
	}
	_, err = tree.RequestOf(2, &extension.NetworkTopologySpec{GatherStrategy: []extension.NetworkTopologyGatherRule{{Layer: "RackLayer", Strategy: extension.NetworkTopologyMustGather}}})
	if err == nil || !strings.Contains(err.Error(), "layer RackLayer") {
		t.Errorf("error = %v, want one naming RackLayer", err)
	}
}

func TestAncestorAndNodeNames(t *testing.T) {
	tree, err := Build(spec, eightNodes())
	if err != nil {
		t.Fatal(err)
	}
	b := tree.Ancestor("node-3", block)
	if b == nil || b.Name != "b2" {
		t.Fatalf("block of node-3 = %+v, want b2", b)
	}
	if diff := cmp.Diff([]string{"node-3", "node-4"}, b.NodeNames()); diff != "" {
		t.Errorf("nodes of b2 (-want +got):\n%s", diff)
	}
	if s := tree.Ancestor("node-3", spine); s == nil || s.Name != "s1" {
		t.Errorf("spine of node-3 = %+v, want s1", s)
	}
	if d := tree.Ancestor("elsewhere", block); d != nil {
		t.Errorf("block of a node not in the tree = %+v", d)
	}
}

// TestRank pins the order to Koordinator's PreScore test: pods of the selector on node-8 (b4), node-7 (b4) and
// node-6 (b3); candidates node-1..5 and node-9 (not in the tree, left out).
func TestRank(t *testing.T) {
	tree, err := Build(spec, eightNodes())
	if err != nil {
		t.Fatal(err)
	}
	got := tree.Rank([]string{"node-1", "node-2", "node-3", "node-4", "node-5", "node-9"}, map[string]int{"node-8": 1, "node-7": 1, "node-6": 1})
	// s2 holds the three pods: node-5 (b3, with node-6's pod) first; then s1's nodes, all alike, by name.
	want := map[string]int{"node-5": 0, "node-1": 1, "node-2": 2, "node-3": 3, "node-4": 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ranks (-want +got):\n%s", diff)
	}
}
