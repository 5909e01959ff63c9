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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestEnsureNodeOwner(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-2"}}
	ours := NodeOwnerReference(node)
	stale := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "n1", UID: "uid-1", Controller: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Thing", Name: "t", UID: "uid-t", Controller: ptr.To(true)}
	plain := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Thing", Name: "t", UID: "uid-t"}
	tests := map[string]struct {
		refs        []metav1.OwnerReference
		want        []metav1.OwnerReference
		wantChanged bool
	}{
		"no owners":     {want: []metav1.OwnerReference{ours}, wantChanged: true},
		"already owned": {refs: []metav1.OwnerReference{ours}, want: []metav1.OwnerReference{ours}},
		"earlier node of the same name is replaced": {refs: []metav1.OwnerReference{stale}, want: []metav1.OwnerReference{ours}, wantChanged: true},
		"duplicates are dropped":                    {refs: []metav1.OwnerReference{ours, ours}, want: []metav1.OwnerReference{ours}, wantChanged: true},
		"other owners are kept":                     {refs: []metav1.OwnerReference{plain}, want: []metav1.OwnerReference{plain, ours}, wantChanged: true},
		"another controller makes ours a plain owner": {
			refs:        []metav1.OwnerReference{other},
			want:        []metav1.OwnerReference{other, {APIVersion: "v1", Kind: "Node", Name: "n1", UID: "uid-2", Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false)}},
			wantChanged: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{OwnerReferences: tc.refs}
			if got := EnsureNodeOwner(obj, node); got != tc.wantChanged {
				t.Errorf("EnsureNodeOwner() = %v, want %v", got, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, obj.OwnerReferences); diff != "" {
				t.Errorf("owner references (-want,+got):\n%s", diff)
			}
		})
	}
}
