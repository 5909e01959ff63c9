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

package qosmanager

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/featuregate"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// AllocatableThresholds configure an allocatable eviction (CPUAllocatableEvict, MemoryAllocatableEvict): the
// requests of the mid and batch tiers, in percent of the node's allocatable of the tier, above which pods are
// evicted and down to which, and the highest priority evicted.
type AllocatableThresholds struct {
	// Feature is the eviction's gate.
	Feature featuregate.Feature
	// Threshold is the percent of allocatable the tier's requests must pass.
	Threshold int64
	// Lower is the percent of allocatable the evictions bring the tier's requests down to.
	Lower int64
	// MaxPriority is the highest pod priority that counts and may be evicted.
	MaxPriority int32
}

// NewAllocatableThresholds checks an allocatable eviction's fields of resourceUsedThresholdWithBE as Koordinator
// does. It returns nil, nil when the threshold is unset (the eviction is not configured); otherwise the lower
// percent and the priority must be set too, the threshold at least 0, lower below threshold, and the priority
// at most koord-mid's highest (koord-prod pods are never evicted for allocatable). The error names the field.
func NewAllocatableThresholds(feature featuregate.Feature, threshold, lower *int64, priority *int32) (*AllocatableThresholds, error) {
	prefix := "memory"
	if feature == features.CPUAllocatableEvict {
		prefix = "cpu"
	}
	switch {
	case threshold == nil:
		return nil, nil
	case *threshold < 0:
		return nil, fmt.Errorf("%s: %sAllocatableEvictThresholdPercent %d is negative", feature, prefix, *threshold)
	case lower == nil:
		return nil, fmt.Errorf("%s needs resourceUsedThresholdWithBE.%sAllocatableEvictLowerPercent", feature, prefix)
	case *lower >= *threshold:
		return nil, fmt.Errorf("%s: %sAllocatableEvictLowerPercent %d is not below the threshold %d", feature, prefix, *lower, *threshold)
	case priority == nil:
		return nil, fmt.Errorf("%s needs resourceUsedThresholdWithBE.allocatableEvictPriorityThreshold", feature)
	case *priority > extension.PriorityMidValueMax:
		return nil, fmt.Errorf("%s: allocatableEvictPriorityThreshold %d is above %d: koord-prod pods are never evicted for allocatable",
			feature, *priority, extension.PriorityMidValueMax)
	}
	return &AllocatableThresholds{Feature: feature, Threshold: *threshold, Lower: *lower, MaxPriority: *priority}, nil
}

// AllocatableTasks returns the tasks of an allocatable eviction of base (cpu or memory), one for each of the
// batch and mid tiers (batch first) whose pods at or below t.MaxPriority request more than t.Threshold percent
// of the node's allocatable of the tier's resource (batch-cpu, mid-memory, ...; all of it when the node offers
// none): each releases the requests above t.Lower percent of the allocatable, from the tier's pods that
// NodeLevelFilter lets it evict, in SortVictims order by request. CPU amounts are milli-cores, memory bytes.
func AllocatableTasks(ctx context.Context, st *State, base corev1.ResourceName, t *AllocatableThresholds, reason string, reporter *AnnotationReporter) []EvictionTask {
	if t == nil {
		return nil
	}
	filter := NodeLevelFilter{Feature: string(t.Feature), MaxPriority: t.MaxPriority, Reporter: reporter}
	var tasks []EvictionTask
	for _, class := range []extension.PriorityClass{extension.PriorityBatch, extension.PriorityMid} {
		name := extension.TranslateResourceNameByPriorityClass(class, base)
		requests := map[types.UID]float64{}
		requested := int64(0)
		for _, pod := range st.Pods {
			if PodPriority(pod) > t.MaxPriority || extension.GetPodPriorityClassWithDefault(pod) != class {
				continue
			}
			r := PodRequest(pod, name)
			requests[pod.UID] = float64(r)
			requested += r
		}
		if requested <= 0 {
			continue
		}
		allocatable := quantity.ValueIn(st.Node.Status.Allocatable, name)
		var need int64
		switch {
		case allocatable <= 0:
			need = requested
		case requested*100 > allocatable*t.Threshold:
			need = requested - allocatable*t.Lower/100
		default:
			continue
		}
		var victims []Victim
		var pending []*corev1.Pod
		for _, pod := range st.Pods {
			r, ok := requests[pod.UID]
			if !ok {
				continue
			}
			v, ok := filter.Victim(ctx, pod, r)
			switch {
			case !ok:
			case pod.DeletionTimestamp != nil:
				pending = append(pending, pod)
			default:
				victims = append(victims, v)
			}
		}
		SortVictims(victims)
		format := func(v float64) string { return FormatBytes(int64(v)) }
		if base == corev1.ResourceCPU {
			format = func(v float64) string { return FormatCores(v / 1000) }
		}
		percent := "no allocatable"
		if allocatable > 0 {
			percent = FormatPercent(float64(requested)*100/float64(allocatable)) + " of allocatable " + format(float64(allocatable))
		}
		tasks = append(tasks, EvictionTask{
			Feature: filter.Feature, Reason: reason, Need: float64(need), Candidates: VictimPods(victims), Pending: pending,
			Release: func(p *corev1.Pod) float64 { return requests[p.UID] },
			Message: func(p *corev1.Pod, left float64) string {
				return fmt.Sprintf("%s requests %s (%s) > threshold %d%%, releasing %s to reach %d%%; pod request %s, priority %d <= %d",
					name, format(float64(requested)), percent, t.Threshold, format(left), t.Lower, format(requests[p.UID]),
					PodPriority(p), t.MaxPriority)
			},
		})
	}
	return tasks
}

// PodRequest returns the pod's request of resource name as the scheduler counts it (containers, sidecars,
// init containers, overhead), names normalised (the deprecated koordinator.sh/batch-cpu counts as
// kubernetes.io/batch-cpu); cpu in milli-cores, other resources in their base unit.
func PodRequest(pod *corev1.Pod, name corev1.ResourceName) int64 {
	var out int64
	for n, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if extension.NormalizeResourceName(n) == name {
			out += quantity.Value(name, q)
		}
	}
	return out
}
