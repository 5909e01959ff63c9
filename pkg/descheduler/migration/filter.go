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
	"math"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/utils"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

// Filter reports whether pod may be migrated at all. It refuses mirror, static and DaemonSet pods, pods being
// deleted, pods with the maximum eviction cost and pods that already have a PodMigrationJob in progress, and,
// unless args.skipEvictionGates names the gate, pods outside args.namespaces or args.labelSelector, at or
// above args.priorityThreshold, system-critical pods, bare pods, pods with local storage or (ignorePvcPods)
// PersistentVolumeClaims, and pods of single-replica workloads. It logs at V(4) why it refuses a pod.
func (c *Controller) Filter(pod *corev1.Pod) bool {
	// The descheduler's Filter has no context; the checks only read the informer caches.
	ctx := klog.NewContext(context.Background(), c.logger)
	if reason := c.refuse(ctx, pod, ""); reason != "" {
		c.logger.V(4).Info("Pod refused for migration", "pod", klog.KObj(pod), "reason", reason)
		return false
	}
	return true
}

// PreEvictionFilter reports whether pod may be migrated now: another node fits it (args.nodeFit), and the
// arbitration limits and the workload limiter let it through, checked without recording anything.
func (c *Controller) PreEvictionFilter(pod *corev1.Pod) bool {
	ctx := klog.NewContext(context.Background(), c.logger)
	if reason := c.refuseNow(ctx, pod); reason != "" {
		c.logger.V(4).Info("Pod refused for migration now", "pod", klog.KObj(pod), "reason", reason)
		return false
	}
	return true
}

// refuseNow returns why pod may not be migrated now, or "".
func (c *Controller) refuseNow(ctx context.Context, pod *corev1.Pod) string {
	if c.args.NodeFit && !c.skip[config.EvictionGateNodeFit] {
		fits, err := c.fitsOtherNode(ctx, pod)
		if err != nil {
			return err.Error()
		}
		if !fits {
			return "nodeFit: no other node fits the pod"
		}
	}
	w, err := c.finder.find(ctx, pod)
	if err != nil {
		return err.Error()
	}
	migrating, err := c.migrations(ctx, false)
	if err != nil {
		return err.Error()
	}
	if r := c.limits.check(pod, w, migrating); r != nil {
		return string(r.gate) + ": " + r.message
	}
	if r := c.objects.exceeded(w, c.clock.Now()); r != nil {
		return string(r.gate) + ": " + r.message
	}
	return ""
}

// fitsOtherNode reports whether a ready node other than pod's, among those args.nodeSelector selects, fits it.
func (c *Controller) fitsOtherNode(ctx context.Context, pod *corev1.Pod) (bool, error) {
	sel := labels.Everything()
	if c.args.NodeSelector != "" {
		var err error
		if sel, err = labels.Parse(c.args.NodeSelector); err != nil {
			return false, fmt.Errorf("nodeSelector: %w", err)
		}
	}
	list := &corev1.NodeList{}
	if err := c.client.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return false, fmt.Errorf("list nodes: %w", err)
	}
	var nodes []*corev1.Node
	for i := range list.Items {
		if node.IsReady(&list.Items[i]) {
			nodes = append(nodes, &list.Items[i])
		}
	}
	return node.PodFitsAnyOtherNode(c.podsOnNode(ctx), pod, nodes), nil
}

// podsOnNode returns the descheduler's pods-by-node lookup over the pod cache.
func (c *Controller) podsOnNode(ctx context.Context) podutil.GetPodsAssignedToNodeFunc {
	return func(name string, filter podutil.FilterFunc) ([]*corev1.Pod, error) {
		list := &corev1.PodList{}
		if err := c.client.List(ctx, list, client.MatchingFields{indexPodByNode: name}); err != nil {
			return nil, fmt.Errorf("list pods of node %s: %w", name, err)
		}
		var pods []*corev1.Pod
		for i := range list.Items {
			if filter == nil || filter(&list.Items[i]) {
				pods = append(pods, &list.Items[i])
			}
		}
		return pods, nil
	}
}

// refuse returns why pod may not be migrated at all, or "". ownJob is the job of the pod being arbitrated,
// which does not count as another job in progress.
func (c *Controller) refuse(ctx context.Context, pod *corev1.Pod, ownJob string) string {
	switch {
	case utils.IsMirrorPod(pod):
		return "mirror pod"
	case utils.IsStaticPod(pod):
		return "static pod"
	case utils.IsDaemonsetPod(pod.OwnerReferences):
		return "DaemonSet pod"
	case utils.IsPodTerminating(pod):
		return "pod is terminating"
	case evictionCost(pod) == math.MaxInt32:
		return "eviction cost is the maximum"
	}
	if reason := c.gates(ctx, pod); reason != "" {
		return reason
	}
	inProgress, err := c.jobInProgress(ctx, pod, ownJob)
	if err != nil {
		return err.Error()
	}
	if inProgress != "" {
		return fmt.Sprintf("PodMigrationJob %s is in progress", inProgress)
	}
	return c.singleReplica(ctx, pod)
}

// gates returns the first eviction gate, in config.EvictionGates order, that refuses pod, or "".
func (c *Controller) gates(ctx context.Context, pod *corev1.Pod) string {
	a := c.args
	if ns := a.Namespaces; ns != nil && !c.skip[config.EvictionGateNamespaces] {
		if len(ns.Include) > 0 && !slices.Contains(ns.Include, pod.Namespace) {
			return "namespaces: namespace " + pod.Namespace + " is not included"
		}
		if slices.Contains(ns.Exclude, pod.Namespace) {
			return "namespaces: namespace " + pod.Namespace + " is excluded"
		}
	}
	if a.LabelSelector != nil && !c.skip[config.EvictionGateLabelSelector] {
		sel, err := metav1.LabelSelectorAsSelector(a.LabelSelector)
		if err != nil {
			return "labelSelector: " + err.Error()
		}
		if !sel.Matches(labels.Set(pod.Labels)) {
			return "labelSelector: the pod's labels do not match"
		}
	}
	if a.PriorityThreshold != nil && !c.skip[config.EvictionGatePriorityThreshold] && pod.Spec.Priority != nil {
		threshold, err := c.priorityThreshold(ctx)
		if err != nil {
			return "priorityThreshold: " + err.Error()
		}
		if *pod.Spec.Priority >= threshold {
			return fmt.Sprintf("priorityThreshold: priority %d is at or above %d", *pod.Spec.Priority, threshold)
		}
	}
	if !a.EvictSystemCriticalPods && !c.skip[config.EvictionGateSystemCritical] && utils.IsCriticalPriorityPod(pod) {
		return "systemCritical: the pod is system-critical"
	}
	if metav1.GetControllerOf(pod) == nil && !c.skip[config.EvictionGateBarePods] && !a.EvictAllBarePods &&
		(!a.EvictFailedBarePods || pod.Status.Phase != corev1.PodFailed) {
		return "barePods: no controller owns the pod"
	}
	if !a.EvictLocalStoragePods && !c.skip[config.EvictionGateLocalStorage] && utils.IsPodWithLocalStorage(pod) {
		return "localStorage: the pod has local storage"
	}
	if a.IgnorePvcPods && !c.skip[config.EvictionGatePVC] && utils.IsPodWithPVC(pod) {
		return "pvc: the pod has a PersistentVolumeClaim"
	}
	return ""
}

// priorityThreshold returns the priority of args.priorityThreshold, by value or PriorityClass name.
func (c *Controller) priorityThreshold(ctx context.Context) (int32, error) {
	t := c.args.PriorityThreshold
	if t.Value != nil {
		return *t.Value, nil
	}
	pc := &schedulingv1.PriorityClass{}
	if err := c.client.Get(ctx, types.NamespacedName{Name: t.Name}, pc); err != nil {
		return 0, fmt.Errorf("get PriorityClass %s: %w", t.Name, err)
	}
	return pc.Value, nil
}

// singleReplica refuses, as Koordinator's expected-replicas check, pods of a workload that cannot lose one
// replica: one replica, or as many as its maxMigrating or maxUnavailable.
func (c *Controller) singleReplica(ctx context.Context, pod *corev1.Pod) string {
	if c.skip[config.EvictionGateExpectedReplicas] || (c.args.SkipCheckExpectedReplicas != nil && *c.args.SkipCheckExpectedReplicas) {
		return ""
	}
	w, err := c.finder.find(ctx, pod)
	if err != nil {
		return err.Error()
	}
	if w == nil {
		return ""
	}
	maxMigrating, err := maxPerWorkload(w.replicas, c.args.MaxMigratingPerWorkload)
	if err != nil {
		return err.Error()
	}
	maxUnavailable, err := maxPerWorkload(w.replicas, c.args.MaxUnavailablePerWorkload)
	if err != nil {
		return err.Error()
	}
	if w.replicas <= 1 || w.replicas == maxMigrating || w.replicas == maxUnavailable {
		return fmt.Sprintf("expectedReplicas: %s has %d replicas, maxMigrating %d, maxUnavailable %d", w, w.replicas, maxMigrating, maxUnavailable)
	}
	return ""
}

// jobInProgress returns the name of a Pending or Running PodMigrationJob of pod other than ownJob, or "".
func (c *Controller) jobInProgress(ctx context.Context, pod *corev1.Pod, ownJob string) (string, error) {
	jobs := &schedv1alpha1.PodMigrationJobList{}
	if err := c.client.List(ctx, jobs, client.MatchingFields{indexJobByPod: pod.Namespace + "/" + pod.Name}); err != nil {
		return "", fmt.Errorf("list PodMigrationJobs of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if j.Name != ownJob && !isFinished(j) && j.DeletionTimestamp == nil {
			return j.Name, nil
		}
	}
	return "", nil
}

// evictionCost returns the pod's scheduling.koordinator.sh/eviction-cost, 0 when absent or malformed.
func evictionCost(pod *corev1.Pod) int32 {
	return annotationInt32(pod, extension.AnnotationEvictionCost)
}

// annotationInt32 parses the pod's annotation key as an int32, 0 when absent or malformed.
func annotationInt32(pod *corev1.Pod, key string) int32 {
	v, err := strconv.ParseInt(pod.Annotations[key], 10, 32)
	if err != nil {
		return 0
	}
	return int32(v)
}
