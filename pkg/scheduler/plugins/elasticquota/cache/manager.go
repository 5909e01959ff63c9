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
	"reflect"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Options configures a Manager.
type Options struct {
	// DefaultQuotaMax and SystemQuotaMax are the max of the default and system quotas until an ElasticQuota
	// object of that name gives another.
	DefaultQuotaMax, SystemQuotaMax corev1.ResourceList
	// EnableMinQuotaScale scales children's min down proportionally when they add up to more than their
	// parent has.
	EnableMinQuotaScale bool
	// EnableRuntimeQuota makes the runtime quota the limit of admission and revocation; when false, max is.
	EnableRuntimeQuota bool
	// CountTerminatingPods keeps pods that are being deleted in their quota until they are gone, as
	// Koordinator does by default; off, they leave their quota when their deletion starts (see leaving).
	CountTerminatingPods bool
	// MultiQuotaTree (Koordinator's gate of that name) makes each tree ID a quota tree of its own: the
	// top-level quotas of a tree share its root quota's total-resource annotation, and the quotas without a
	// tree share the cluster's resources less the trees' totals (except those of roots labelled
	// ignore-default-tree). Off, tree IDs are ignored and every quota shares the cluster.
	MultiQuotaTree bool
}

// Manager holds the quotas, the pods charged to them and the cluster's resources, and computes runtime
// quotas. It is safe for concurrent use. Runtime quotas are recomputed on the first read after an input
// changed: a quota, a pod's request, a node's allocatable, or what the system and default quotas use.
type Manager struct {
	opts Options

	mu sync.Mutex
	// quotas are all quotas by name, the built-in system and default quotas included.
	quotas map[string]*node
	// top are the quotas whose parent is the root quota, sorted by name; the tree hangs from them.
	top []*node
	// byNamespace maps a namespace to the quota whose namespaces annotation lists it.
	byNamespace map[string]string
	// nodes are the allocatable resources of each node; total is their sum.
	nodes map[string]quantity.Amounts
	total quantity.Amounts
	pods  map[types.UID]*podEntry
	// dirty is set when an input of the runtime quotas changed since they were computed.
	dirty bool
	// scratch holds buffers refresh reuses.
	scratch struct {
		total     quantity.Amounts
		resources []corev1.ResourceName
		shares    []share
	}
}

// node is a quota in the manager.
type node struct {
	*Quota
	// parent is nil for top-level quotas, built-in quotas and quotas outside the tree.
	parent   *node
	children []*node
	// inTree is false for quotas whose parent chain does not reach the root quota.
	inTree bool
	// pods are the pods charged to this quota.
	pods sets.Set[types.UID]
	// ownRequest is the sum of the requests of the quota's pods, ownUsed and ownNonPreemptibleUsed those of
	// its assigned pods (all, and the non-preemptible ones).
	ownRequest, ownUsed, ownNonPreemptibleUsed quantity.Amounts
	// used and nonPreemptibleUsed add the quota's descendants' to its own.
	used, nonPreemptibleUsed quantity.Amounts
	// request is ownRequest plus the children's requests capped by their max; runtime is the quota's share.
	// Both are computed by refresh.
	request, runtime quantity.Amounts
}

// podEntry is a pod charged to a quota.
type podEntry struct {
	pod     *corev1.Pod
	quota   string
	request quantity.Amounts
	// bound is set when the pod object names a node, reserved between the plugin's Reserve and Unreserve.
	bound, reserved bool
	nonPreemptible  bool
	// missing is set by a ForgetMissing round that did not find the pod among the live ones.
	missing bool
}

func (e *podEntry) assigned() bool { return e.bound || e.reserved }

// NewManager returns a Manager with the built-in system and default quotas.
func NewManager(opts Options) *Manager {
	m := &Manager{
		opts:        opts,
		quotas:      map[string]*node{},
		byNamespace: map[string]string{},
		nodes:       map[string]quantity.Amounts{},
		total:       quantity.Amounts{},
		pods:        map[types.UID]*podEntry{},
		dirty:       true,
	}
	m.quotas[extension.SystemQuotaName] = newNode(builtinQuota(extension.SystemQuotaName, opts.SystemQuotaMax))
	m.quotas[extension.DefaultQuotaName] = newNode(builtinQuota(extension.DefaultQuotaName, opts.DefaultQuotaMax))
	m.rebuild()
	return m
}

func builtinQuota(name string, maxList corev1.ResourceList) *Quota {
	return &Quota{Name: name, Parent: extension.RootQuotaName, AllowLentResource: true, Min: quantity.Amounts{}, Max: quantity.FromList(maxList), Guaranteed: quantity.Amounts{}, SharedWeight: quantity.FromList(maxList)}
}

func newNode(q *Quota) *node {
	return &node{Quota: q, pods: sets.New[types.UID](), ownRequest: quantity.Amounts{}, ownUsed: quantity.Amounts{}, ownNonPreemptibleUsed: quantity.Amounts{}}
}

// isBuiltin reports whether name is the system or the default quota, which live outside the tree with their
// max as runtime.
func isBuiltin(name string) bool {
	return name == extension.SystemQuotaName || name == extension.DefaultQuotaName
}

// UpdateQuota adds or updates the quota of eq. The root quota's object is ignored: the root's resources are
// the cluster's. When the object does not parse, the quota keeps its last good configuration and the error
// says what is wrong.
func (m *Manager) UpdateQuota(eq *schedv1alpha1.ElasticQuota) error {
	if eq.Name == extension.RootQuotaName {
		return nil
	}
	q, err := QuotaFromObject(eq)
	if err != nil {
		return err
	}
	if isBuiltin(q.Name) {
		// The built-in quotas stay outside the tree, whatever their labels say.
		q.Parent, q.IsParent = extension.RootQuotaName, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.quotas[q.Name]; ok {
		if reflect.DeepEqual(n.Quota, q) {
			// Only the status or the annotations the plugin writes changed: nothing to recompute.
			return nil
		}
		n.Quota = q
	} else {
		m.quotas[q.Name] = newNode(q)
	}
	m.rebuild()
	return nil
}

// DeleteQuota forgets the quota named name; its pods move to the quota they now resolve to. The built-in
// quotas go back to their defaults.
func (m *Manager) DeleteQuota(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.quotas[name]
	if !ok {
		return
	}
	switch name {
	case extension.SystemQuotaName:
		n.Quota = builtinQuota(name, m.opts.SystemQuotaMax)
	case extension.DefaultQuotaName:
		n.Quota = builtinQuota(name, m.opts.DefaultQuotaMax)
	default:
		delete(m.quotas, name)
	}
	m.rebuild()
}

// rebuild recomputes the tree, the namespace index, the pods' quotas and the used resources of every quota
// after a quota changed.
func (m *Manager) rebuild() {
	m.byNamespace = map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(m.quotas)) {
		n := m.quotas[name]
		n.parent, n.children, n.inTree = nil, nil, false
		for _, ns := range n.Namespaces {
			if _, taken := m.byNamespace[ns]; !taken {
				m.byNamespace[ns] = name
			}
		}
	}
	m.top = m.top[:0]
	for _, name := range slices.Sorted(maps.Keys(m.quotas)) {
		n := m.quotas[name]
		if isBuiltin(name) {
			continue
		}
		if n.Parent == extension.RootQuotaName {
			m.top = append(m.top, n)
			continue
		}
		if p, ok := m.quotas[n.Parent]; ok && !isBuiltin(p.Name) {
			n.parent = p
			p.children = append(p.children, n)
		}
	}
	var mark func(n *node)
	mark = func(n *node) {
		n.inTree = true
		for _, c := range n.children {
			mark(c)
		}
	}
	for _, n := range m.top {
		mark(n)
	}
	// Quotas outside the tree (a missing parent, or a cycle) are cut off, so that walks up always end.
	for _, n := range m.quotas {
		if !n.inTree && n.parent != nil {
			n.parent = nil
		}
	}
	for _, e := range m.pods {
		if q := m.resolve(e.pod); q != e.quota {
			if old, ok := m.quotas[e.quota]; ok {
				old.pods.Delete(e.pod.UID)
			}
			e.quota = q
			m.quotas[q].pods.Insert(e.pod.UID)
		}
	}
	m.recount()
	m.dirty = true
}

// recount recomputes every quota's own and aggregated requests and used resources from its pods.
func (m *Manager) recount() {
	for _, n := range m.quotas {
		n.ownRequest, n.ownUsed, n.ownNonPreemptibleUsed = quantity.Amounts{}, quantity.Amounts{}, quantity.Amounts{}
	}
	for _, e := range m.pods {
		n := m.quotas[e.quota]
		n.ownRequest.Add(e.request)
		if e.assigned() {
			n.ownUsed.Add(e.request)
			if e.nonPreemptible {
				n.ownNonPreemptibleUsed.Add(e.request)
			}
		}
	}
	for _, n := range m.quotas {
		n.used, n.nonPreemptibleUsed = n.ownUsed.Clone(), n.ownNonPreemptibleUsed.Clone()
	}
	for _, n := range m.quotas {
		for p := n.parent; p != nil; p = p.parent {
			p.used.Add(n.ownUsed)
			p.nonPreemptibleUsed.Add(n.ownNonPreemptibleUsed)
		}
	}
}

// QuotaOf returns the quota pod is charged to: the quota its quota.scheduling.koordinator.sh/name label
// names, when it exists; else the quota named like the pod's namespace, in that namespace; else the quota
// whose namespaces annotation lists the namespace; else the default quota.
func (m *Manager) QuotaOf(pod *corev1.Pod) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.resolve(pod)
}

func (m *Manager) resolve(pod *corev1.Pod) string {
	if name := extension.GetQuotaName(pod); name != "" {
		if _, ok := m.quotas[name]; ok {
			return name
		}
		return extension.DefaultQuotaName
	}
	if n, ok := m.quotas[pod.Namespace]; ok && n.Namespace == pod.Namespace {
		return n.Name
	}
	if name, ok := m.byNamespace[pod.Namespace]; ok {
		return name
	}
	return extension.DefaultQuotaName
}

// PodRequest returns the resources pod requests, as quotas count them.
func PodRequest(pod *corev1.Pod) quantity.Amounts {
	return quantity.FromList(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
}

// UpdatePod records pod, added or updated: it counts in its quota's request, and in its used once it is
// assigned to a node. Pods that have terminated or are being deleted are forgotten (see leaving).
func (m *Manager) UpdatePod(pod *corev1.Pod) {
	if m.leaving(pod) {
		m.DeletePod(pod.UID)
		return
	}
	request := PodRequest(pod)
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &podEntry{pod: pod, quota: m.resolve(pod), request: request, bound: pod.Spec.NodeName != "", nonPreemptible: extension.IsPodNonPreemptible(pod)}
	old, ok := m.pods[pod.UID]
	if !ok {
		m.charge(e)
		return
	}
	e.reserved = old.reserved && !e.bound
	if old.quota != e.quota || old.nonPreemptible != e.nonPreemptible || !old.request.Equal(e.request) {
		m.uncharge(old)
		m.charge(e)
		return
	}
	// Only the pod object or its assignment changed: the request stays, and so do the runtime quotas.
	m.pods[pod.UID] = e
	if old.assigned() != e.assigned() {
		m.applyUsed(m.quotas[e.quota], e, e.assigned())
	}
}

// EnsurePod records pod, pending, unless the manager knows it already: the scheduler may try a pod before
// the manager's own pod handler has seen it, and the pod's request must count in its quota's runtime quota.
func (m *Manager) EnsurePod(pod *corev1.Pod) {
	if m.leaving(pod) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.pods[pod.UID]; ok {
		return
	}
	m.charge(&podEntry{pod: pod, quota: m.resolve(pod), request: PodRequest(pod), bound: pod.Spec.NodeName != "", nonPreemptible: extension.IsPodNonPreemptible(pod)})
}

// leaving reports whether pod has ended or, unless CountTerminatingPods, is being deleted. By default a pod
// being deleted no longer counts in its quota: its node is stopping it, and counting it until the kubelet
// confirms would make a preemptor that waits for its victims preempt again, and the revoke controller evict
// more than the quota's over-use.
func (m *Manager) leaving(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return true
	}
	return pod.DeletionTimestamp != nil && !m.opts.CountTerminatingPods
}

// DeletePod forgets the pod with uid.
func (m *Manager) DeletePod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.pods[uid]; ok {
		m.uncharge(old)
	}
}

// ForgottenPod is a pod ForgetMissing forgot.
type ForgottenPod struct {
	// Pod is the pod as the manager last had it, Quota the quota it was charged to.
	Pod   *corev1.Pod
	Quota string
	// Assigned tells whether it counted in the quota's used (bound or reserved).
	Assigned bool
}

// ForgetMissing forgets the pods the manager charges that live denied in this call and in the one before, and
// returns them. live tells whether the scheduler's pod informer has the pod (same UID): a pod it no longer has
// was deleted or has ended, and its deletion should have reached DeletePod already; one the manager still
// charged would keep its quota's request and used too high for good. Two calls in a row give an event or a
// binding cycle under way one period to settle. The plugin calls it periodically; live is called with the
// manager locked.
func (m *Manager) ForgetMissing(live func(*corev1.Pod) bool) []ForgottenPod {
	m.mu.Lock()
	defer m.mu.Unlock()
	var forgotten []ForgottenPod
	for _, e := range m.pods {
		if live(e.pod) {
			e.missing = false
			continue
		}
		if !e.missing {
			e.missing = true
			continue
		}
		forgotten = append(forgotten, ForgottenPod{Pod: e.pod, Quota: e.quota, Assigned: e.assigned()})
		m.uncharge(e)
	}
	return forgotten
}

// Reserve counts pod as assigned, from the plugin's Reserve until the pod object says it is bound or
// Unreserve undoes it.
func (m *Manager) Reserve(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.pods[pod.UID]
	if !ok {
		m.charge(&podEntry{pod: pod, quota: m.resolve(pod), request: PodRequest(pod), reserved: true, nonPreemptible: extension.IsPodNonPreemptible(pod)})
		return
	}
	if e.assigned() {
		return
	}
	e.reserved = true
	m.applyUsed(m.quotas[e.quota], e, true)
}

// Unreserve undoes Reserve.
func (m *Manager) Unreserve(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.pods[pod.UID]
	if !ok || !e.reserved {
		return
	}
	e.reserved = false
	if !e.bound {
		m.applyUsed(m.quotas[e.quota], e, false)
	}
}

// charge records e and adds it to its quota and the quota's ancestors.
func (m *Manager) charge(e *podEntry) {
	m.pods[e.pod.UID] = e
	n := m.quotas[e.quota]
	n.pods.Insert(e.pod.UID)
	if !e.request.IsZero() {
		n.ownRequest.Add(e.request)
		m.dirty = true
	}
	if e.assigned() {
		m.applyUsed(n, e, true)
	}
}

// uncharge removes e.
func (m *Manager) uncharge(e *podEntry) {
	delete(m.pods, e.pod.UID)
	n := m.quotas[e.quota]
	n.pods.Delete(e.pod.UID)
	if !e.request.IsZero() {
		n.ownRequest.Sub(e.request)
		m.dirty = true
	}
	if e.assigned() {
		m.applyUsed(n, e, false)
	}
}

// applyUsed adds e's request to the used resources of n and its ancestors, or subtracts it.
func (m *Manager) applyUsed(n *node, e *podEntry, add bool) {
	op := quantity.Amounts.Add
	if !add {
		op = quantity.Amounts.Sub
	}
	op(n.ownUsed, e.request)
	if e.nonPreemptible {
		op(n.ownNonPreemptibleUsed, e.request)
	}
	for p := n; p != nil; p = p.parent {
		op(p.used, e.request)
		if e.nonPreemptible {
			op(p.nonPreemptibleUsed, e.request)
		}
	}
	// What the system and default quotas use comes off the cluster's total.
	if isBuiltin(n.Name) && !e.request.IsZero() {
		m.dirty = true
	}
}

// SetNode records the allocatable resources of a node, added or updated.
func (m *Manager) SetNode(name string, allocatable corev1.ResourceList) {
	v := quantity.FromList(allocatable)
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.nodes[name]; ok {
		if old.Equal(v) {
			return
		}
		m.total.Sub(old)
	}
	m.nodes[name] = v
	m.total.Add(v)
	m.dirty = true
}

// DeleteNode forgets a node.
func (m *Manager) DeleteNode(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.nodes[name]; ok {
		m.total.Sub(old)
		delete(m.nodes, name)
		m.dirty = true
	}
}
