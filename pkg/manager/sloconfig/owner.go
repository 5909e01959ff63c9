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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
