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

package calculator

import (
	"math"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// UpdateReason says why a node must be updated. The values are bounded, so they can be metric labels.
type UpdateReason string

// Update reasons.
const (
	// UpdateResourceAdded: a resource the node should have is missing from its capacity or allocatable.
	UpdateResourceAdded UpdateReason = "ResourceAdded"
	// UpdateResourceRemoved: the node has a resource it should not have.
	UpdateResourceRemoved UpdateReason = "ResourceRemoved"
	// UpdateCapacityMismatch: the capacity and the allocatable of a resource differ; both are written equal.
	UpdateCapacityMismatch UpdateReason = "CapacityMismatch"
	// UpdateDiffExceeded: a value differs from the node's by more than resourceDiffThreshold.
	UpdateDiffExceeded UpdateReason = "DiffExceeded"
	// UpdateExpired: a value differs and the last update is older than updateTimeThresholdSeconds.
	UpdateExpired UpdateReason = "Expired"
	// UpdateNoLastUpdate: the node should have resources but there is no record of when they were written.
	UpdateNoLastUpdate UpdateReason = "NoLastUpdate"
)

// Decision is the outcome of NeedUpdate.
type Decision struct {
	// Update tells whether the node must be written now.
	Update bool
	// Reason is why, when Update.
	Reason UpdateReason
	// Resource is the resource that decided it, when there is one.
	Resource corev1.ResourceName
	// DueAt, when not zero, is when a difference that is too small to be written now will be written.
	DueAt time.Time
}

// NeedUpdate decides whether the node must be updated to the result. It must be when a resource is to be
// added or removed, when capacity and allocatable disagree, when a value differs from the node's by more than
// resourceDiffThreshold (relative to the node's value), or when a value differs at all and lastUpdate is older
// than updateTimeThresholdSeconds. A zero lastUpdate means unknown: the node is updated when it should have
// resources. Values equal to the node's never cause an update, so that a restart writes nothing.
func NeedUpdate(node *corev1.Node, result *Result, lastUpdate time.Time, strategy *configuration.ColocationStrategy, now time.Time) Decision {
	s := resolve(strategy)
	values, present := result.Values()
	differ := false
	for i, name := range ResourceNames {
		allocatable, inAllocatable := node.Status.Allocatable[name]
		capacity, inCapacity := node.Status.Capacity[name]
		switch {
		case present[i] && !(inAllocatable && inCapacity):
			return Decision{Update: true, Reason: UpdateResourceAdded, Resource: name}
		case !present[i] && (inAllocatable || inCapacity):
			return Decision{Update: true, Reason: UpdateResourceRemoved, Resource: name}
		case !present[i]:
			continue
		}
		current := allocatable.Value()
		if capacity.Value() != current {
			return Decision{Update: true, Reason: UpdateCapacityMismatch, Resource: name}
		}
		if current == values[i] {
			continue
		}
		differ = true
		if math.Abs(float64(values[i])-float64(current)) > float64(current)*s.diffThreshold {
			return Decision{Update: true, Reason: UpdateDiffExceeded, Resource: name}
		}
	}
	if lastUpdate.IsZero() {
		if slices.Contains(present[:], true) {
			return Decision{Update: true, Reason: UpdateNoLastUpdate}
		}
		return Decision{}
	}
	if !differ {
		return Decision{}
	}
	due := lastUpdate.Add(s.updateTimeThreshold)
	if !now.Before(due) {
		return Decision{Update: true, Reason: UpdateExpired}
	}
	return Decision{DueAt: due}
}

// Excess is a resource a node offers more of than a Result gives.
type Excess struct {
	// Resource is the resource.
	Resource corev1.ResourceName
	// Offered is the node's allocatable; Result what the result gives (0 when it removes the resource).
	Offered, Result int64
	// Reason is the part of the update rule that lowers it.
	Reason UpdateReason
}

// Excesses returns the resources node offers more of than result where NeedUpdate's rule lowers them now: a
// resource the result removes, a value more than resourceDiffThreshold above the result, or any value above it
// once lastUpdate is older than updateTimeThresholdSeconds or unknown. A value above the result within the
// rule's tolerance is not an excess: koord-manager leaves it in place on purpose.
func Excesses(node *corev1.Node, result *Result, lastUpdate time.Time, strategy *configuration.ColocationStrategy, now time.Time) []Excess {
	s := resolve(strategy)
	values, present := result.Values()
	var out []Excess
	for i, name := range ResourceNames {
		allocatable, ok := node.Status.Allocatable[name]
		if !ok {
			continue
		}
		offered := allocatable.Value()
		want := int64(0)
		if present[i] {
			want = values[i]
		}
		if offered <= want {
			continue
		}
		var reason UpdateReason
		switch {
		case !present[i]:
			reason = UpdateResourceRemoved
		case float64(offered-want) > float64(offered)*s.diffThreshold:
			reason = UpdateDiffExceeded
		case lastUpdate.IsZero():
			reason = UpdateNoLastUpdate
		case !now.Before(lastUpdate.Add(s.updateTimeThreshold)):
			reason = UpdateExpired
		default:
			continue
		}
		out = append(out, Excess{Resource: name, Offered: offered, Result: want, Reason: reason})
	}
	return out
}

// Explanation returns the explanation of r to record on the node, stamped with updateTime (truncated to
// seconds).
func (r *Result) Explanation(updateTime time.Time) *extension.ColocationExplanation {
	e := &extension.ColocationExplanation{
		UpdateTime: metav1.NewTime(updateTime.UTC().Truncate(time.Second)),
		Policy: extension.ColocationPolicy{
			CPU:           string(r.CPUPolicy),
			Memory:        string(r.MemoryPolicy),
			CPUConfigured: string(r.CPUPolicyConfigured),
		},
		CPU:      r.explainResource(&r.CPU, cpuQuantity, r.Batch.CPU, r.Mid.CPU),
		Memory:   r.explainResource(&r.Memory, memoryQuantity, r.Batch.Memory, r.Mid.Memory),
		Warnings: slices.Clone(r.Warnings),
	}
	if r.CPUNormalizationRatio > 1 && r.Batch.Reset == "" {
		e.CPU.NormalizationRatio = strconv.FormatFloat(r.CPUNormalizationRatio, 'f', -1, 64)
	}
	switch {
	case r.Batch.Reset != "":
		e.Degraded = r.Batch.Message
	case r.Mid.Reset != "":
		e.MidDegraded = r.Mid.Message
	}
	return e
}

// explainResource builds the explanation of one resource; quantity converts its amounts.
func (r *Result) explainResource(in *Terms, quantity func(int64) *resource.Quantity, batch, mid int64) extension.ColocationResourceExplanation {
	e := extension.ColocationResourceExplanation{
		Capacity:       quantity(in.Capacity),
		ReclaimPercent: ptr.To(in.ReclaimPercent),
		SafetyMargin:   quantity(in.SafetyMargin),
		NodeReserved:   quantity(in.NodeReserved),
	}
	if r.UsageKnown {
		e.SystemUsed = quantity(in.SystemUsed)
		e.HPRequest = quantity(in.HPRequest)
		e.HPUsed = quantity(in.HPUsed)
		e.HPMaxUsedReq = quantity(in.HPMaxUsedReq)
	}
	if in.HasThresholdCap {
		e.ThresholdCap = quantity(in.ThresholdCap)
	}
	if r.Batch.Reset == "" {
		e.Batch = quantity(batch)
	}
	if r.Mid.Reset == "" {
		switch {
		case r.MidPredicted:
			e.ProdReclaimable = quantity(in.ProdReclaimable)
			e.NodeUnused = quantity(in.NodeUnused)
			e.Unallocated = quantity(in.Unallocated)
			e.MidUnallocatedPercent = ptr.To(in.MidUnallocatedPercent)
		case r.MidStatic:
			e.MidStaticPercent = ptr.To(in.MidStaticPercent)
		}
		e.MidThresholdCap = quantity(in.MidThresholdCap)
		e.Mid = quantity(mid)
	}
	return e
}

// cpuQuantity converts milli-cores into a cpu quantity.
func cpuQuantity(milli int64) *resource.Quantity {
	q := quantity.Quantity(corev1.ResourceCPU, milli)
	return &q
}

// memoryQuantity converts bytes into a memory quantity.
func memoryQuantity(bytes int64) *resource.Quantity {
	q := quantity.Quantity(corev1.ResourceMemory, bytes)
	return &q
}

// ResourceList returns the resources the node should have: batch-cpu and mid-cpu as integer milli-cores,
// batch-memory and mid-memory as bytes. Resources to be removed are left out.
func (r *Result) ResourceList() corev1.ResourceList {
	values, present := r.Values()
	list := make(corev1.ResourceList, len(values))
	for i, name := range ResourceNames {
		if !present[i] {
			continue
		}
		list[name] = quantity.Quantity(name, values[i])
	}
	return list
}
