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
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// annotationDeletionCost is the ReplicaSet controller's pod-deletion-cost annotation.
const annotationDeletionCost = "controller.kubernetes.io/pod-deletion-cost"

// candidate is a Pending job waiting for arbitration, with its pod (nil when the pod is gone).
type candidate struct {
	job *schedv1alpha1.PodMigrationJob
	pod *corev1.Pod
}

// sortCandidates orders the waiting jobs as Koordinator's arbitrator does, by successive stable sorts, the
// last one deciding first:
//  1. newest job first;
//  2. by pod, least important first: Koordinator priority class (free, batch, mid, prod, none), priority, Kubernetes
//     QoS (BestEffort, Burstable, Guaranteed), Koordinator QoS (BE, LS, LSR, LSE/SYSTEM, none), deletion cost,
//     eviction cost, then the newest pod; jobs whose pod is gone come first;
//  3. jobs of one batch Job together, where its first job is;
//  4. jobs of the batch Jobs with the most migrations in progress (migratingOfJob) first.
func sortCandidates(cs []candidate, migratingOfJob map[types.UID]int) {
	slices.SortStableFunc(cs, func(a, b candidate) int {
		return b.job.CreationTimestamp.Compare(a.job.CreationTimestamp.Time)
	})
	slices.SortStableFunc(cs, func(a, b candidate) int {
		switch {
		case a.pod == nil && b.pod == nil:
			return 0
		case a.pod == nil:
			return -1
		case b.pod == nil:
			return 1
		}
		return comparePods(a.pod, b.pod)
	})
	first := map[types.UID]int{}
	rank := make([]int, len(cs))
	for i, c := range cs {
		rank[i] = i
		if owner := batchJobOf(c.pod); owner != "" {
			if r, ok := first[owner]; ok {
				rank[i] = r
			} else {
				first[owner] = i
			}
		}
	}
	sortStableBy(cs, rank, func(a, b int) int { return cmp.Compare(a, b) })
	migrating := make([]int, len(cs))
	for i, c := range cs {
		migrating[i] = migratingOfJob[batchJobOf(c.pod)]
	}
	sortStableBy(cs, migrating, func(a, b int) int { return cmp.Compare(b, a) })
}

// sortStableBy sorts cs stably by keys (keys[i] belongs to cs[i]) with compare.
func sortStableBy(cs []candidate, keys []int, compare func(a, b int) int) {
	type keyed struct {
		c candidate
		k int
	}
	ks := make([]keyed, len(cs))
	for i := range cs {
		ks[i] = keyed{cs[i], keys[i]}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return compare(a.k, b.k) })
	for i := range ks {
		cs[i] = ks[i].c
	}
}

// batchJobOf returns the UID of the batch Job controlling pod, or "".
func batchJobOf(pod *corev1.Pod) types.UID {
	if pod == nil {
		return ""
	}
	if o := metav1.GetControllerOf(pod); o != nil && o.Kind == "Job" {
		return o.UID
	}
	return ""
}

var koordPriorityOrder = map[extension.PriorityClass]int{
	extension.PriorityNone: 5, extension.PriorityProd: 4, extension.PriorityMid: 3, extension.PriorityBatch: 2, extension.PriorityFree: 1,
}

var koordQoSOrder = map[extension.QoSClass]int{
	extension.QoSNone: 5, extension.QoSSystem: 4, extension.QoSLSE: 4, extension.QoSLSR: 3, extension.QoSLS: 2, extension.QoSBE: 1,
}

var kubeQoSOrder = map[corev1.PodQOSClass]int{
	corev1.PodQOSGuaranteed: 3, corev1.PodQOSBurstable: 2, corev1.PodQOSBestEffort: 1,
}

// comparePods orders pods least important first, as Koordinator's PodSorter.
func comparePods(a, b *corev1.Pod) int {
	if c := cmp.Compare(koordPriorityOrder[extension.GetPodPriorityClassWithDefault(a)], koordPriorityOrder[extension.GetPodPriorityClassWithDefault(b)]); c != 0 {
		return c
	}
	if c := cmp.Compare(corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)); c != 0 {
		return c
	}
	if c := cmp.Compare(kubeQoSOrder[extension.GetKubeQoSClass(a)], kubeQoSOrder[extension.GetKubeQoSClass(b)]); c != 0 {
		return c
	}
	if c := cmp.Compare(koordQoSOrder[extension.GetPodQoSClassWithDefault(a)], koordQoSOrder[extension.GetPodQoSClassWithDefault(b)]); c != 0 {
		return c
	}
	if c := cmp.Compare(annotationInt32(a, annotationDeletionCost), annotationInt32(b, annotationDeletionCost)); c != 0 {
		return c
	}
	if c := cmp.Compare(evictionCost(a), evictionCost(b)); c != 0 {
		return c
	}
	// Newer pods first: an older pod compares greater.
	return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
}
