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

package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UserWithRoles adds user to the apiserver and returns a client configuration that authenticates as it,
// bound to every ClusterRole and Role of the manifest at path (relative to the repository root, e.g. a
// component's shipped config/rbac/<component>/role.yaml, which it creates) and to the existing ClusterRoles
// named in clusterRoles. Tests run a component with it to show that its shipped role is enough. Objects that
// exist already are left as they are, so several tests may ask for the same user.
func (e *Environment) UserWithRoles(ctx context.Context, user, path string, clusterRoles ...string) (*rest.Config, error) {
	roles, err := readRoles(filepath.Join(e.RepoRoot, path))
	if err != nil {
		return nil, err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	binding := func(kind, name, namespace string) client.Object {
		meta := metav1.ObjectMeta{Name: name + "-" + user, Namespace: namespace}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
		if kind == "Role" {
			return &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects, RoleRef: ref}
		}
		return &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subjects, RoleRef: ref}
	}
	var objs []client.Object
	for _, role := range roles {
		if ns := role.GetNamespace(); ns != "" {
			objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
		objs = append(objs, role, binding(role.GetKind(), role.GetName(), role.GetNamespace()))
	}
	for _, name := range clusterRoles {
		objs = append(objs, binding("ClusterRole", name, ""))
	}
	for _, obj := range objs {
		if err := e.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return e.AddUser(user)
}

// readRoles returns the ClusterRoles and Roles of the manifest at path, and an error for anything else in it.
func readRoles(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var roles []*unstructured.Unstructured
	for {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || string(raw.Raw) == "null" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw.Raw); err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		if kind := obj.GetKind(); kind != "ClusterRole" && kind != "Role" {
			return nil, fmt.Errorf("%s: %s %s is not a role", path, kind, obj.GetName())
		}
		roles = append(roles, obj)
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("%s holds no role", path)
	}
	return roles, nil
}
