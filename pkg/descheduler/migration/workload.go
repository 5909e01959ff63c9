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

package migration

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workload is the object whose replicas a pod is one of: the pod's controller, or the Deployment above its
// ReplicaSet.
type workload struct {
	// ref is the workload itself.
	ref metav1.OwnerReference
	// namespace is the workload's namespace (the pod's).
	namespace string
	// replicas is the number of replicas the workload asks for.
	replicas int
	// pods are the workload's pods that exist.
	pods []*corev1.Pod
}

// String names the workload for messages: Kind namespace/name.
func (w *workload) String() string {
	return fmt.Sprintf("%s %s/%s", w.ref.Kind, w.namespace, w.ref.Name)
}

// workloadFinder finds the workload of a pod by typed lookups for the kinds it knows (ReplicaSet and
// Deployment, StatefulSet, ReplicationController, Job) and spec.replicas of any other controller.
type workloadFinder struct {
	c client.Reader
}

// find returns the workload of pod, or nil when no controller owns it.
func (f *workloadFinder) find(ctx context.Context, pod *corev1.Pod) (*workload, error) {
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		return nil, nil
	}
	w := &workload{ref: *owner, namespace: pod.Namespace}
	controllers := []types.UID{owner.UID}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: owner.Name}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("controller of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	switch {
	case gv.Group == appsv1.GroupName && owner.Kind == "ReplicaSet":
		rs := &appsv1.ReplicaSet{}
		if err := f.c.Get(ctx, key, rs); err != nil {
			return nil, fmt.Errorf("get ReplicaSet %s: %w", key, err)
		}
		w.replicas = int(ptr.Deref(rs.Spec.Replicas, 1))
		if d := metav1.GetControllerOf(rs); d != nil && d.Kind == "Deployment" {
			if controllers, err = f.deployment(ctx, w, pod.Namespace, d); err != nil {
				return nil, err
			}
		}
	case gv.Group == appsv1.GroupName && owner.Kind == "StatefulSet":
		sts := &appsv1.StatefulSet{}
		if err := f.c.Get(ctx, key, sts); err != nil {
			return nil, fmt.Errorf("get StatefulSet %s: %w", key, err)
		}
		w.replicas = int(ptr.Deref(sts.Spec.Replicas, 1))
	case gv.Group == "" && owner.Kind == "ReplicationController":
		rc := &corev1.ReplicationController{}
		if err := f.c.Get(ctx, key, rc); err != nil {
			return nil, fmt.Errorf("get ReplicationController %s: %w", key, err)
		}
		w.replicas = int(ptr.Deref(rc.Spec.Replicas, 1))
	case gv.Group == batchv1.GroupName && owner.Kind == "Job":
		job := &batchv1.Job{}
		if err := f.c.Get(ctx, key, job); err != nil {
			return nil, fmt.Errorf("get Job %s: %w", key, err)
		}
		w.replicas = int(ptr.Deref(job.Spec.Parallelism, 1))
	default:
		// Any other controller: its scale-like spec.replicas, else as many replicas as it has pods.
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gv.WithKind(owner.Kind))
		if err := f.c.Get(ctx, key, u); err != nil {
			return nil, fmt.Errorf("get %s %s: %w", owner.Kind, key, err)
		}
		if r, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas"); err == nil && found {
			w.replicas = int(r)
		} else {
			w.replicas = -1
		}
	}
	for _, uid := range controllers {
		pods := &corev1.PodList{}
		if err := f.c.List(ctx, pods, client.InNamespace(pod.Namespace), client.MatchingFields{indexPodByController: string(uid)}); err != nil {
			return nil, fmt.Errorf("list pods of %s: %w", w, err)
		}
		for i := range pods.Items {
			w.pods = append(w.pods, &pods.Items[i])
		}
	}
	if w.replicas < 0 {
		w.replicas = len(w.pods)
	}
	return w, nil
}

// deployment makes w the Deployment d and returns the UIDs of its ReplicaSets, whose pods are its pods.
func (f *workloadFinder) deployment(ctx context.Context, w *workload, namespace string, d *metav1.OwnerReference) ([]types.UID, error) {
	dep := &appsv1.Deployment{}
	key := types.NamespacedName{Namespace: namespace, Name: d.Name}
	if err := f.c.Get(ctx, key, dep); err != nil {
		return nil, fmt.Errorf("get Deployment %s: %w", key, err)
	}
	w.ref = *d
	w.replicas = int(ptr.Deref(dep.Spec.Replicas, 1))
	sets := &appsv1.ReplicaSetList{}
	if err := f.c.List(ctx, sets, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list ReplicaSets of %s: %w", w, err)
	}
	var uids []types.UID
	for i := range sets.Items {
		if o := metav1.GetControllerOf(&sets.Items[i]); o != nil && o.UID == dep.UID {
			uids = append(uids, sets.Items[i].UID)
		}
	}
	return uids, nil
}

// isPodActive reports whether pod is neither finished nor being deleted.
func isPodActive(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed && pod.DeletionTimestamp == nil
}
