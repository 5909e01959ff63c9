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

package sloconfig

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeOwnerReference returns the owner reference that ties a per-node object (NodeSLO, NodeMetric) to its node,
// so that the garbage collector deletes it with the node. It does not block the node's deletion: that would need
// permission to update nodes/finalizers, and nothing must wait for these objects.
func NodeOwnerReference(node *corev1.Node) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         "v1",
		Kind:               "Node",
		Name:               node.Name,
		UID:                node.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(false),
	}
}

// EnsureNodeOwner makes node an owner of obj and reports whether it changed obj's owner references. References
// to an earlier node of the same name (another UID) are dropped, since the collector would delete obj for them.
// When another owner already is obj's controller, node is added as a plain owner. An existing reference to the
// node is kept as it is.
func EnsureNodeOwner(obj metav1.Object, node *corev1.Node) bool {
	want := NodeOwnerReference(node)
	var kept []metav1.OwnerReference
	found, otherController, changed := false, false, false
	for _, r := range obj.GetOwnerReferences() {
		if r.APIVersion == want.APIVersion && r.Kind == want.Kind && r.Name == want.Name {
			if r.UID == want.UID && !found {
				found = true
				kept = append(kept, r)
			} else {
				changed = true // a stale or duplicate reference
			}
			continue
		}
		otherController = otherController || ptr.Deref(r.Controller, false)
		kept = append(kept, r)
	}
	if !found {
		if otherController {
			want.Controller = ptr.To(false)
		}
		kept = append(kept, want)
		changed = true
	}
	if changed {
		obj.SetOwnerReferences(kept)
	}
	return changed
}

// DeleteNodeOrphan deletes the per-node object named name (obj is an empty object of its kind, e.g.
// &slov1alpha1.NodeSLO{}) once its node no longer exists. The garbage collector does the same through the owner
// reference; this covers clusters without one and objects created before Koord owned them.
func DeleteNodeOrphan(ctx context.Context, c client.Client, obj client.Object, name string) error {
	kind := reflect.TypeOf(obj).Elem().Name()
	if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	uid := obj.GetUID()
	if err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s %s of a deleted node: %w", kind, name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleted the object of a deleted node", "kind", kind, "node", klog.KRef("", name))
	return nil
}
