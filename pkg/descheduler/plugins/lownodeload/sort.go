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

package lownodeload

import (
	"cmp"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

func sortedResources[V any](m map[corev1.ResourceName]V) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// nodeScore rates a node's usage as Koordinator does: per resource, usage per mille of allocatable (capped at
// 1000), averaged with the weights.
func nodeScore(usage, allocatable quantity.Amounts, weights map[corev1.ResourceName]int64) int64 {
	var score, sum int64
	for _, r := range usage.Names() {
		w := weights[r]
		a := allocatable[r]
		var s int64
		if a > 0 {
			s = min(usage[r], a) * 1000 / a
		}
		score += s * w
		sum += w
	}
	if sum == 0 {
		return 0
	}
	return score / sum
}

// sortNodesByUsage puts the hottest nodes first.
func sortNodesByUsage(nodes []nodeInfo, weights map[corev1.ResourceName]int64, prod bool) {
	score := func(n nodeInfo) int64 {
		if prod {
			return nodeScore(n.prodUsage, n.allocatable, weights)
		}
		return nodeScore(n.usage, n.allocatable, weights)
	}
	slices.SortStableFunc(nodes, func(a, b nodeInfo) int { return cmp.Compare(score(b), score(a)) })
}

var priorityClassOrder = map[extension.PriorityClass]int{
	extension.PriorityNone: 5, extension.PriorityProd: 4, extension.PriorityMid: 3, extension.PriorityBatch: 2, extension.PriorityFree: 1,
}

var qosClassOrder = map[extension.QoSClass]int{
	extension.QoSNone: 5, extension.QoSSystem: 4, extension.QoSLSE: 4, extension.QoSLSR: 3, extension.QoSLS: 2, extension.QoSBE: 1,
}

var kubeQoSOrder = map[corev1.PodQOSClass]int{
	corev1.PodQOSGuaranteed: 3, corev1.PodQOSBurstable: 2, corev1.PodQOSBestEffort: 1,
}

// podScore rates how much of the overage a pod's usage would remove: per resource, usage/excess when below
// it, 1 + excess/usage at or above it (a pod that alone removes the excess scores highest, the smallest such
// pod first), averaged with the weights. Koordinator's rating.
func podScore(usage, excess quantity.Amounts, weights map[corev1.ResourceName]int64) float64 {
	var score float64
	var sum int64
	for _, r := range excess.Names() {
		w := weights[r]
		var s float64
		if e := excess[r]; e > 0 {
			ratio := float64(usage[r]) / float64(e)
			if ratio >= 1 {
				s = 1/ratio + 1
			} else {
				s = ratio
			}
		}
		score += s * float64(w)
		sum += w
	}
	if sum == 0 {
		return 0
	}
	return score / float64(sum)
}

// sortPods orders a hot node's removable pods as Koordinator does, the first to move first: lower Koordinator
// priority class, lower priority, lower Kubernetes QoS, lower Koordinator QoS, lower deletion cost, lower
// eviction cost, then the pods whose usage removes the excess best (pods without usage last), then the
// youngest, then by name.
func sortPods(pods []*corev1.Pod, podUsage map[types.NamespacedName]quantity.Amounts, excess quantity.Amounts, weights map[corev1.ResourceName]int64) {
	scores := make(map[*corev1.Pod]float64, len(pods))
	known := make(map[*corev1.Pod]bool, len(pods))
	for _, p := range pods {
		u, ok := podUsage[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]
		known[p] = ok
		if ok {
			scores[p] = podScore(u, excess, weights)
		}
	}
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		for _, c := range []int{
			cmp.Compare(priorityClassOrder[extension.GetPodPriorityClassWithDefault(a)], priorityClassOrder[extension.GetPodPriorityClassWithDefault(b)]),
			cmp.Compare(corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)),
			cmp.Compare(kubeQoSOrder[qos.GetPodQOS(a)], kubeQoSOrder[qos.GetPodQOS(b)]),
			cmp.Compare(qosClassOrder[extension.GetPodQoSClassWithDefault(a)], qosClassOrder[extension.GetPodQoSClassWithDefault(b)]),
			cmp.Compare(deletionCost(a), deletionCost(b)),
			cmp.Compare(evictionCost(a), evictionCost(b)),
		} {
			if c != 0 {
				return c
			}
		}
		if known[a] != known[b] {
			if known[a] {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			if b.CreationTimestamp.Before(&a.CreationTimestamp) {
				return -1
			}
			return 1
		}
		// Not Koordinator's: a fixed order for pods alike in everything, so that rounds are reproducible.
		return cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
}

// deletionCost reads controller.kubernetes.io/pod-deletion-cost (0 when unset or not a number).
func deletionCost(p *corev1.Pod) int {
	return intAnnotation(p, corev1.PodDeletionCost)
}

// evictionCost reads Koordinator's scheduling.koordinator.sh/eviction-cost (0 when unset or not a number).
func evictionCost(p *corev1.Pod) int {
	return intAnnotation(p, extension.AnnotationEvictionCost)
}

func intAnnotation(p *corev1.Pod, key string) int {
	v, ok := p.Annotations[key]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int(n)
}
