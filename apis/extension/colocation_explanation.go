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

package extension

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationColocationExplanation is written by koord-manager on every node it computes batch and mid resources
// for: a ColocationExplanation (JSON) of the values it last wrote into the node status and the inputs they came
// from, so that "why is batch-cpu this value" has an answer. It is Koord's own key; Koordinator has no
// counterpart. Users should not edit it.
const AnnotationColocationExplanation = "koord.dev/colocation-resources"

// ColocationExplanation is the value of AnnotationColocationExplanation, for example
//
//	{"updateTime":"2026-01-02T03:04:05Z","policy":{"cpu":"usage","memory":"usage"},
//	 "cpu":{"capacity":"100","reclaimPercent":65,"safetyMargin":"35","nodeReserved":"0","systemUsed":"7",
//	        "hpRequest":"40","hpUsed":"33","hpMaxUsedReq":"42","batch":"25","mid":"0"},
//	 "memory":{...}}
//
// Every amount is a resource quantity in the unit of the resource itself: cores for cpu and bytes for memory.
// The node's batch-cpu and mid-cpu count milli-cores, so a cpu "batch" of "25" is a batch-cpu of 25000.
type ColocationExplanation struct {
	// UpdateTime is when koord-manager last wrote the node's batch and mid resources. It also throttles the
	// next write, so it is kept across manager restarts.
	UpdateTime metav1.Time `json:"updateTime"`
	// Policy is how high-priority pods were counted.
	Policy ColocationPolicy `json:"policy"`
	// CPU explains batch-cpu and mid-cpu.
	CPU ColocationResourceExplanation `json:"cpu"`
	// Memory explains batch-memory and mid-memory.
	Memory ColocationResourceExplanation `json:"memory"`
	// Degraded, when set, is why the batch and mid resources were removed from the node: colocation is off,
	// or the node's NodeMetric is missing or stale.
	Degraded string `json:"degraded,omitempty"`
	// MidDegraded, when set, is why only the mid resources were removed, e.g. the NodeMetric has no
	// prodReclaimableMetric.
	MidDegraded string `json:"midDegraded,omitempty"`
	// Warnings are problems with the node's inputs that were worked around, e.g. an unreadable
	// node.koordinator.sh/reservation annotation that was ignored.
	Warnings []string `json:"warnings,omitempty"`
}

// ColocationPolicy names the calculate policies in effect: usage, request or maxUsageRequest.
type ColocationPolicy struct {
	// CPU is the policy used for batch-cpu.
	CPU string `json:"cpu,omitempty"`
	// Memory is the policy used for batch-memory.
	Memory string `json:"memory,omitempty"`
	// CPUConfigured, when set, is the policy configured for CPU that CPU does not support (request);
	// CPU then falls back to usage.
	CPUConfigured string `json:"cpuConfigured,omitempty"`
}

// ColocationResourceExplanation holds the inputs and results of one resource (cpu or memory). Inputs that were
// not needed or not known, for example usages while the NodeMetric is missing, are left out.
type ColocationResourceExplanation struct {
	// Capacity is the node's capacity (status.capacity).
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// ReclaimPercent is the reclaim threshold percent in effect.
	ReclaimPercent *int64 `json:"reclaimPercent,omitempty"`
	// SafetyMargin is Capacity × (100 − ReclaimPercent)%, held back from batch pods. It is negative when
	// ReclaimPercent is above 100.
	SafetyMargin *resource.Quantity `json:"safetyMargin,omitempty"`
	// NodeReserved is max(kubelet reserved = capacity − allocatable, node.koordinator.sh/reservation).
	NodeReserved *resource.Quantity `json:"nodeReserved,omitempty"`
	// SystemUsed is max(system usage + usage of high-priority host applications, NodeReserved).
	SystemUsed *resource.Quantity `json:"systemUsed,omitempty"`
	// HPRequest is the sum of the requests of the running and pending high-priority pods.
	HPRequest *resource.Quantity `json:"hpRequest,omitempty"`
	// HPUsed is the sum of their usages (requests for pods without metrics), plus the usage of high-priority
	// pods that are reported but no longer listed.
	HPUsed *resource.Quantity `json:"hpUsed,omitempty"`
	// HPMaxUsedReq is the sum of max(request, usage) over the same pods.
	HPMaxUsedReq *resource.Quantity `json:"hpMaxUsedReq,omitempty"`
	// ThresholdCap is Capacity × batch threshold percent, when that percent is set.
	ThresholdCap *resource.Quantity `json:"thresholdCap,omitempty"`
	// NormalizationRatio, cpu only, is the node's CPU normalization ratio (node.koordinator.sh/cpu-normalization-ratio)
	// when it is above 1: Batch is then the formula's result multiplied by it, rounded up to a milli-core.
	NormalizationRatio string `json:"normalizationRatio,omitempty"`
	// Batch is the batch resource written to the node; missing when it was removed.
	Batch *resource.Quantity `json:"batch,omitempty"`
	// ProdReclaimable is the prod reclaimable resource the node agent predicted (mid, default mode).
	ProdReclaimable *resource.Quantity `json:"prodReclaimable,omitempty"`
	// NodeUnused is Capacity − node usage (mid, default mode); zero when the node usage is not valid.
	NodeUnused *resource.Quantity `json:"nodeUnused,omitempty"`
	// Unallocated is max(Capacity − max(NodeReserved, system usage + usage of prod host applications) − requests
	// of prod pods, 0) (mid, default mode).
	Unallocated *resource.Quantity `json:"unallocated,omitempty"`
	// MidUnallocatedPercent is the share of Unallocated offered as mid (mid, default mode).
	MidUnallocatedPercent *int64 `json:"midUnallocatedPercent,omitempty"`
	// MidStaticPercent is the share of Capacity offered as mid in static mode (midStaticReservedPercent of the
	// resource).
	MidStaticPercent *int64 `json:"midStaticPercent,omitempty"`
	// MidThresholdCap is Capacity × mid threshold percent.
	MidThresholdCap *resource.Quantity `json:"midThresholdCap,omitempty"`
	// Mid is the mid resource written to the node; missing when it was removed.
	Mid *resource.Quantity `json:"mid,omitempty"`
}

// validate checks the policies, that the results and the capacity are not negative, and that the update time
// can be written back.
func (e *ColocationExplanation) validate() error {
	var errs []error
	if y := e.UpdateTime.UTC().Year(); !e.UpdateTime.IsZero() && (y < 1 || y > 9999) {
		errs = append(errs, fmt.Errorf("updateTime: year %d is out of range", y))
	}
	for _, p := range []struct {
		field, value string
		allowed      []string
	}{
		{"policy.cpu", e.Policy.CPU, []string{"usage", "maxUsageRequest"}},
		{"policy.memory", e.Policy.Memory, []string{"usage", "request", "maxUsageRequest"}},
		{"policy.cpuConfigured", e.Policy.CPUConfigured, []string{"usage", "request", "maxUsageRequest"}},
	} {
		if p.value != "" && !slices.Contains(p.allowed, p.value) {
			errs = append(errs, fmt.Errorf("%s: unsupported value %q", p.field, p.value))
		}
	}
	errs = append(errs, e.CPU.validate("cpu"), e.Memory.validate("memory"))
	return errors.Join(errs...)
}

// validate checks that the capacity and the results are not negative.
func (r *ColocationResourceExplanation) validate(path string) error {
	var errs []error
	for _, f := range []struct {
		name string
		q    *resource.Quantity
	}{{"capacity", r.Capacity}, {"batch", r.Batch}, {"mid", r.Mid}} {
		if f.q != nil && f.q.Sign() < 0 {
			errs = append(errs, fmt.Errorf("%s.%s: %s is negative", path, f.name, f.q))
		}
	}
	return errors.Join(errs...)
}

// GetColocationExplanation parses AnnotationColocationExplanation. It returns nil and no error when the
// annotation is missing, and an *AnnotationError when it is not valid JSON, names an unknown policy, or has a
// negative capacity or result. The update time is truncated to whole seconds, the precision it is written with.
func GetColocationExplanation(annotations map[string]string) (*ColocationExplanation, error) {
	e, err := getJSONAnnotation[ColocationExplanation](annotations, AnnotationColocationExplanation)
	if e != nil {
		e.UpdateTime = metav1.NewTime(e.UpdateTime.Truncate(time.Second))
	}
	return e, err
}

// SetColocationExplanation stores e in AnnotationColocationExplanation on obj, or removes the annotation when e
// is nil. It writes nothing and returns an *AnnotationError when e is invalid.
func SetColocationExplanation(obj metav1.Object, e *ColocationExplanation) error {
	return setJSONAnnotation(obj, AnnotationColocationExplanation, e)
}
