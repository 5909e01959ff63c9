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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/apis/extension"
)

// Evictor evicts pods; *evictor.Evictor satisfies it.
type Evictor interface {
	// Evict evicts pod for reason, with message on its Event, and reports whether it did.
	Evict(ctx context.Context, pod *corev1.Pod, reason, message string) (bool, error)
}

// EvictionTask is one reason to evict pods in a round, as Koordinator's evict tasks: the amount to release and
// the pods that may release it, in the order they are chosen. The amount is in the unit of Release: bytes of
// memory usage, cores of usage, cores or bytes of requests.
type EvictionTask struct {
	// Feature is the gate of the task, e.g. MemoryEvict; also the name koordinator.sh/eviction-policy lists.
	Feature string
	// Reason is the reason of the task's evictions: the metric label and the reason in the Event's message.
	Reason string
	// Need is the amount to release.
	Need float64
	// Candidates are the pods the task may evict, in the order it evicts them.
	Candidates []*corev1.Pod
	// Pending are pods that count as released already: being deleted, or evicted in an earlier round.
	Pending []*corev1.Pod
	// Release returns what evicting pod releases towards Need. A candidate that releases nothing is not
	// evicted.
	Release func(pod *corev1.Pod) float64
	// Message returns the message of the Event on pod, evicted while left is still to be released.
	Message func(pod *corev1.Pod, left float64) string
}

// EvictionResult is what a task of RunEvictions did.
type EvictionResult struct {
	// Feature is the task's Feature.
	Feature string
	// Need is the task's Need.
	Need float64
	// Released is what its pending pods, the pods the round evicted before it and the pods it evicted release.
	Released float64
	// Evicted counts the pods the task evicted.
	Evicted int
	// Candidates counts its candidates.
	Candidates int
}

// RunEvictions carries out the tasks of a round in order. Each task first counts as released its pending pods
// and the pods the tasks before it evicted (by its own Release), then evicts its candidates in order until the
// released amount reaches its Need; a pod is evicted at most once a round. An eviction error does not stop the
// round; the errors are returned joined.
func RunEvictions(ctx context.Context, ev Evictor, tasks []EvictionTask) ([]EvictionResult, error) {
	evicted := map[types.UID]*corev1.Pod{}
	var order []types.UID
	results := make([]EvictionResult, 0, len(tasks))
	var errs []error
	for _, task := range tasks {
		res := EvictionResult{Feature: task.Feature, Need: task.Need, Candidates: len(task.Candidates)}
		counted := map[types.UID]bool{}
		for _, p := range task.Pending {
			if !counted[p.UID] {
				counted[p.UID] = true
				res.Released += task.Release(p)
			}
		}
		for _, uid := range order {
			if !counted[uid] {
				counted[uid] = true
				res.Released += task.Release(evicted[uid])
			}
		}
		for _, pod := range task.Candidates {
			if res.Released >= task.Need {
				break
			}
			amount := task.Release(pod)
			if counted[pod.UID] || amount <= 0 {
				continue
			}
			ok, err := ev.Evict(ctx, pod, task.Reason, task.Message(pod, task.Need-res.Released))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				counted[pod.UID] = true
				evicted[pod.UID] = pod
				order = append(order, pod.UID)
				res.Released += amount
				res.Evicted++
			}
		}
		klog.FromContext(ctx).V(2).Info("Ran an eviction task", "feature", task.Feature, "reason", task.Reason, "need", task.Need,
			"released", res.Released, "evicted", res.Evicted, "candidates", res.Candidates)
		results = append(results, res)
	}
	return results, errors.Join(errs...)
}

// EvictionPolicyAllows reports whether the pod's koordinator.sh/eviction-policy annotation lets feature evict
// it, as Koordinator reads it: without the annotation every feature may; with it, only the features its JSON
// list names. A value that is not a JSON list of strings allows none and is returned as an error.
func EvictionPolicyAllows(pod *corev1.Pod, feature string) (bool, error) {
	raw, ok := pod.Annotations[extension.AnnotationPodEvictPolicy]
	if !ok {
		return true, nil
	}
	var policies []string
	if err := json.Unmarshal([]byte(raw), &policies); err != nil {
		return false, fmt.Errorf("%q is not a JSON list of eviction features (e.g. [\"BEMemoryEvict\"]): %w", raw, err)
	}
	return slices.Contains(policies, feature), nil
}

// PodPriority returns the pod's priority as Koordinator's evictions read it: spec.priority when set and not 0,
// else the default priority of its priority class.
func PodPriority(pod *corev1.Pod) int32 {
	if p := pod.Spec.Priority; p != nil && *p != extension.PriorityNoneValueDefault {
		return *p
	}
	return extension.GetPodPriorityClassWithDefault(pod).DefaultValue()
}

// Victim is a pod a node-level eviction (MemoryEvict, CPUEvict and their allocatable variants) may choose,
// with the keys it is sorted by.
type Victim struct {
	// Pod is the pod.
	Pod *corev1.Pod
	// EvictionPriority is its koordinator.sh/eviction-priority, 0 when absent or malformed.
	EvictionPriority int32
	// Priority is its PodPriority.
	Priority int32
	// SubPriority is its koordinator.sh/priority label, Priority when absent or malformed.
	SubPriority int32
	// Amount is its usage or request of the resource the task releases; larger is chosen first.
	Amount float64
}

// SortVictims sorts victims in Koordinator's order of node-level evictions: eviction priority ascending,
// then priority ascending, then sub-priority ascending, then amount descending, then by namespace and name.
func SortVictims(v []Victim) {
	slices.SortStableFunc(v, func(a, b Victim) int {
		return cmp.Or(
			cmp.Compare(a.EvictionPriority, b.EvictionPriority),
			cmp.Compare(a.Priority, b.Priority),
			cmp.Compare(a.SubPriority, b.SubPriority),
			cmp.Compare(b.Amount, a.Amount),
			strings.Compare(a.Pod.Namespace, b.Pod.Namespace),
			strings.Compare(a.Pod.Name, b.Pod.Name),
		)
	})
}

// VictimPods returns the pods of v in order.
func VictimPods(v []Victim) []*corev1.Pod {
	out := make([]*corev1.Pod, len(v))
	for i := range v {
		out[i] = v[i].Pod
	}
	return out
}

// NodeLevelFilter selects the pods a node-level eviction of feature may evict, as Koordinator's: pods labelled
// koordinator.sh/eviction-enabled=true, with a PodPriority at most maxPriority, whose eviction policy allows
// feature. Malformed annotations are reported through reporter.
type NodeLevelFilter struct {
	// Feature is the eviction's gate name.
	Feature string
	// MaxPriority is the highest priority it may evict.
	MaxPriority int32
	// Reporter reports malformed annotations; nil reports nothing.
	Reporter *AnnotationReporter
}

// Victim returns pod as a victim with amount when the filter lets it be evicted.
func (f NodeLevelFilter) Victim(ctx context.Context, pod *corev1.Pod, amount float64) (Victim, bool) {
	if pod.Labels[extension.LabelPodEvictEnabled] != "true" {
		return Victim{}, false
	}
	priority := PodPriority(pod)
	if priority > f.MaxPriority {
		return Victim{}, false
	}
	if !PolicyAllows(ctx, f.Reporter, pod, f.Feature) {
		return Victim{}, false
	}
	v := Victim{Pod: pod, Priority: priority, SubPriority: priority, Amount: amount}
	v.EvictionPriority = EvictionPriorityOf(ctx, f.Reporter, pod)
	if pod.Labels[extension.LabelPodPriority] != "" {
		if sub, err := extension.GetPodSubPriority(pod.Labels); err == nil {
			v.SubPriority = sub
		}
	}
	return v, true
}

// PolicyAllows is EvictionPolicyAllows that reports a malformed annotation through reporter (when not nil)
// and then allows nothing.
func PolicyAllows(ctx context.Context, reporter *AnnotationReporter, pod *corev1.Pod, feature string) bool {
	ok, err := EvictionPolicyAllows(pod, feature)
	if err != nil && reporter != nil {
		reporter.Report(ctx, pod, extension.AnnotationPodEvictPolicy, err)
	}
	return ok
}

// EvictionPriorityOf returns the pod's koordinator.sh/eviction-priority, 0 when absent; a malformed value is
// reported through reporter (when not nil) and counts as 0, as in Koordinator.
func EvictionPriorityOf(ctx context.Context, reporter *AnnotationReporter, pod *corev1.Pod) int32 {
	p, err := EvictionPriority(pod)
	if err != nil && reporter != nil {
		reporter.Report(ctx, pod, extension.AnnotationPodEvictionPriority, err)
	}
	return p
}
