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

// Package quotaprofile is koord-manager's quotaprofile controller, Koordinator's controller of the same name:
// each ElasticQuotaProfile (quota.koordinator.sh/v1alpha1) keeps a root ElasticQuota, spec.quotaName in the
// profile's namespace, whose min is what the nodes its selector picks can hold.
//
// For a profile, the controller:
//   - gives the profile a quota.scheduling.koordinator.sh/tree-id label when it has none (the FNV-64a hash of
//     "namespace/name", in decimal, as Koordinator's);
//   - sums the allocatable of the selected nodes, every resource, scaled by spec.resourceRatio (cpu in
//     millicores, memory in binary units, other resources in whole units, each rounded down), into the
//     quota's total-resource annotation, and the same of the nodes that are unschedulable or not Ready into
//     its unschedulable-resource annotation;
//   - sets the quota's min to the total of the resources its resource-keys annotation names (a JSON list,
//     cpu and memory when unset or malformed) and its max to 4611686018427387 (MaxInt64/2000) of each;
//   - labels the quota with quota.scheduling.koordinator.sh/profile, the profile's quotaLabels, the tree-id and
//     is-root=true, keeping the quota's other labels and annotations;
//   - creates the quota, or updates it when any of that changed.
//
// Unlike Koordinator's, which polls every 10 s, it follows node changes that matter (labels, allocatable,
// unschedulable, Ready) and edits of the quota. Deleting a profile leaves its quota, as in Koordinator: the
// quota may hold pods, and deleting it is the user's decision. Failures are Warning events on the profile
// (CreateQuotaFailed, UpdateQuotaFailed, InvalidNodeSelector) and retried with backoff.
package quotaprofile

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/koord-dev/koord/apis/extension"
	quotav1alpha1 "github.com/koord-dev/koord/apis/quota/v1alpha1"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// Name is the controller's name, as selected by --controllers.
const Name = "quotaprofile"

// QuotaMax is the max of each resource of a profile's quota, Koordinator's MaxInt64/2000.
const QuotaMax = math.MaxInt64 / 2000

// Reasons of the controller's events.
const (
	ReasonCreateQuotaFailed   = "CreateQuotaFailed"
	ReasonUpdateQuotaFailed   = "UpdateQuotaFailed"
	ReasonInvalidNodeSelector = "InvalidNodeSelector"
)

// +kubebuilder:rbac:groups=quota.koordinator.sh,resources=elasticquotaprofiles,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=scheduling.sigs.k8s.io,resources=elasticquotas,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler keeps the root quota of one ElasticQuotaProfile per request.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler that reads and writes through c and records events with recorder.
func NewReconciler(c client.Client, recorder events.EventRecorder) *Reconciler {
	return &Reconciler{client: c, recorder: recorder}
}

// Setup registers the controller with mgr: profiles, the quotas they made, and node changes that matter.
func Setup(mgr ctrl.Manager) error {
	r := NewReconciler(mgr.GetClient(), mgr.GetEventRecorder(Name))
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&quotav1alpha1.ElasticQuotaProfile{}).
		Watches(&schedv1alpha1.ElasticQuota{}, handler.EnqueueRequestsFromMapFunc(profileOfQuota)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allProfiles), builder.WithPredicates(nodeChanged)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build the %s controller: %w", Name, err)
	}
	return nil
}

// profileOfQuota maps a quota a profile made to the profile.
func profileOfQuota(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[extension.LabelQuotaProfile]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// allProfiles maps a node change to every profile: profiles are few, and a node may leave a selector as well
// as join one.
func (r *Reconciler) allProfiles(ctx context.Context, _ client.Object) []reconcile.Request {
	var profiles quotav1alpha1.ElasticQuotaProfileList
	if err := r.client.List(ctx, &profiles); err != nil {
		klog.FromContext(ctx).Error(err, "Could not list ElasticQuotaProfiles for a node change")
		return nil
	}
	requests := make([]reconcile.Request, 0, len(profiles.Items))
	for _, p := range profiles.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
	}
	return requests
}

// nodeChanged passes node events that can change a profile's quota: not the heartbeats.
var nodeChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldNode, ok1 := e.ObjectOld.(*corev1.Node)
		newNode, ok2 := e.ObjectNew.(*corev1.Node)
		if !ok1 || !ok2 {
			return true
		}
		return !maps.Equal(oldNode.Labels, newNode.Labels) ||
			!equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable) ||
			oldNode.Spec.Unschedulable != newNode.Spec.Unschedulable ||
			ready(oldNode) != ready(newNode)
	},
}

// Reconcile keeps the quota of the profile req names.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := klog.FromContext(ctx).WithValues("elasticQuotaProfile", req.NamespacedName)
	ctx = klog.NewContext(ctx, logger)
	profile := &quotav1alpha1.ElasticQuotaProfile{}
	if err := r.client.Get(ctx, req.NamespacedName, profile); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if profile.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	treeID, err := r.ensureTreeID(ctx, profile)
	if err != nil {
		return reconcile.Result{}, err
	}
	selector, err := metav1.LabelSelectorAsSelector(profile.Spec.NodeSelector)
	if err != nil {
		r.recorder.Eventf(profile, nil, corev1.EventTypeWarning, ReasonInvalidNodeSelector, "Reconcile", "spec.nodeSelector: %v", err)
		// Only an edit of the profile fixes it, and that triggers a reconcile.
		return reconcile.Result{}, nil
	}
	var nodes corev1.NodeList
	if err := r.client.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list nodes: %w", err)
	}
	want, err := desiredQuota(profile, treeID, nodes.Items, logger)
	if err != nil {
		return reconcile.Result{}, err
	}

	current := &schedv1alpha1.ElasticQuota{}
	err = r.client.Get(ctx, client.ObjectKey{Namespace: profile.Namespace, Name: profile.Spec.QuotaName}, current)
	switch {
	case apierrors.IsNotFound(err):
		quota := &schedv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Namespace: profile.Namespace, Name: profile.Spec.QuotaName}}
		apply(quota, want)
		if err := r.client.Create(ctx, quota); err != nil {
			r.recorder.Eventf(profile, nil, corev1.EventTypeWarning, ReasonCreateQuotaFailed, "Reconcile", "create ElasticQuota %s: %v", quota.Name, err)
			return reconcile.Result{}, fmt.Errorf("create ElasticQuota %s: %w", quota.Name, err)
		}
		logger.V(2).Info("Created the profile's ElasticQuota", "elasticQuota", klog.KObj(quota), "min", quota.Spec.Min)
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("get ElasticQuota %s: %w", profile.Spec.QuotaName, err)
	}
	updated := current.DeepCopy()
	apply(updated, want)
	if equality.Semantic.DeepEqual(current, updated) {
		return reconcile.Result{}, nil
	}
	if err := r.client.Update(ctx, updated); err != nil {
		r.recorder.Eventf(profile, nil, corev1.EventTypeWarning, ReasonUpdateQuotaFailed, "Reconcile", "update ElasticQuota %s: %v", updated.Name, err)
		return reconcile.Result{}, fmt.Errorf("update ElasticQuota %s: %w", updated.Name, err)
	}
	logger.V(2).Info("Updated the profile's ElasticQuota", "elasticQuota", klog.KObj(updated), "min", updated.Spec.Min)
	return reconcile.Result{}, nil
}

// ensureTreeID returns the profile's tree ID, giving the profile one first when it has none.
func (r *Reconciler) ensureTreeID(ctx context.Context, profile *quotav1alpha1.ElasticQuotaProfile) (string, error) {
	if id := profile.Labels[extension.LabelQuotaTreeID]; id != "" {
		return id, nil
	}
	id := TreeID(profile.Namespace, profile.Name)
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, extension.LabelQuotaTreeID, id)
	if err := r.client.Patch(ctx, profile, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", fmt.Errorf("label the profile with its tree ID: %w", err)
	}
	return id, nil
}

// TreeID is the tree ID of a profile without one: the FNV-64a hash of "namespace/name", in decimal.
func TreeID(namespace, name string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(namespace + "/" + name))
	return strconv.FormatUint(h.Sum64(), 10)
}

// quota is what the controller owns of a profile's quota.
type quota struct {
	labels      map[string]string
	annotations map[string]string
	min, max    corev1.ResourceList
}

// desiredQuota computes the profile's quota from nodes, the nodes its selector picks.
func desiredQuota(profile *quotav1alpha1.ElasticQuotaProfile, treeID string, nodes []corev1.Node, logger klog.Logger) (quota, error) {
	ratio := 1.0
	if r := profile.Spec.ResourceRatio; r != nil {
		// The CRD checks the value; a value from before that check is used only when it is in range.
		if v, err := strconv.ParseFloat(*r, 64); err == nil && v > 0 && v <= 1 {
			ratio = v
		}
	}
	total, unschedulable := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range nodes {
		n := &nodes[i]
		add(total, n.Status.Allocatable)
		if n.Spec.Unschedulable || !ready(n) {
			add(unschedulable, n.Status.Allocatable)
		}
	}
	total, unschedulable = scale(total, ratio), scale(unschedulable, ratio)

	keys := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
	if v := profile.Annotations[extension.AnnotationResourceKeys]; v != "" {
		var named []corev1.ResourceName
		if err := json.Unmarshal([]byte(v), &named); err != nil || len(named) == 0 {
			logger.Info("Ignored a malformed resource-keys annotation; the quota has cpu and memory", "annotation", extension.AnnotationResourceKeys, "value", v)
		} else {
			keys = named
		}
	}
	q := quota{min: corev1.ResourceList{}, max: corev1.ResourceList{}}
	for _, k := range keys {
		v, ok := total[k]
		if !ok {
			v = *resource.NewQuantity(0, resource.DecimalSI)
		}
		q.min[k] = v
		q.max[k] = *resource.NewQuantity(QuotaMax, resource.DecimalSI)
	}
	totalJSON, err := json.Marshal(total)
	if err != nil {
		return quota{}, fmt.Errorf("encode the total resource: %w", err)
	}
	unschedulableJSON, err := json.Marshal(unschedulable)
	if err != nil {
		return quota{}, fmt.Errorf("encode the unschedulable resource: %w", err)
	}
	q.labels = map[string]string{extension.LabelQuotaProfile: profile.Name}
	maps.Copy(q.labels, profile.Spec.QuotaLabels)
	q.labels[extension.LabelQuotaTreeID] = treeID
	q.labels[extension.LabelQuotaIsRoot] = "true"
	q.annotations = map[string]string{
		extension.AnnotationTotalResource:         string(totalJSON),
		extension.AnnotationUnschedulableResource: string(unschedulableJSON),
	}
	return q, nil
}

// apply sets what the controller owns of eq to q, keeping eq's other labels and annotations.
func apply(eq *schedv1alpha1.ElasticQuota, q quota) {
	if eq.Labels == nil {
		eq.Labels = map[string]string{}
	}
	maps.Copy(eq.Labels, q.labels)
	if eq.Annotations == nil {
		eq.Annotations = map[string]string{}
	}
	maps.Copy(eq.Annotations, q.annotations)
	eq.Spec.Min = q.min
	eq.Spec.Max = q.max
}

// add adds b to a.
func add(a, b corev1.ResourceList) {
	for name, q := range b {
		sum := a[name]
		sum.Add(q)
		a[name] = sum
	}
}

// scale returns list × ratio, each resource rounded down: cpu to millicores, memory in binary units, others
// whole.
func scale(list corev1.ResourceList, ratio float64) corev1.ResourceList {
	out := make(corev1.ResourceList, len(list))
	for name, q := range list {
		switch name {
		case corev1.ResourceCPU:
			out[name] = *resource.NewMilliQuantity(int64(float64(q.MilliValue())*ratio), resource.DecimalSI)
		case corev1.ResourceMemory:
			out[name] = *resource.NewQuantity(int64(float64(q.Value())*ratio), resource.BinarySI)
		default:
			out[name] = *resource.NewQuantity(int64(float64(q.Value())*ratio), resource.DecimalSI)
		}
	}
	return out
}

// ready reports whether node's Ready condition is True.
func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
