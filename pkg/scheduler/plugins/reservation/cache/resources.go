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

package cache

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Resources converts a resource list into the amounts a reservation counts: the pod count, the ignored
// resources and zero amounts are left out.
func Resources(rl corev1.ResourceList, ignored sets.Set[corev1.ResourceName]) quantity.Amounts {
	out := make(quantity.Amounts, len(rl))
	for name, q := range rl {
		if name == corev1.ResourcePods || ignored.Has(name) {
			continue
		}
		if v := quantity.Value(name, q); v > 0 {
			out[name] = v
		}
	}
	return out
}

// PodRequests returns what pod requests as kube-scheduler counts it (init containers, overhead), as Resources
// counts it.
func PodRequests(pod *corev1.Pod, ignored sets.Set[corev1.ResourceName]) quantity.Amounts {
	return Resources(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), ignored)
}

// Masked returns the positive part of a on the resources of mask.
func Masked(a, mask quantity.Amounts) quantity.Amounts {
	out := make(quantity.Amounts, len(mask))
	for name := range mask {
		if v := a[name]; v > 0 {
			out[name] = v
		}
	}
	return out
}

// Resources converts a resource list as Resources does, leaving out the cache's ignored resources.
func (c *Cache) Resources(rl corev1.ResourceList) quantity.Amounts { return Resources(rl, c.ignored) }

// PodRequests returns what pod requests, as PodRequests does, leaving out the cache's ignored resources.
func (c *Cache) PodRequests(pod *corev1.Pod) quantity.Amounts { return PodRequests(pod, c.ignored) }
