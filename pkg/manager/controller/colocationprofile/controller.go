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

// Package colocationprofile is koord-manager's colocationprofile controller, Koord's counterpart of
// Koordinator's alpha ColocationProfileController. It is off unless named in --controllers.
//
// Every ClusterColocationProfile labelled config.koordinator.sh/controller-managed=true is re-applied, every
// Options.Interval and whenever the profile changes, to the pods that are still Pending with no spec.nodeName
// and that its selector and namespace selector match (pods in kube-system and koordinator-system excepted, as
// in the pod webhook). This catches pods created before the profile existed, or while the webhook was down.
//
// Only what may still change on an existing pod is applied: labels, annotations, labelKeysMapping,
// annotationKeysMapping, labelSuffixes, the koordinator.sh/qosClass label and the koordinator.sh/priority label
// (pod.ApplyProfileMetadata). schedulerName, priorityClassName (and with it spec.priority), the batch/mid
// resource rewrite and the profile's patch are left out: the apiserver does not allow them to change on a live
// pod. The pod is written with a merge patch of metadata.labels and metadata.annotations, guarded by its
// resourceVersion, and only when the profile changes something, so repeated passes write nothing.
//
// A profile with a probability below 100% applies to a pod when the FNV-1a hash of the profile name and the
// pod UID, modulo 100, is below the probability. The draw is fixed per pod and profile, so repeated passes give
// the same answer and a pod does not end up selected just because it stayed pending long enough. (Koordinator's
// controller does not document how it treats probability; this is Koord's choice.)
//
// The pod validating webhook lets an unbound pod gain a qosClass or priority label, but still rejects a QoS
// class that does not fit the pod's priority, and any change of a label already set; such a patch fails, is
// logged, and the pod is tried again on the next pass.
package colocationprofile

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	podwebhook "github.com/koord-dev/koord/pkg/manager/webhook/pod"
)

// Name is the controller's name, as selected by --controllers.
const Name = "colocationprofile"

// DefaultInterval is how often a managed profile is re-applied when Options.Interval is not set.
const DefaultInterval = 30 * time.Second

// PendingPodIndex is the field index on pods that Setup registers in the manager's cache: pods that are Pending
// and have no spec.nodeName are indexed under PendingUnbound, other pods not at all.
const PendingPodIndex = "colocationprofile.pendingUnbound"

// PendingUnbound is the value PendingPodIndex gives pending, unbound pods.
const PendingUnbound = "true"

// Options configure the controller.
type Options struct {
	// Clock is the time source, used to time each pass; the real clock when nil.
	Clock clock.Clock
	// Interval is how often each managed profile is re-applied; DefaultInterval when zero or negative.
	Interval time.Duration
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=config.koordinator.sh,resources=clustercolocationprofiles,verbs=get;list;watch

// Reconciler re-applies one ClusterColocationProfile per request (the request's name is the profile's) to the
// pending, unbound pods it matches.
type Reconciler struct {
	client   client.Client
	clock    clock.Clock
	interval time.Duration
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler that reads and writes through c. The client must be able to list pods by
// PendingPodIndex.
func NewReconciler(c client.Client, opts Options) *Reconciler {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	return &Reconciler{client: c, clock: opts.Clock, interval: opts.Interval}
}

// Setup registers the pod index and the controller with mgr. The controller is triggered by changes of managed
// ClusterColocationProfiles and requeues each of them every Options.Interval.
func Setup(mgr ctrl.Manager, opts Options) error {
	r := NewReconciler(mgr.GetClient(), opts)
	// IndexField only uses the context to look up the pod informer, which does not block before the manager
	// starts; Setup has no context of its own.
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, PendingPodIndex, IndexPendingUnbound); err != nil {
		return fmt.Errorf("index pending unbound pods: %w", err)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&configv1alpha1.ClusterColocationProfile{}, builder.WithPredicates(predicate.NewPredicateFuncs(managed))).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build the %s controller: %w", Name, err)
	}
	return nil
}

// IndexPendingUnbound is the index function of PendingPodIndex.
func IndexPendingUnbound(obj client.Object) []string {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !pendingUnbound(pod) {
		return nil
	}
	return []string{PendingUnbound}
}

// pendingUnbound reports whether pod is Pending and not bound to a node.
func pendingUnbound(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodPending && pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil
}

// managed reports whether obj carries config.koordinator.sh/controller-managed=true.
func managed(obj client.Object) bool {
	return obj.GetLabels()[extension.LabelControllerManaged] == "true"
}

// Reconcile applies the profile to every pending, unbound pod it matches and requeues the profile after the
// interval. A profile that is gone or no longer managed is dropped. A pod that cannot be patched is logged and
// left for the next pass; only a failure to list pods is returned as an error.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := ctrl.LoggerFrom(ctx)
	profile := &configv1alpha1.ClusterColocationProfile{}
	if err := r.client.Get(ctx, req.NamespacedName, profile); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reading ClusterColocationProfile %q: %w", req.Name, err)
	}
	if !managed(profile) || profile.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	for what, selector := range map[string]*metav1.LabelSelector{"selector": profile.Spec.Selector, "namespaceSelector": profile.Spec.NamespaceSelector} {
		if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
			logger.Error(err, "Skipped profile with an invalid selector", "field", "spec."+what)
			return reconcile.Result{RequeueAfter: r.interval}, nil
		}
	}
	start := r.clock.Now()
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.MatchingFields{PendingPodIndex: PendingUnbound}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing pending pods: %w", err)
	}
	nsLabels := map[string]labels.Set{}
	var matched, patched, failed int
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !pendingUnbound(pod) || podwebhook.ExcludedNamespace(pod.Namespace) {
			continue
		}
		ok, err := podwebhook.MatchProfile(profile, pod.Labels, func() (labels.Set, error) { return r.namespaceLabels(ctx, nsLabels, pod.Namespace) })
		if err != nil {
			// The selectors parse (checked above), so the namespace could not be read.
			logger.Error(err, "Skipped pod whose namespace could not be read", "pod", klog.KObj(pod))
			continue
		}
		if !ok {
			continue
		}
		selected, err := podwebhook.ProbabilitySelects(profile.Spec.Probability, func() int { return Draw(profile.Name, pod) })
		if err != nil {
			logger.Error(err, "Skipped profile with an invalid probability")
			return reconcile.Result{RequeueAfter: r.interval}, nil
		}
		if !selected {
			continue
		}
		matched++
		changed, err := r.apply(ctx, pod, profile)
		switch {
		case err != nil:
			failed++
			logger.Error(err, "Could not apply the profile to a pending pod", "pod", klog.KObj(pod))
		case changed:
			patched++
			logger.V(2).Info("Applied profile to pending pod", "pod", klog.KObj(pod))
		}
	}
	logger.V(4).Info("Applied profile to pending pods", "matched", matched, "patched", patched, "failed", failed,
		"duration", r.clock.Since(start))
	return reconcile.Result{RequeueAfter: r.interval}, nil
}

// namespaceLabels returns the labels of namespace, read once per pass and remembered in cache. A namespace that
// cannot be read is remembered as an empty entry and reported as an error every time.
func (r *Reconciler) namespaceLabels(ctx context.Context, cache map[string]labels.Set, namespace string) (labels.Set, error) {
	if set, ok := cache[namespace]; ok {
		if set == nil {
			return nil, fmt.Errorf("reading namespace %q: earlier read failed", namespace)
		}
		return set, nil
	}
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		cache[namespace] = nil
		return nil, fmt.Errorf("reading namespace %q: %w", namespace, err)
	}
	set := labels.Set(ns.Labels)
	if set == nil {
		set = labels.Set{}
	}
	cache[namespace] = set
	return set, nil
}

// apply patches the pod's labels and annotations with the metadata of profile, when that changes anything. It
// reports whether the pod was patched. A pod that is gone, or changed since it was read (e.g. it was bound),
// is no error: the next pass sees its new state.
func (r *Reconciler) apply(ctx context.Context, pod *corev1.Pod, profile *configv1alpha1.ClusterColocationProfile) (bool, error) {
	updated := pod.DeepCopy()
	podwebhook.ApplyProfileMetadata(updated, profile)
	if maps.Equal(pod.Labels, updated.Labels) && maps.Equal(pod.Annotations, updated.Annotations) {
		return false, nil
	}
	// Only metadata differs between pod and updated, so the merge patch holds only labels, annotations and the
	// resourceVersion that guards it.
	patch := client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{})
	if err := r.client.Patch(ctx, updated, patch); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			ctrl.LoggerFrom(ctx).V(4).Info("Pod changed before the profile was applied; retrying next pass", "pod", klog.KObj(pod), "reason", err.Error())
			return false, nil
		}
		return false, fmt.Errorf("patching pod %s: %w", klog.KObj(pod), err)
	}
	return true, nil
}

// Draw is the number in [0, 100) that decides whether a profile with a probability below 100% applies to pod:
// the FNV-1a hash of the profile name and the pod UID, modulo 100. It is the same on every pass.
func Draw(profileName string, pod *corev1.Pod) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(profileName))
	_, _ = h.Write([]byte{'/'})
	_, _ = h.Write([]byte(pod.UID))
	return int(h.Sum32() % 100)
}
