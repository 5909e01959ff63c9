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

// Package nodeslo keeps one NodeSLO per node, with the node's name, whose spec is rendered from the SLO
// configuration (configuration.NodeSLOSpecForNode): the defaults, the cluster strategies and the first node
// strategy of each key that selects the node. A NodeSLO is rewritten when the configuration or the node's labels
// change, or when someone else edits it; it is owned by its node and deleted with it.
package nodeslo

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
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
)

// Name is the controller's name, as --controllers knows it.
const Name = "nodeslo"

// +kubebuilder:rbac:groups=slo.koordinator.sh,resources=nodeslos,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// Reconciler brings the NodeSLO of one node (the request's name) in line with the configuration in force.
type Reconciler struct {
	client client.Client
	store  *sloconfig.Store
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler that reads and writes through c and renders from store.
func NewReconciler(c client.Client, store *sloconfig.Store) *Reconciler {
	return &Reconciler{client: c, store: store}
}

// Setup registers the controller with mgr. It reconciles a node when the node is created, deleted or relabelled,
// when its NodeSLO changes, and every node when the store installs a new configuration.
func Setup(mgr ctrl.Manager, store *sloconfig.Store) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&slov1alpha1.NodeSLO{}).
		Watches(&corev1.Node{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(labelsChanged())).
		WatchesRawSource(source.Channel(store.Subscribe(), sloconfig.EnqueueAllNodes(mgr.GetClient()))).
		Complete(NewReconciler(mgr.GetClient(), store))
	if err != nil {
		return fmt.Errorf("build the %s controller: %w", Name, err)
	}
	return nil
}

// labelsChanged passes node creations, deletions and updates that change the labels, the only part of a node
// the NodeSLO depends on; it drops the frequent status updates.
func labelsChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !labels.Equals(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
		},
	}
}

// Reconcile creates, updates or deletes the node's NodeSLO. It does nothing until the store has loaded the
// configuration once, so that a restart never writes defaults over the NodeSLOs; the store's first install
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
			return reconcile.Result{}, sloconfig.DeleteNodeOrphan(ctx, r.client, &slov1alpha1.NodeSLO{}, req.Name)
		}
		return reconcile.Result{}, fmt.Errorf("get node %s: %w", req.Name, err)
	}
	snap := r.store.Get()
	spec := configuration.NodeSLOSpecForNode(&snap.SLOCfg, node)

	slo := &slov1alpha1.NodeSLO{}
	if err := r.client.Get(ctx, req.NamespacedName, slo); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("get NodeSLO %s: %w", req.Name, err)
		}
		slo = &slov1alpha1.NodeSLO{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name, OwnerReferences: []metav1.OwnerReference{sloconfig.NodeOwnerReference(node)}},
			Spec:       spec,
		}
		if err := r.client.Create(ctx, slo); err != nil {
			return reconcile.Result{}, fmt.Errorf("create NodeSLO %s: %w", node.Name, err)
		}
		log.V(2).Info("Created NodeSLO", "node", klog.KObj(node), "configResourceVersion", snap.ResourceVersion)
		return reconcile.Result{}, nil
	}
	if !slo.DeletionTimestamp.IsZero() {
		// Its deletion event brings the node back here, and the NodeSLO is created anew.
		return reconcile.Result{}, nil
	}
	ownerChanged := sloconfig.EnsureNodeOwner(slo, node)
	if !ownerChanged && equality.Semantic.DeepEqual(slo.Spec, spec) {
		return reconcile.Result{}, nil
	}
	slo.Spec = spec
	// The update carries the resourceVersion read, so a concurrent change makes it fail and the request retry.
	if err := r.client.Update(ctx, slo); err != nil {
		return reconcile.Result{}, fmt.Errorf("update NodeSLO %s: %w", node.Name, err)
	}
	log.V(2).Info("Updated NodeSLO", "node", klog.KObj(node), "configResourceVersion", snap.ResourceVersion, "ownerChanged", ownerChanged)
	return reconcile.Result{}, nil
}
