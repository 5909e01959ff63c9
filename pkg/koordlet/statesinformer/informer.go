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

package statesinformer

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	sloinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions/slo/v1alpha1"
)

// Kind names what changed in a notification from Subscribe.
type Kind string

const (
	// KindNode is the node object.
	KindNode Kind = "node"
	// KindPods is the set of pods bound to the node, or any of them.
	KindPods Kind = "pods"
	// KindNodeSLO is the node's NodeSLO.
	KindNodeSLO Kind = "nodeSLO"
	// KindNodeMetric is the node's NodeMetric.
	KindNodeMetric Kind = "nodeMetric"
)

// informerCount is the number of informers Run starts: Node, Pods, NodeSLO, NodeMetric.
const informerCount = 4

// Option configures an Informer.
type Option func(*Informer)

// WithResyncPeriod makes the informers resync their caches every d (no resync by default: the agent reads the
// state on its own schedule and needs no periodic replay).
func WithResyncPeriod(d time.Duration) Option {
	return func(s *Informer) { s.resync = d }
}

// Informer watches the apiserver for the state of one node. Create it with New and start it with Run.
type Informer struct {
	kube     kubernetes.Interface
	koord    versioned.Interface
	nodeName string
	resync   time.Duration

	mu          sync.RWMutex
	started     bool
	synced      []cache.InformerSynced
	node        *corev1.Node
	pods        map[string]*corev1.Pod // by namespace/name
	activePods  []*corev1.Pod          // the pods not terminated, by namespace/name
	nodeSLO     *slov1alpha1.NodeSLO
	nodeMetric  *slov1alpha1.NodeMetric
	subscribers map[Kind][]chan struct{}
}

// New returns an Informer of the node nodeName that reads through kube and koord. It does nothing until Run.
func New(kube kubernetes.Interface, koord versioned.Interface, nodeName string, opts ...Option) *Informer {
	s := &Informer{
		kube:        kube,
		koord:       koord,
		nodeName:    nodeName,
		pods:        make(map[string]*corev1.Pod),
		subscribers: make(map[Kind][]chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Run starts the informers of the Node (metadata.name=<node>), its pods (spec.nodeName=<node>), its NodeSLO and
// its NodeMetric (metadata.name=<node>), and blocks until ctx is done and they have stopped. Call it once, in a
// goroutine, and wait for HasSynced (or WaitForCacheSync) before reading. A second call returns at once.
func (s *Informer) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("node", s.nodeName)
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		logger.Info("Ignored a second start of the states informer")
		return
	}
	s.started = true
	s.mu.Unlock()

	byName := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.nodeName).String()
	}
	byNodeName := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", s.nodeName).String()
	}
	nodes := coreinformers.NewTypedFilteredNodeInformer(s.kube, s.resync, nil, byName)
	pods := coreinformers.NewTypedFilteredPodInformer(s.kube, metav1.NamespaceAll, s.resync, nil, byNodeName)
	slos := sloinformers.NewTypedFilteredNodeSLOInformer(s.koord, s.resync, nil, byName)
	metrics := sloinformers.NewTypedFilteredNodeMetricInformer(s.koord, s.resync, nil, byName)

	opts := cache.HandlerOptions{Logger: &logger}
	var regs []cache.ResourceEventHandlerRegistration
	var informers []cache.SharedIndexInformer
	add := func(inf cache.SharedIndexInformer, reg cache.ResourceEventHandlerRegistration, err error) {
		if err != nil {
			// Only a stopped informer refuses a handler, and these have not started.
			logger.Error(err, "Could not add an event handler")
			return
		}
		if err := inf.SetTransform(stripManagedFields); err != nil {
			logger.Error(err, "Could not set the informer transform")
		}
		regs = append(regs, reg)
		informers = append(informers, inf)
	}
	reg, err := nodes.AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Node]{
		AddFunc:    func(n *corev1.Node) { s.setNode(logger, n) },
		UpdateFunc: func(_, n *corev1.Node) { s.setNode(logger, n) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.Node]) { s.deleteNode(logger, d.GetName()) },
	}, opts)
	add(nodes, reg, err)
	reg, err = pods.AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod) { s.setPod(logger, p) },
		UpdateFunc: func(_, p *corev1.Pod) { s.setPod(logger, p) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) { s.deletePod(logger, d.GetKey()) },
	}, opts)
	add(pods, reg, err)
	reg, err = slos.AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*slov1alpha1.NodeSLO]{
		AddFunc:    func(o *slov1alpha1.NodeSLO) { s.setNodeSLO(logger, o) },
		UpdateFunc: func(_, o *slov1alpha1.NodeSLO) { s.setNodeSLO(logger, o) },
		DeleteFunc: func(d cache.DeletedObject[*slov1alpha1.NodeSLO]) { s.deleteNodeSLO(logger, d.GetName()) },
	}, opts)
	add(slos, reg, err)
	reg, err = metrics.AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*slov1alpha1.NodeMetric]{
		AddFunc:    func(o *slov1alpha1.NodeMetric) { s.setNodeMetric(logger, o) },
		UpdateFunc: func(_, o *slov1alpha1.NodeMetric) { s.setNodeMetric(logger, o) },
		DeleteFunc: func(d cache.DeletedObject[*slov1alpha1.NodeMetric]) { s.deleteNodeMetric(logger, d.GetName()) },
	}, opts)
	add(metrics, reg, err)

	synced := make([]cache.InformerSynced, 0, len(regs))
	for _, r := range regs {
		synced = append(synced, r.HasSynced)
	}
	s.mu.Lock()
	s.synced = synced
	s.mu.Unlock()

	logger.V(2).Info("Started the states informer")
	var wg sync.WaitGroup
	for _, inf := range informers {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	wg.Wait()
	logger.V(2).Info("Stopped the states informer")
}

// HasSynced reports whether every informer has delivered its initial list to the Informer. It is false before
// Run.
func (s *Informer) HasSynced() bool {
	s.mu.RLock()
	synced := s.synced
	s.mu.RUnlock()
	if len(synced) != informerCount {
		return false
	}
	for _, f := range synced {
		if !f() {
			return false
		}
	}
	return true
}

// WaitForCacheSync blocks until HasSynced or ctx is done, and reports whether the informer synced.
func (s *Informer) WaitForCacheSync(ctx context.Context) bool {
	return cache.WaitForNamedCacheSyncWithContext(ctx, s.HasSynced)
}

// Node returns the node, or nil until it has been seen. After a deletion the last one seen is kept.
func (s *Informer) Node() *corev1.Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.node
}

// Pods returns the pods bound to the node that have not terminated (phase neither Succeeded nor Failed), sorted
// by namespace and name. The slice is the caller's; the pods are not.
func (s *Informer) Pods() []*corev1.Pod {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.activePods)
}

// NodeSLO returns the node's NodeSLO, or nil until one has been seen. The last one seen is kept when the
// apiserver is unreachable and when the NodeSLO is deleted.
func (s *Informer) NodeSLO() *slov1alpha1.NodeSLO {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nodeSLO
}

// HostApplications returns the host applications of the node's NodeSLO (spec.hostApplications), nil until a
// NodeSLO has been seen. The slice is shared and must not be modified.
func (s *Informer) HostApplications() []slov1alpha1.HostApplicationSpec {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.nodeSLO == nil {
		return nil
	}
	return s.nodeSLO.Spec.HostApplications
}

// NodeMetric returns the node's NodeMetric, or nil when there is none (koord-manager creates it).
func (s *Informer) NodeMetric() *slov1alpha1.NodeMetric {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nodeMetric
}

// Subscribe returns a channel that receives a value after the state of kind changes. Notifications coalesce: the
// channel has a buffer of one, so a slow reader sees one pending notification for any number of changes and
// should then read the current state. Kinds other than KindNode, KindPods, KindNodeSLO and KindNodeMetric are
// never notified.
func (s *Informer) Subscribe(kind Kind) <-chan struct{} {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subscribers[kind] = append(s.subscribers[kind], ch)
	return ch
}

// notify wakes the subscribers of kind; s.mu must be held.
func (s *Informer) notify(kind Kind) {
	for _, ch := range s.subscribers[kind] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// setNode records an added or updated node.
func (s *Informer) setNode(logger klog.Logger, n *corev1.Node) {
	if n.Name != s.nodeName {
		logger.V(4).Info("Ignored another node", "otherNode", n.Name)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sameVersion(s.node, n) {
		return
	}
	s.node = n
	s.notify(KindNode)
}

// deleteNode keeps the last node seen when it is deleted.
func (s *Informer) deleteNode(logger klog.Logger, name string) {
	if name != s.nodeName {
		return
	}
	logger.Info("Node was deleted, keeping the last one seen")
}

// setPod records an added or updated pod.
func (s *Informer) setPod(logger klog.Logger, p *corev1.Pod) {
	key := cache.ObjectName{Namespace: p.Namespace, Name: p.Name}.String()
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Spec.NodeName != s.nodeName {
		logger.V(4).Info("Ignored a pod of another node", "pod", klog.KObj(p), "otherNode", p.Spec.NodeName)
		if _, ok := s.pods[key]; ok {
			delete(s.pods, key)
			s.rebuildPods()
		}
		return
	}
	if sameVersion(s.pods[key], p) {
		return
	}
	s.pods[key] = p
	s.rebuildPods()
	logger.V(4).Info("Updated a pod", "pod", klog.KObj(p), "phase", p.Status.Phase)
}

// deletePod forgets a deleted pod.
func (s *Informer) deletePod(logger klog.Logger, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pods[key]; !ok {
		return
	}
	delete(s.pods, key)
	s.rebuildPods()
	logger.V(4).Info("Deleted a pod", "pod", key)
}

// rebuildPods recomputes activePods and notifies; s.mu must be held.
func (s *Informer) rebuildPods() {
	active := make([]*corev1.Pod, 0, len(s.pods))
	for _, p := range s.pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			active = append(active, p)
		}
	}
	slices.SortFunc(active, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	s.activePods = active
	s.notify(KindPods)
}

// setNodeSLO records an added or updated NodeSLO.
func (s *Informer) setNodeSLO(logger klog.Logger, o *slov1alpha1.NodeSLO) {
	if o.Name != s.nodeName {
		logger.V(4).Info("Ignored the NodeSLO of another node", "otherNode", o.Name)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sameVersion(s.nodeSLO, o) {
		return
	}
	s.nodeSLO = o
	s.notify(KindNodeSLO)
	logger.V(2).Info("Updated the NodeSLO", "resourceVersion", o.ResourceVersion)
}

// deleteNodeSLO keeps the last NodeSLO seen when it is deleted.
func (s *Informer) deleteNodeSLO(logger klog.Logger, name string) {
	if name != s.nodeName {
		return
	}
	s.mu.RLock()
	kept := s.nodeSLO != nil
	s.mu.RUnlock()
	logger.Info("NodeSLO was deleted, keeping the last one seen", "kept", kept)
}

// setNodeMetric records an added or updated NodeMetric.
func (s *Informer) setNodeMetric(logger klog.Logger, o *slov1alpha1.NodeMetric) {
	if o.Name != s.nodeName {
		logger.V(4).Info("Ignored the NodeMetric of another node", "otherNode", o.Name)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sameVersion(s.nodeMetric, o) {
		return
	}
	s.nodeMetric = o
	s.notify(KindNodeMetric)
}

// deleteNodeMetric forgets a deleted NodeMetric.
func (s *Informer) deleteNodeMetric(logger klog.Logger, name string) {
	if name != s.nodeName {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodeMetric == nil {
		return
	}
	s.nodeMetric = nil
	s.notify(KindNodeMetric)
	logger.Info("NodeMetric was deleted")
}

// sameVersion reports whether cur is already the revision next is: both set and with one non-empty resource
// version. Informer resyncs replay unchanged objects; they must not wake subscribers.
func sameVersion[T metav1.Object](cur, next T) bool {
	var zero T
	if any(cur) == any(zero) {
		return false
	}
	rv := cur.GetResourceVersion()
	return rv != "" && rv == next.GetResourceVersion()
}

// stripManagedFields drops the managed fields of cached objects, which the agent never reads, to save memory.
func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}
