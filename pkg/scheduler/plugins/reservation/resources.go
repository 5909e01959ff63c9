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

package reservation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"
)

// resources is an amount per resource: cpu in millicores, every other resource in its base unit. Zero amounts
// are left out.
type resources map[corev1.ResourceName]int64

// toResources converts a resource list, leaving out the pod count, the ignored resources and zero amounts.
func toResources(rl corev1.ResourceList, ignored sets.Set[corev1.ResourceName]) resources {
	out := make(resources, len(rl))
	for name, q := range rl {
		if name == corev1.ResourcePods || ignored.Has(name) {
			continue
		}
		v := q.Value()
		if name == corev1.ResourceCPU {
			v = q.MilliValue()
		}
		if v > 0 {
			out[name] = v
		}
	}
	return out
}

// podResources returns what pod requests, as kube-scheduler counts it (init containers, overhead).
func podResources(pod *corev1.Pod, ignored sets.Set[corev1.ResourceName]) resources {
	return toResources(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), ignored)
}

// list converts r back into a resource list.
func (r resources) list() corev1.ResourceList {
	out := make(corev1.ResourceList, len(r))
	for name, v := range r {
		out[name] = quantity(name, v)
	}
	return out
}

// masked returns the part of r on the resources of mask.
func (r resources) masked(mask resources) resources {
	out := make(resources, len(mask))
	for name := range mask {
		if v := r[name]; v > 0 {
			out[name] = v
		}
	}
	return out
}

// add adds o to r.
func (r resources) add(o resources) {
	for name, v := range o {
		r[name] += v
	}
}

// quantity is v of resource name as a Quantity.
func quantity(name corev1.ResourceName, v int64) resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return *resource.NewQuantity(v, resource.BinarySI)
	}
	return *resource.NewQuantity(v, resource.DecimalSI)
}

// format is v of resource name as a person reads it.
func format(name corev1.ResourceName, v int64) string {
	q := quantity(name, v)
	return q.String()
}

// free returns the unrequested amount of resource name on a node: allocatable − requested of its NodeInfo.
func free(ni fwk.NodeInfo, name corev1.ResourceName) int64 {
	alloc, req := ni.GetAllocatable(), ni.GetRequested()
	switch name {
	case corev1.ResourceCPU:
		return alloc.GetMilliCPU() - req.GetMilliCPU()
	case corev1.ResourceMemory:
		return alloc.GetMemory() - req.GetMemory()
	case corev1.ResourceEphemeralStorage:
		return alloc.GetEphemeralStorage() - req.GetEphemeralStorage()
	}
	return alloc.GetScalarResources()[name] - req.GetScalarResources()[name]
}

// String prints r sorted by resource name, such as "cpu=1500m,memory=1Gi".
func (r resources) String() string {
	parts := make([]string, 0, len(r))
	for _, name := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%s=%s", name, format(name, r[name])))
	}
	return strings.Join(parts, ",")
}
