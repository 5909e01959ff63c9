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

// Package noderesource is the controller that writes each node's batch and mid resources
// (kubernetes.io/batch-cpu, batch-memory, mid-cpu, mid-memory) into its status capacity and allocatable,
// together with the annotation koord.dev/colocation-resources that explains them. The numbers come from
// package calculator; this package reads the inputs, throttles the writes and keeps the metrics.
//
// It keeps no state of its own: the time of the last write is part of the annotation, so a restarted manager
// behaves exactly like the one before it, and inputs that did not change cause no write.
package noderesource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/manager/controller/noderesource/calculator"
)

// Name is the controller's name, as selected by --controllers.
const Name = "noderesource"

// PodNodeNameIndex is the field index on pods by spec.nodeName that Setup registers in the manager's cache. It
// has its own name so that it cannot clash with an index another controller registers.
const PodNodeNameIndex = "noderesource.spec.nodeName"

// updateExplanationOutdated is the update reason when the node's values are not the ones its explanation
// records, e.g. after a write that was interrupted between the annotation and the status.
const updateExplanationOutdated calculator.UpdateReason = "ExplanationOutdated"

// Options configure the controller.
type Options struct {
	// StrategyForNode returns the colocation strategy of a node: the cluster strategy of colocation-config merged
	// with the first node strategy that selects the node and with the node's overrides. Required.
	StrategyForNode func(*corev1.Node) configuration.ColocationStrategy
	// ConfigUpdates, when set, delivers an event whenever the colocation configuration changes; every node is
	// then recalculated.
	ConfigUpdates <-chan event.GenericEvent
	// Clock is the time source; the real clock when nil.
	Clock clock.Clock
	// ConfigSynced, when set, reports whether StrategyForNode already reflects the colocation configuration.
	// Until it does, nodes are left alone, so that a restarted manager never writes the results of the default
	// strategy over the nodes; ConfigUpdates then delivers the first configuration and every node is
	// recalculated.
	ConfigSynced func() bool
	// Metrics records the calculations; private, unregistered ones when nil.
	Metrics *Metrics
	// UnreportedPodsUsageOnly is calculator.Input's: count a high-priority pod without a metric as Koordinator
	// does, out of the maxUsageRequest policy's sum.
	UnreportedPodsUsageOnly bool
}

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=slo.koordinator.sh,resources=nodemetrics,verbs=get;list;watch

// Reconciler computes and writes the batch and mid resources of one node per request (the request's name is the
// node's).
type Reconciler struct {
	client          client.Client
	strategyForNode func(*corev1.Node) configuration.ColocationStrategy
	configSynced    func() bool
	clock           clock.Clock
	metrics         *Metrics
	// unreportedPodsUsageOnly is Options.UnreportedPodsUsageOnly.
	unreportedPodsUsageOnly bool

	// writesMu guards writes: the resources the reconciler last wrote to each node, until its cache shows them.
	writesMu sync.Mutex
	writes   map[string]ownWrite
}

// How long a reconcile waits for the informer cache to show the reconciler's own last write to a node: a
// reconcile that ran on the node as it was before the write would write it a second time (the cache lags the
// write by the watch's latency; a soak of 100 nodes saw it in one write of 500). After cacheLagTolerance it goes
// on regardless, so that another writer of the node's resources cannot hold it.
const (
	cacheLagRequeue   = 200 * time.Millisecond
	cacheLagTolerance = 5 * time.Second
)

// ownWrite is what the reconciler last wrote to a node's status, and when.
type ownWrite struct {
	resources corev1.ResourceList
	at        time.Time
}

// shownBy reports whether node's allocatable has the written resources: present with the same quantities, or
// absent when the write removed them.
func (w ownWrite) shownBy(node *corev1.Node) bool {
	for _, name := range calculator.ResourceNames {
		want, written := w.resources[name]
		got, ok := node.Status.Allocatable[name]
		if ok != written || ok && got.Cmp(want) != 0 {
			return false
		}
	}
	return true
}

// awaitingCache reports whether node, as the cache has it, does not show the reconciler's last write to it yet
// and the write is recent; a write the cache shows, or an old one, is forgotten.
func (r *Reconciler) awaitingCache(node *corev1.Node, now time.Time) bool {
	r.writesMu.Lock()
	defer r.writesMu.Unlock()
	w, ok := r.writes[node.Name]
	if !ok {
		return false
	}
	if !w.shownBy(node) && now.Sub(w.at) < cacheLagTolerance {
		return true
	}
	delete(r.writes, node.Name)
	return false
}

// recordWrite remembers the resources written to the node name at now; nil forgets the node.
func (r *Reconciler) recordWrite(name string, resources corev1.ResourceList, now time.Time) {
	r.writesMu.Lock()
	defer r.writesMu.Unlock()
	if resources == nil {
		delete(r.writes, name)
		return
	}
	if r.writes == nil {
		r.writes = map[string]ownWrite{}
	}
	r.writes[name] = ownWrite{resources: resources, at: now}
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler that reads and writes through c. The client must be able to list pods by
// PodNodeNameIndex.
func NewReconciler(c client.Client, opts Options) (*Reconciler, error) {
	if opts.StrategyForNode == nil {
		return nil, errors.New("noderesource: Options.StrategyForNode is required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	return &Reconciler{client: c, strategyForNode: opts.StrategyForNode, configSynced: opts.ConfigSynced, clock: opts.Clock,
		metrics: opts.Metrics, unreportedPodsUsageOnly: opts.UnreportedPodsUsageOnly}, nil
}

// Setup registers the pod index and the controller with mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	r, err := NewReconciler(mgr.GetClient(), opts)
	if err != nil {
		return err
	}
	// IndexField only uses the context to look up the pod informer, which does not block before the manager
	// starts; Setup has no context of its own.
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, PodNodeNameIndex, podNodeName); err != nil {
		return fmt.Errorf("index pods by spec.nodeName: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&corev1.Node{}, builder.WithPredicates(nodeChanged())).
		Watches(&slov1alpha1.NodeMetric{}, handler.EnqueueRequestsFromMapFunc(sameName), builder.WithPredicates(nodeMetricChanged())).
		Watches(&corev1.Pod{}, podEventHandler())
	if opts.ConfigUpdates != nil {
		b = b.WatchesRawSource(source.Channel(opts.ConfigUpdates, handler.EnqueueRequestsFromMapFunc(r.allNodes)))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("build the %s controller: %w", Name, err)
	}
	return nil
}

// Reconcile computes the node's batch and mid resources and writes them when NeedUpdate says so. It requeues
// for when the NodeMetric turns stale and for when a throttled difference becomes due, so that both happen
// without any event.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if r.configSynced != nil && !r.configSynced() {
		log.V(4).Info("Waiting for the colocation configuration", "node", req.Name)
		return ctrl.Result{}, nil
	}
	node := &corev1.Node{}
	if err := r.client.Get(ctx, req.NamespacedName, node); err != nil {
		if apierrors.IsNotFound(err) {
			r.metrics.forget(req.Name)
			r.recordWrite(req.Name, nil, time.Time{})
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get node %s: %w", req.Name, err)
	}
	if r.awaitingCache(node, r.clock.Now()) {
		r.metrics.skips.WithLabelValues(skipAwaitingCache).Inc()
		log.V(4).Info("Skipped the node until the cache shows the last update", "node", klog.KObj(node))
		return ctrl.Result{RequeueAfter: cacheLagRequeue}, nil
	}
	var nodeMetric *slov1alpha1.NodeMetric
	nm := &slov1alpha1.NodeMetric{}
	switch err := r.client.Get(ctx, req.NamespacedName, nm); {
	case err == nil:
		nodeMetric = nm
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("get NodeMetric %s: %w", req.Name, err)
	}
	podList := &corev1.PodList{}
	if err := r.client.List(ctx, podList, client.MatchingFields{PodNodeNameIndex: node.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list pods on node %s: %w", node.Name, err)
	}
	pods := make([]*corev1.Pod, len(podList.Items))
	for i := range podList.Items {
		pods[i] = &podList.Items[i]
	}

	strategy := r.strategyForNode(node)
	now := r.clock.Now()
	result := calculator.Calculate(calculator.Input{Node: node, NodeMetric: nodeMetric, Pods: pods, Strategy: &strategy, Now: now,
		UnreportedPodsUsageOnly: r.unreportedPodsUsageOnly})
	r.metrics.observe(node.Name, &result)
	for _, w := range result.Warnings {
		log.V(2).Info("Worked around a bad node input", "node", klog.KObj(node), "warning", w)
	}

	last, err := extension.GetColocationExplanation(node.Annotations)
	if err != nil {
		log.V(2).Info("Ignored an unreadable colocation explanation", "node", klog.KObj(node), "err", err)
		last = nil
	}
	var lastUpdate time.Time
	if last != nil {
		lastUpdate = last.UpdateTime.Time
	}
	decision := calculator.NeedUpdate(node, &result, lastUpdate, &strategy, now)
	if !decision.Update && last != nil && !explains(last, node) {
		decision = calculator.Decision{Update: true, Reason: updateExplanationOutdated}
	}

	if decision.Update {
		if err := r.write(ctx, node, &result, now); err != nil {
			return ctrl.Result{}, err
		}
		r.recordWrite(node.Name, result.ResourceList(), now)
		r.metrics.updates.WithLabelValues(string(decision.Reason)).Inc()
		log.V(2).Info("Updated colocation resources", "node", klog.KObj(node), "reason", decision.Reason,
			"resource", decision.Resource, "batchCPU", result.Batch.CPU, "batchMemory", result.Batch.Memory,
			"midCPU", result.Mid.CPU, "midMemory", result.Mid.Memory, "batchReset", result.Batch.Reset, "midReset", result.Mid.Reset)
		decision.DueAt = time.Time{}
	} else {
		reason := skipUnchanged
		if !decision.DueAt.IsZero() {
			reason = skipThrottled
		}
		r.metrics.skips.WithLabelValues(reason).Inc()
		log.V(4).Info("Skipped the node update", "node", klog.KObj(node), "reason", reason, "dueAt", decision.DueAt)
	}
	return ctrl.Result{RequeueAfter: requeueAfter(&result, decision.DueAt, now)}, nil
}

// write patches the node's explanation annotation and then its status (the four resources only, in capacity and
// allocatable). The patches are merge patches without a resource version: they touch nothing else, so they
// cannot conflict with the kubelet's own status updates.
//
// The annotation goes first: its event alone does not pass nodeChanged, so the status event that follows is
// the one that triggers the next reconcile, and that reconcile (like any reader) sees values and explanation
// that agree. The other order lets that reconcile see the new values with the old explanation and write the
// node a second time (NoLastUpdate or ExplanationOutdated).
func (r *Reconciler) write(ctx context.Context, node *corev1.Node, result *calculator.Result, now time.Time) error {
	statusPatch, err := resourcesPatch(result)
	if err != nil {
		return err
	}
	metaPatch, err := explanationPatch(result.Explanation(now))
	if err != nil {
		return err
	}
	if err := r.client.Patch(ctx, node, client.RawPatch(types.MergePatchType, metaPatch)); err != nil {
		return fmt.Errorf("patch colocation explanation of node %s: %w", node.Name, err)
	}
	if err := r.client.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, statusPatch)); err != nil {
		return fmt.Errorf("patch status of node %s: %w", node.Name, err)
	}
	return nil
}

// resourcesPatch is the merge patch that sets the result's resources in the status capacity and allocatable and
// removes (null) those to be removed.
func resourcesPatch(result *calculator.Result) ([]byte, error) {
	list := result.ResourceList()
	resources := make(map[corev1.ResourceName]any, len(calculator.ResourceNames))
	for _, name := range calculator.ResourceNames {
		if q, ok := list[name]; ok {
			resources[name] = q.String()
		} else {
			resources[name] = nil
		}
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"capacity": resources, "allocatable": resources}})
	if err != nil {
		return nil, fmt.Errorf("encode node status patch: %w", err)
	}
	return patch, nil
}

// explanationPatch is the merge patch that sets the explanation annotation.
func explanationPatch(e *extension.ColocationExplanation) ([]byte, error) {
	scratch := &corev1.Node{}
	if err := extension.SetColocationExplanation(scratch, e); err != nil {
		return nil, fmt.Errorf("encode colocation explanation: %w", err)
	}
	return annotationPatch(extension.AnnotationColocationExplanation, scratch.Annotations[extension.AnnotationColocationExplanation])
}

// annotationPatch is the merge patch that sets one annotation.
func annotationPatch(key, value string) ([]byte, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	if err != nil {
		return nil, fmt.Errorf("encode node annotation patch: %w", err)
	}
	return patch, nil
}

// explains tells whether the explanation records the batch and mid values the node has.
func explains(e *extension.ColocationExplanation, node *corev1.Node) bool {
	// In the order of calculator.ResourceNames: the CPU ones are recorded in cores, the node counts milli-cores.
	recorded := [4]*resource.Quantity{e.CPU.Batch, e.Memory.Batch, e.CPU.Mid, e.Memory.Mid}
	for i, name := range calculator.ResourceNames {
		q, ok := node.Status.Allocatable[name]
		if ok != (recorded[i] != nil) {
			return false
		}
		if !ok {
			continue
		}
		want := recorded[i].Value()
		if name == extension.BatchCPU || name == extension.MidCPU {
			want = recorded[i].MilliValue()
		}
		if q.Value() != want {
			return false
		}
	}
	return true
}

// requeueAfter is how long until the node must be looked at again without any event: when its NodeMetric turns
// stale (while it has resources to lose) or when a throttled difference becomes due. Zero means no requeue.
func requeueAfter(result *calculator.Result, dueAt, now time.Time) time.Duration {
	var after time.Duration
	consider := func(d time.Duration) {
		if d > 0 && (after == 0 || d < after) {
			after = d
		}
	}
	if (result.Batch.Reset == "" || result.Mid.Reset == "") && result.DegradeAt.After(now) {
		// One second past the deadline: the NodeMetric is stale only after it.
		consider(result.DegradeAt.Sub(now) + time.Second)
	}
	if !dueAt.IsZero() {
		consider(dueAt.Sub(now))
	}
	return after
}

// allNodes maps a configuration change to every node.
func (r *Reconciler) allNodes(ctx context.Context, _ client.Object) []reconcile.Request {
	nodes := &corev1.NodeList{}
	if err := r.client.List(ctx, nodes); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Could not list nodes after a configuration change")
		return nil
	}
	requests := make([]reconcile.Request, len(nodes.Items))
	for i := range nodes.Items {
		requests[i] = reconcile.Request{NamespacedName: types.NamespacedName{Name: nodes.Items[i].Name}}
	}
	return requests
}

// podNodeName indexes a pod by spec.nodeName.
func podNodeName(obj client.Object) []string {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil
	}
	return []string{pod.Spec.NodeName}
}

// sameName maps an object to the node of the same name.
func sameName(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetName()}}}
}

// nodeChanged passes node creations and deletions, and updates of what the calculation reads: capacity,
// allocatable, labels (they select the strategy) and annotations other than the explanation.
func nodeChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldNode, okOld := e.ObjectOld.(*corev1.Node)
			newNode, okNew := e.ObjectNew.(*corev1.Node)
			if !okOld || !okNew {
				return true
			}
			return !equality.Semantic.DeepEqual(oldNode.Status.Capacity, newNode.Status.Capacity) ||
				!equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable) ||
				!equality.Semantic.DeepEqual(oldNode.Labels, newNode.Labels) ||
				!equalIgnoring(oldNode.Annotations, newNode.Annotations, extension.AnnotationColocationExplanation)
		},
	}
}

// equalIgnoring compares two string maps, leaving out key.
func equalIgnoring(a, b map[string]string, key string) bool {
	_, inA := a[key]
	_, inB := b[key]
	la, lb := len(a), len(b)
	if inA {
		la--
	}
	if inB {
		lb--
	}
	if la != lb {
		return false
	}
	for k, v := range a {
		if k == key {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// nodeMetricChanged passes NodeMetric creations and deletions, and updates of its status.
func nodeMetricChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldNM, okOld := e.ObjectOld.(*slov1alpha1.NodeMetric)
			newNM, okNew := e.ObjectNew.(*slov1alpha1.NodeMetric)
			if !okOld || !okNew {
				return true
			}
			return !equality.Semantic.DeepEqual(oldNM.Status, newNM.Status)
		},
	}
}

// podEventHandler enqueues the node of a pod when the pod is created or deleted, and on updates that change
// what the calculation reads: the node it is bound to, its phase, its priority and QoS labels. A pod moving
// between nodes enqueues both.
func podEventHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueuePodNode(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			oldPod, okOld := e.ObjectOld.(*corev1.Pod)
			newPod, okNew := e.ObjectNew.(*corev1.Pod)
			if !okOld || !okNew || !podChanged(oldPod, newPod) {
				return
			}
			enqueuePodNode(q, oldPod)
			if newPod.Spec.NodeName != oldPod.Spec.NodeName {
				enqueuePodNode(q, newPod)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueuePodNode(q, e.Object)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueuePodNode(q, e.Object)
		},
	}
}

// podChanged tells whether an update of a pod can change its node's result.
func podChanged(oldPod, newPod *corev1.Pod) bool {
	return oldPod.Spec.NodeName != newPod.Spec.NodeName ||
		oldPod.Status.Phase != newPod.Status.Phase ||
		oldPod.Labels[extension.LabelPodPriorityClass] != newPod.Labels[extension.LabelPodPriorityClass] ||
		oldPod.Labels[extension.LabelPodQoS] != newPod.Labels[extension.LabelPodQoS]
}

// enqueuePodNode enqueues the node a pod is bound to, if any.
func enqueuePodNode(q workqueue.TypedRateLimitingInterface[reconcile.Request], obj client.Object) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: pod.Spec.NodeName}})
}
