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
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Nodes holds LoadAwareScheduling's state of every node: the latest known version of its NodeMetric, as a
// view, and the pods assigned to it.
//
// Filter and Score read a node's state for every node in every scheduling cycle, in parallel, so reading
// takes no lock: the set of nodes is an immutable map replaced on the rare insertions and deletions, and a
// node's NodeMetric view, pods generation and memoized results are atomic pointers and counters. Writers
// (informer events, Reserve) serialize on one mutex. It is safe for concurrent use.
//
// NodeMetrics reach it through a plugins.Feed, which passes on each version once and never an older one
// after a newer, whether the plugin's informer or kube-scheduler's (through the queueing hint) has it first.
type Nodes struct {
	// nodes is read for every node in every cycle; the padding keeps the writers' fields below off its cache
	// line.
	nodes atomic.Pointer[map[string]*Node]
	// byObject finds the state of a node by the scheduler's node object, which is cheaper than by name: a
	// pointer hashes and compares without reaching the name's bytes in memory. It lags: ForObject falls back
	// to nodes for objects it does not hold yet.
	byObject  atomic.Pointer[map[*corev1.Node]*Node]
	resources quantity.Names
	_         [64]byte
	// mu serializes writers and guards the pods of every node, podNode, every node's object and unlinked.
	mu      sync.Mutex
	podNode map[types.UID]*Node
	// unlinked counts the node objects ForObject found by name since byObject was last rebuilt.
	unlinked int
	// lastGeneration is the generation given to the last change of any node's pods.
	lastGeneration atomic.Uint64
}

// Node is the state of one node.
type Node struct {
	// memo, view and generation are read for the node in every scheduling cycle: they come first, to share a
	// cache line.

	// memo holds what a user of the cache derived from the node's state.
	memo atomic.Value
	// view is the latest version of the node's NodeMetric, nil when it has none; every version is a new view,
	// so a Stamp of the node differs whenever its NodeMetric changed.
	view       atomic.Pointer[NodeMetricView]
	generation atomic.Uint64
	// pods are guarded by Nodes.mu.
	pods map[types.UID]*AssignedPod
	// memos hold the last AssignedUsage and ProdUsage.
	memos [2]atomic.Pointer[assignedMemo]
	// object is the last node object ForObject found the node by; guarded by Nodes.mu.
	object *corev1.Node
	// owner is the Nodes the node belongs to.
	owner *Nodes
}

// NewNodes returns an empty state over resources.
func NewNodes(resources quantity.Names) *Nodes {
	n := &Nodes{resources: resources, podNode: map[types.UID]*Node{}}
	n.nodes.Store(&map[string]*Node{})
	n.byObject.Store(&map[*corev1.Node]*Node{})
	return n
}

// Get returns the state of node, or nil when nothing is known about it.
func (c *Nodes) Get(node string) *Node {
	return (*c.nodes.Load())[node]
}

// ForObject returns the state of the node whose object (the scheduler's version of it) is node, or nil when
// nothing is known about it. It is Get(node.Name), faster for the objects it has seen before.
func (c *Nodes) ForObject(node *corev1.Node) *Node {
	if n := (*c.byObject.Load())[node]; n != nil {
		return n
	}
	n := c.Get(node.Name)
	if n != nil {
		c.link(n, node)
	}
	return n
}

// link records that node is the current object of n, which the lookup by object missed. The lookup learns
// it when byObject is rebuilt, once the misses since the last rebuild are a quarter of the objects it holds:
// so objects are found by name a bounded number of times, and the objects nodes no longer have (the
// scheduler replaces a node's object on every update) stay referenced only until the next rebuild.
func (c *Nodes) link(n *Node, node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n.object = node
	c.unlinked++
	if c.unlinked <= len(*c.byObject.Load())/4+16 {
		return
	}
	nodes := *c.nodes.Load()
	byObject := make(map[*corev1.Node]*Node, len(nodes))
	for _, x := range nodes {
		if x.object != nil {
			byObject[x.object] = x
		}
	}
	c.byObject.Store(&byObject)
	c.unlinked = 0
}

// nodeLocked returns the state of node, adding it when missing.
func (c *Nodes) nodeLocked(name string) *Node {
	if n := c.Get(name); n != nil {
		return n
	}
	n := &Node{pods: map[types.UID]*AssignedPod{}, owner: c}
	next := maps.Clone(*c.nodes.Load())
	next[name] = n
	c.nodes.Store(&next)
	return n
}

// UpdateNodeMetric records nm as the node's NodeMetric.
func (c *Nodes) UpdateNodeMetric(nm *slov1alpha1.NodeMetric) {
	view := NewNodeMetricView(nm, c.resources)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodeLocked(nm.Name)
	n.view.Store(view)
	n.invalidateMemo()
}

// DeleteNodeMetric records that the node's NodeMetric nm is gone.
func (c *Nodes) DeleteNodeMetric(nm *slov1alpha1.NodeMetric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodeLocked(nm.Name)
	n.view.Store(nil)
	n.invalidateMemo()
}

// Assign records pod on node. When the pod is already recorded on that node, the later AssignedAt is kept
// (the bind time replaces the time Reserve assumed it, as in Koordinator) and everything else is replaced;
// when it is recorded on another node, it moves.
func (c *Nodes) Assign(node string, pod AssignedPod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodeLocked(node)
	if old, ok := c.podNode[pod.UID]; ok {
		if old == n {
			if prev := n.pods[pod.UID]; prev.AssignedAt.After(pod.AssignedAt) {
				pod.AssignedAt = prev.AssignedAt
			}
		} else {
			c.removeLocked(old, pod.UID)
		}
	}
	n.pods[pod.UID] = &pod
	n.generation.Store(c.lastGeneration.Add(1))
	n.invalidateMemo()
	c.podNode[pod.UID] = n
}

// Remove forgets the pod with uid, wherever it is recorded.
func (c *Nodes) Remove(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.podNode[uid]; ok {
		c.removeLocked(n, uid)
	}
}

// RemoveFrom forgets the pod with uid if it is recorded on node.
func (c *Nodes) RemoveFrom(node string, uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.podNode[uid]; ok && n == c.Get(node) {
		c.removeLocked(n, uid)
	}
}

func (c *Nodes) removeLocked(n *Node, uid types.UID) {
	delete(c.podNode, uid)
	delete(n.pods, uid)
	n.generation.Store(c.lastGeneration.Add(1))
	n.invalidateMemo()
}

// Len returns the number of pods recorded on node.
func (c *Nodes) Len(node string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.Get(node); n != nil {
		return len(n.pods)
	}
	return 0
}

// Memo returns the last value SetMemo stored, or nil.
func (n *Node) Memo() any { return n.memo.Load() }

// Invalidator is a memo that wants to know when the node's state changes.
type Invalidator interface {
	// Invalidate is called, once or more, after the node's NodeMetric or pods changed.
	Invalidate()
}

// SetMemo keeps v, something a user of the cache derived from the node's state (see Stamp), with the node.
// Every value stored for a node must have the same concrete type. When v is an Invalidator, every change of
// the node's state after SetMemo calls its Invalidate; a change between reading the state and SetMemo does
// not, so compare the node's Stamp before reading with the one after SetMemo.
func (n *Node) SetMemo(v any) { n.memo.Store(v) }

// invalidateMemo tells the node's memo that the node's state changed; the caller changed it first.
func (n *Node) invalidateMemo() {
	if m, ok := n.memo.Load().(Invalidator); ok {
		m.Invalidate()
	}
}

// View returns the view of the node's latest NodeMetric, or nil when it has none.
func (n *Node) View() *NodeMetricView {
	return n.Stamp().View()
}

// Stamp identifies a version of a node's state: its NodeMetric and its assigned pods. Two stamps of a node are
// equal only when neither changed in between, so a value derived from the state a stamp names stays valid
// while the node's stamp is equal to it.
type Stamp struct {
	view       *NodeMetricView
	generation uint64
}

// Stamp returns the current stamp of the node. Take it before reading the state it names: a change after it
// then yields another stamp.
func (n *Node) Stamp() Stamp {
	return Stamp{view: n.view.Load(), generation: n.generation.Load()}
}

// View returns the view of the NodeMetric the stamp names, or nil when the node had none.
func (s Stamp) View() *NodeMetricView { return s.view }

// assignedMemo is a result of AssignedUsage or ProdUsage, valid while the node's pods and NodeMetric stay the
// same: whether a pod is estimated depends on them only (its deadline is compared with the NodeMetric's update
// time, not with the clock).
type assignedMemo struct {
	generation uint64
	view       *NodeMetricView
	usage      quantity.Vector
	// latest is usage plus the view's node usage (for all pods only).
	latest quantity.Vector
}

// LatestUsage returns the node usage its NodeMetric view reports plus AssignedUsage. The returned vector must
// not be modified.
func (n *Node) LatestUsage(view *NodeMetricView) quantity.Vector {
	return n.usageMemo(view, false).latest
}

// AssignedUsage returns what the pods assigned to the node add to the usage its NodeMetric view reports. An
// assigned pod counts as max(0, estimate - reported usage of the pod) when the NodeMetric does not report it,
// when it was assigned after the NodeMetric's update time or less than a report interval before it, or when
// its estimation deadline is after the update time; otherwise its usage is in the report already.
//
// The result is memoized: Filter and Score ask for it for every node in every cycle, and it changes only with
// the node's pods or its NodeMetric. The returned vector must not be modified.
func (n *Node) AssignedUsage(view *NodeMetricView) quantity.Vector {
	return n.usageMemo(view, false).usage
}

// ProdUsage returns the usage of the node's koord-prod pods, as Koordinator counts it: the reported usage of
// each pod assigned to the node whose pod object is koord-prod and that the NodeMetric reports as koord-prod,
// plus what AssignedUsage would add for it; and the whole estimate of a koord-prod pod the NodeMetric does not
// report as koord-prod. Pods the NodeMetric reports that the scheduler does not know (deleted since, or
// leaked) count for nothing. The returned vector must not be modified.
func (n *Node) ProdUsage(view *NodeMetricView) quantity.Vector {
	return n.usageMemo(view, true).usage
}

func (n *Node) usageMemo(view *NodeMetricView, prod bool) *assignedMemo {
	slot := &n.memos[0]
	if prod {
		slot = &n.memos[1]
	}
	generation := n.generation.Load()
	if m := slot.Load(); m != nil && m.generation == generation && m.view == view {
		return m
	}
	m := &assignedMemo{view: view, usage: make(quantity.Vector, len(n.owner.resources))}
	n.owner.mu.Lock()
	m.generation = n.generation.Load()
	for _, a := range n.pods {
		if prod && !a.Prod {
			continue
		}
		reported, isReported := view.Pods[a.Key]
		if prod && isReported && !reported.Prod {
			// The pod object and the report disagree: its whole estimate counts.
			isReported = false
		}
		if prod && isReported {
			m.usage.Add(reported.Usage)
		}
		if isReported && !mustEstimate(a, view) {
			continue
		}
		for i, est := range a.Estimate {
			if isReported {
				est -= reported.Usage[i]
			}
			if est > 0 {
				m.usage[i] += est
			}
		}
	}
	n.owner.mu.Unlock()
	if !prod {
		m.latest = make(quantity.Vector, len(m.usage))
		copy(m.latest, m.usage)
		if view.NodeUsage != nil {
			m.latest.Add(view.NodeUsage)
		}
	}
	slot.Store(m)
	return m
}

// mustEstimate reports whether the usage the NodeMetric view reports for an assigned pod may miss part of it,
// as Koordinator decides: the pod was assigned after the report or less than a report interval before it, or
// its estimation deadline (AssignedPod.Deadline) is after the report.
func mustEstimate(a *AssignedPod, view *NodeMetricView) bool {
	if !a.AssignedAt.Before(view.UpdateTime) || view.UpdateTime.Sub(a.AssignedAt) < view.ReportInterval {
		return true
	}
	deadline := a.Deadline()
	return !deadline.IsZero() && deadline.After(view.UpdateTime)
}
