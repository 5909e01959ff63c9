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

// Package estimator estimates how much of each resource a pod will use before its usage is measured, as a
// quantity.Vector over the resources LoadAwareScheduling works on.
//
// A pod's estimate of resource r is max(request, limit) × factor / 100, rounded, and never above the limit.
// koord-batch and koord-mid pods are estimated from the resources they request instead of cpu and memory
// (kubernetes.io/batch-cpu in milli-cores, kubernetes.io/batch-memory, and the mid ones). A koord-batch pod that
// requests none of those is estimated from cpu and memory; a koord-mid pod that requests no mid resources, and
// every koord-free pod, is estimated at 0 cpu and memory, as Koordinator estimates them. A pod requesting
// nothing of a cpu-like resource is estimated at 250m, of a memory-like one at 200Mi. Resources without a
// factor are estimated at 0.
package estimator

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Estimates for pods that request nothing of a resource.
const (
	// DefaultMilliCPURequest is the estimate, in milli-cores, of a pod without a cpu request or limit.
	DefaultMilliCPURequest int64 = 250
	// DefaultMemoryRequest is the estimate, in bytes, of a pod without a memory request or limit.
	DefaultMemoryRequest int64 = 200 * 1024 * 1024
)

// Estimator estimates pods' usage of a fixed list of resources.
type Estimator struct {
	resources quantity.Names
	// factors are the scaling factors by resource index; hasFactor says which resources have one.
	factors   []int64
	hasFactor []bool
}

// New returns an Estimator for resources with the given scaling factors, in percent by resource.
func New(resources quantity.Names, factors map[corev1.ResourceName]int64) *Estimator {
	e := &Estimator{resources: resources, factors: make([]int64, len(resources)), hasFactor: make([]bool, len(resources))}
	for i, name := range resources {
		e.factors[i], e.hasFactor[i] = factors[name]
	}
	return e
}

// Resources returns the resources e estimates.
func (e *Estimator) Resources() quantity.Names { return e.resources }

// Estimate returns the estimated usage of pod. custom, when not empty, overrides the scaling factors of the
// resources it names (a pod's scheduling.koordinator.sh/load-estimated-scaling-factors annotation).
func (e *Estimator) Estimate(pod *corev1.Pod, custom map[corev1.ResourceName]int64) quantity.Vector {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	pc := extension.GetPodPriorityClassWithDefault(pod)
	v := make(quantity.Vector, len(e.resources))
	for i, name := range e.resources {
		factor, ok := custom[name]
		if !ok {
			factor, ok = e.factors[i], e.hasFactor[i]
		}
		if !ok {
			continue
		}
		requested := extension.TranslateResourceNameByPriorityClass(pc, name)
		standard := name == corev1.ResourceCPU || name == corev1.ResourceMemory
		unrequested := requested != name && quantity.ValueIn(requests, requested) == 0 && quantity.ValueIn(limits, requested) == 0
		switch {
		case standard && (pc == extension.PriorityFree || pc == extension.PriorityMid && unrequested):
			// Koordinator estimates koord-free pods, and koord-mid pods without mid resources, at nothing.
			continue
		case requested == "" || unrequested:
			// A koord-batch pod that does not request batch resources (no webhook rewrote it) is estimated
			// from the standard ones.
			requested = name
		}
		v[i] = estimate(requested, requests, limits, factor)
	}
	return v
}

// estimate is the estimate of one resource, named as the pod requests it.
func estimate(name corev1.ResourceName, requests, limits corev1.ResourceList, factor int64) int64 {
	limit := quantity.ValueIn(limits, name)
	q := max(quantity.ValueIn(requests, name), limit)
	if q == 0 {
		switch name {
		case corev1.ResourceCPU, extension.BatchCPU, extension.MidCPU:
			return DefaultMilliCPURequest
		case corev1.ResourceMemory, extension.BatchMemory, extension.MidMemory:
			return DefaultMemoryRequest
		}
		return 0
	}
	est := int64(math.Round(float64(q) * float64(factor) / 100))
	if limit > 0 && est > limit {
		est = limit
	}
	return est
}
