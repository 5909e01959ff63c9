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

// Package nodemetric keeps one NodeMetric per node, with the node's name, whose spec.metricCollectPolicy tells the
// node agent how to collect and report usage: the node's colocation strategy (configuration.
// ColocationStrategyForNode) turned into a collection policy. The node agent owns the status; this controller
// only ever patches the spec. A NodeMetric is owned by its node and deleted with it.
package nodemetric

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
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
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
)

// Name is the controller's name, as --controllers knows it.
const Name = "nodemetric"

// +kubebuilder:rbac:groups=slo.koordinator.sh,resources=nodemetrics,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// Reconciler brings the NodeMetric spec of one node (the request's name) in line with the configuration in force.
type Reconciler struct {
	client client.Client
	store  *sloconfig.Store
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler that reads and writes through c and renders from store.
func NewReconciler(c client.Client, store *sloconfig.Store) *Reconciler {
	return &Reconciler{client: c, store: store}
}

// Setup registers the controller with mgr. It reconciles a node when the node is created, deleted, relabelled or
// its colocation strategy annotation changes, when its NodeMetric's spec or owners change, and every node when
// the store installs a new configuration.
func Setup(mgr ctrl.Manager, store *sloconfig.Store) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&slov1alpha1.NodeMetric{}, builder.WithPredicates(specOrOwnersChanged())).
		Watches(&corev1.Node{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(strategyInputsChanged())).
		WatchesRawSource(source.Channel(store.Subscribe(), sloconfig.EnqueueAllNodes(mgr.GetClient()))).
		Complete(NewReconciler(mgr.GetClient(), store))
	if err != nil {
		return fmt.Errorf("build the %s controller: %w", Name, err)
	}
	return nil
}

// strategyInputsChanged passes node creations, deletions and the updates that can change the node's colocation
// strategy: its labels (node strategies, reclaim-ratio labels) and its colocation strategy annotation. Status
// updates and other annotations, such as the one the noderesource controller writes, are dropped.
func strategyInputsChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			const key = extension.AnnotationNodeColocationStrategy
			return !labels.Equals(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
				e.ObjectOld.GetAnnotations()[key] != e.ObjectNew.GetAnnotations()[key]
		},
	}
}

// specOrOwnersChanged passes NodeMetric updates that touch what this controller owns, and drops the node agent's
// status reports, which arrive every report interval from every node.
func specOrOwnersChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldNM, okOld := e.ObjectOld.(*slov1alpha1.NodeMetric)
			newNM, okNew := e.ObjectNew.(*slov1alpha1.NodeMetric)
			if !okOld || !okNew {
				return true
			}
			return !equality.Semantic.DeepEqual(oldNM.Spec, newNM.Spec) ||
				!equality.Semantic.DeepEqual(oldNM.OwnerReferences, newNM.OwnerReferences) ||
				!oldNM.DeletionTimestamp.Equal(newNM.DeletionTimestamp)
		},
	}
}

// Reconcile creates, patches or deletes the node's NodeMetric. It does nothing until the store has loaded the
// configuration once, so that a restart never writes defaults over the NodeMetrics; the store's first install
// reconciles every node.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if !r.store.Synced() {
		log.V(4).Info("Waiting for the SLO configuration", "node", req.Name)
		return reconcile.Result{}, nil
	}
	node := &corev1.Node{}
	if err := r.client.Get(ctx, req.NamespacedName, node); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, sloconfig.DeleteNodeOrphan(ctx, r.client, &slov1alpha1.NodeMetric{}, req.Name)
		}
		return reconcile.Result{}, fmt.Errorf("get node %s: %w", req.Name, err)
	}
	snap := r.store.Get()
	strategy, err := configuration.ColocationStrategyForNode(snap.Colocation, node)
	if err != nil {
		// The bad override is ignored and the rest of the strategy applies; the noderesource controller, which
		// reads the same overrides, reports it on the node too.
		log.Info("Ignored invalid colocation overrides of the node", "node", klog.KObj(node), "err", err.Error())
	}
	policy := configuration.NodeMetricCollectPolicy(strategy)

	nm := &slov1alpha1.NodeMetric{}
	if err := r.client.Get(ctx, req.NamespacedName, nm); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("get NodeMetric %s: %w", req.Name, err)
		}
		nm = &slov1alpha1.NodeMetric{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name, OwnerReferences: []metav1.OwnerReference{sloconfig.NodeOwnerReference(node)}},
			Spec:       slov1alpha1.NodeMetricSpec{CollectPolicy: policy},
		}
		if err := r.client.Create(ctx, nm); err != nil {
			return reconcile.Result{}, fmt.Errorf("create NodeMetric %s: %w", node.Name, err)
		}
		log.V(2).Info("Created NodeMetric", "node", klog.KObj(node), "configResourceVersion", snap.ResourceVersion)
		return reconcile.Result{}, nil
	}
	if !nm.DeletionTimestamp.IsZero() {
		// Its deletion event brings the node back here, and the NodeMetric is created anew.
		return reconcile.Result{}, nil
	}
	// The patch covers only the spec and the owner references, and carries the resourceVersion read: the node
	// agent's status is never written, and a concurrent change to the spec makes the patch fail and retry.
	patch := client.MergeFromWithOptions(nm.DeepCopy(), client.MergeFromWithOptimisticLock{})
	ownerChanged := sloconfig.EnsureNodeOwner(nm, node)
	if !ownerChanged && equality.Semantic.DeepEqual(nm.Spec.CollectPolicy, policy) {
		return reconcile.Result{}, nil
	}
	nm.Spec.CollectPolicy = policy
	if err := r.client.Patch(ctx, nm, patch); err != nil {
		return reconcile.Result{}, fmt.Errorf("patch NodeMetric %s: %w", node.Name, err)
	}
	log.V(2).Info("Updated NodeMetric collect policy", "node", klog.KObj(node), "configResourceVersion", snap.ResourceVersion, "ownerChanged", ownerChanged)
	return reconcile.Result{}, nil
}
