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

package manager

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

const rbacTestUser = "koord-manager-rbac-test"

// applyRBAC installs config/rbac/koord-manager and binds it to rbacTestUser.
func applyRBAC(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, "config", "rbac", "koord-manager", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || string(raw.Raw) == "null" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw.Raw); err != nil {
			t.Fatal(err)
		}
		createOrFail(t, obj)
		subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: rbacTestUser}}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: obj.GetKind(), Name: obj.GetName()}
		if obj.GetKind() == "ClusterRole" {
			createOrFail(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: obj.GetName() + "-test"}, Subjects: subject, RoleRef: ref})
		} else {
			createOrFail(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName() + "-test"}, Subjects: subject, RoleRef: ref})
		}
	}
}

// TestManagerRunsWithItsOwnRBAC runs koord-manager as a user that has exactly the shipped role, with leader
// election on, and checks that every part does its job: webhooks registered, NodeMetric and NodeSLO
// created, batch resources written on the node, a pod mutated.
func TestManagerRunsWithItsOwnRBAC(t *testing.T) {
	ensureSystemNamespace(t)
	applyRBAC(t)
	ctx := t.Context()

	slo := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: configuration.ConfigNamespace, Name: configuration.SLOCtrlConfigMap},
		Data:       map[string]string{configuration.ColocationConfigKey: `{"enable": true}`},
	}
	_ = env.Client.Delete(ctx, slo)
	createOrFail(t, slo)

	cfg, err := env.AddUser(rbacTestUser)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t)
	opts.LeaderElection = true
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = 4*time.Second, 3*time.Second, 500*time.Millisecond
	startManagerAs(t, cfg, opts)

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "rbac-node"}}
	createOrFail(t, node)
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node.Status.Capacity, node.Status.Allocatable = capacity, capacity.DeepCopy()
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}

	nm := &slov1alpha1.NodeMetric{}
	eventually(t, "no NodeMetric for the node", func(ctx context.Context) (bool, error) {
		return env.Client.Get(ctx, client.ObjectKey{Name: node.Name}, nm) == nil, nil
	})
	eventually(t, "no NodeSLO for the node", func(ctx context.Context) (bool, error) {
		return env.Client.Get(ctx, client.ObjectKey{Name: node.Name}, &slov1alpha1.NodeSLO{}) == nil, nil
	})
	// The node agent reports an idle node.
	now := metav1.Now()
	nm.Status = slov1alpha1.NodeMetricStatus{UpdateTime: &now, NodeMetric: &slov1alpha1.NodeMetricInfo{
		NodeUsage:   slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}},
		SystemUsage: slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}},
	}}
	if err := env.Client.Status().Update(ctx, nm); err != nil {
		t.Fatal(err)
	}
	// Default reclaim 60 % cpu: 32 - 32*0.4 - 1 = 18.2 cores, rounded up to 18200m... (any positive value proves
	// the patch was allowed; the policy tests check the numbers).
	eventually(t, "batch resources were not written on the node", func(ctx context.Context) (bool, error) {
		got := &corev1.Node{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(node), got); err != nil {
			return false, err
		}
		q, ok := got.Status.Allocatable[extension.BatchCPU]
		_, explained := got.Annotations[extension.AnnotationColocationExplanation]
		return ok && q.Value() > 0 && explained, nil
	})

	// The pod webhook answers with the manager's permissions (it reads profiles, namespaces, priority classes).
	createOrFail(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rbac-ns"}})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "rbac-ns", Name: "lsr-batch", Labels: map[string]string{extension.LabelPodQoS: "LSR"}},
		Spec:       corev1.PodSpec{PriorityClassName: "koord-batch", Containers: []corev1.Container{{Name: "c", Image: "x", Resources: resources("1", "1Gi")}}},
	}
	createOrFail(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "koord-batch"}, Value: 5000})
	err = env.Client.Create(ctx, pod, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "cannot be used in combination") {
		t.Errorf("LSR pod with batch priority under the shipped role: got %v, want the validating webhook's rejection", err)
	}
}
