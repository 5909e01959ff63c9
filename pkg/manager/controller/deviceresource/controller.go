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

// Package deviceresource is koord-manager's controller of nodes' device resources, what Koordinator's
// GPUDeviceResource and RDMADeviceResource node-resource plugins do: from each node's Device (written by
// koordlet) it writes koordinator.sh/gpu, gpu-core, gpu-memory, gpu-memory-ratio, gpu.shared, rdma and fpga
// into the node's status capacity and allocatable (see Resources), removes them when the Device is gone or has
// no healthy device of the kind, and copies the Device's gpu-vendor, gpu-model and gpu-driver-version labels
// to the node. Unlike Koordinator's, it writes a change at once (a GPU lost is gone from the node within a
// reconcile, not after a 10% difference or 5 minutes) and does not depend on the colocation configuration.
package deviceresource

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// Name is the controller's name, as selected by --controllers.
const Name = "deviceresource"

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// +kubebuilder:rbac:groups=scheduling.koordinator.sh,resources=devices,verbs=get;list;watch

// Reconciler writes one node's device resources per request (named like the node and its Device).
type Reconciler struct {
	client client.Client
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler reading and writing through c.
func NewReconciler(c client.Client) *Reconciler { return &Reconciler{client: c} }

// Setup registers the controller with mgr: it follows Devices and the nodes' device resources and labels.
func Setup(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&corev1.Node{}, builder.WithPredicates(nodeChanged())).
		Watches(&schedulingv1alpha1.Device{}, &handler.EnqueueRequestForObject{}).
		Complete(NewReconciler(mgr.GetClient()))
	if err != nil {
		return fmt.Errorf("build the %s controller: %w", Name, err)
	}
	return nil
}

// Reconcile makes the node's device resources and labels those of its Device.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	node := &corev1.Node{}
	if err := r.client.Get(ctx, req.NamespacedName, node); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var device *schedulingv1alpha1.Device
	d := &schedulingv1alpha1.Device{}
	switch err := r.client.Get(ctx, req.NamespacedName, d); {
	case err == nil:
		device = d
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("get Device %s: %w", req.Name, err)
	}
	want := Resources(device)
	if statusPatch := resourcesPatch(node, want); statusPatch != nil {
		if err := r.client.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, statusPatch)); err != nil {
			return ctrl.Result{}, fmt.Errorf("patch the device resources of node %s: %w", node.Name, err)
		}
		log.V(2).Info("Updated the node's device resources", "node", klog.KObj(node), "resources", want)
	}
	if labelPatch := labelsPatch(node, device); labelPatch != nil {
		if err := r.client.Patch(ctx, node, client.RawPatch(types.MergePatchType, labelPatch)); err != nil {
			return ctrl.Result{}, fmt.Errorf("patch the GPU labels of node %s: %w", node.Name, err)
		}
		log.V(2).Info("Updated the node's GPU labels", "node", klog.KObj(node))
	}
	return ctrl.Result{}, nil
}

// resourcesPatch is the merge patch that makes the node's device resources want in capacity and allocatable
// (null removes one), or nil when they already are.
func resourcesPatch(node *corev1.Node, want corev1.ResourceList) []byte {
	changed := false
	resources := map[corev1.ResourceName]any{}
	for _, name := range ResourceNames {
		q, ok := want[name]
		for _, list := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
			cur, has := list[name]
			if has != ok || (ok && cur.Cmp(q) != 0) {
				changed = true
			}
		}
		if ok {
			resources[name] = q.String()
		} else {
			resources[name] = nil
		}
	}
	if !changed {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"capacity": resources, "allocatable": resources}})
	return patch
}

// labelsPatch is the merge patch that copies the Device's GPU labels to the node, or nil when the node has
// them. Labels the Device lacks are left as they are on the node, as Koordinator leaves them.
func labelsPatch(node *corev1.Node, device *schedulingv1alpha1.Device) []byte {
	if device == nil {
		return nil
	}
	labels := map[string]string{}
	for _, k := range copiedLabels {
		if v, ok := device.Labels[k]; ok && node.Labels[k] != v {
			labels[k] = v
		}
	}
	if len(labels) == 0 {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	return patch
}

// nodeChanged passes node creations and the updates that change the device resources or GPU labels (someone
// else wrote them), so that they are put back.
func nodeChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldNode, ok1 := e.ObjectOld.(*corev1.Node)
			newNode, ok2 := e.ObjectNew.(*corev1.Node)
			if !ok1 || !ok2 {
				return false
			}
			for _, name := range ResourceNames {
				for _, pair := range [][2]corev1.ResourceList{{oldNode.Status.Capacity, newNode.Status.Capacity}, {oldNode.Status.Allocatable, newNode.Status.Allocatable}} {
					a, okA := pair[0][name]
					b, okB := pair[1][name]
					if okA != okB || (okA && a.Cmp(b) != 0) {
						return true
					}
				}
			}
			for _, k := range copiedLabels {
				if oldNode.Labels[k] != newNode.Labels[k] {
					return true
				}
			}
			return false
		},
	}
}
