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

package pod

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	quotav1alpha1 "github.com/koord-dev/koord/apis/quota/v1alpha1"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// WithMultiQuotaTree turns on Koordinator's MultiQuotaTree behaviour of the handler: a pod charged to a quota
// of a quota tree (label quota.scheduling.koordinator.sh/tree-id) gets the node selector of the tree's
// ElasticQuotaProfile as a required node affinity, so that it runs on the nodes whose resources its tree
// shares.
func WithMultiQuotaTree() Option {
	return func(m *mutator) { m.multiQuotaTree = true }
}

// addQuotaTreeAffinity adds to pod the node selector of the ElasticQuotaProfile of its quota's tree: the quota
// its quota.scheduling.koordinator.sh/name label names, else the quota named like its namespace. It does
// nothing for a pod whose quota is in no tree, or whose tree has no profile or a profile without a node
// selector, and reports whether it changed the pod.
func (m *mutator) addQuotaTreeAffinity(ctx context.Context, namespace string, pod *corev1.Pod) (bool, error) {
	name := extension.GetQuotaName(pod)
	if name == "" {
		name = namespace
	}
	quotas := &schedulingsigsv1alpha1.ElasticQuotaList{}
	if err := m.reader.List(ctx, quotas, client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("listing ElasticQuotas: %w", err)
	}
	var treeID string
	for i := range quotas.Items {
		if q := &quotas.Items[i]; q.Name == name {
			treeID = extension.GetQuotaTreeID(q)
			break
		}
	}
	if treeID == "" {
		return false, nil
	}
	profiles := &quotav1alpha1.ElasticQuotaProfileList{}
	if err := m.reader.List(ctx, profiles, client.MatchingLabels{extension.LabelQuotaTreeID: treeID}, client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("listing ElasticQuotaProfiles of quota tree %s: %w", treeID, err)
	}
	if len(profiles.Items) == 0 || profiles.Items[0].Spec.NodeSelector == nil {
		return false, nil
	}
	reqs := selectorRequirements(profiles.Items[0].Spec.NodeSelector)
	if len(reqs) == 0 {
		return false, nil
	}
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := pod.Spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		// No term yet: one with the requirements.
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}
		return true, nil
	}
	// Terms are ORed: every term gets the requirements it lacks, so that each selects only the tree's nodes
	// (and a pod mutated before is left as it is).
	changed := false
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		for _, r := range reqs {
			if !slices.ContainsFunc(terms[i].MatchExpressions, func(e corev1.NodeSelectorRequirement) bool { return equality.Semantic.DeepEqual(e, r) }) {
				terms[i].MatchExpressions = append(terms[i].MatchExpressions, r)
				changed = true
			}
		}
	}
	return changed, nil
}

// selectorRequirements turns a label selector into node selector requirements, match labels first (in key
// order) then the expressions.
func selectorRequirements(sel *metav1.LabelSelector) []corev1.NodeSelectorRequirement {
	reqs := make([]corev1.NodeSelectorRequirement, 0, len(sel.MatchLabels)+len(sel.MatchExpressions))
	for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{sel.MatchLabels[k]}})
	}
	for _, e := range sel.MatchExpressions {
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: e.Key, Operator: corev1.NodeSelectorOperator(e.Operator), Values: e.Values})
	}
	return reqs
}
