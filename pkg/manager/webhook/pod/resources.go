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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/koord-dev/koord/apis/extension"
)

// standardResources are the resources a koord-batch or koord-mid pod gets in their colocation form.
var standardResources = [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// translateResources rewrites the cpu and memory requests and limits of the init and regular containers, and
// the overhead, of a koord-batch pod into batch-cpu (integer milli-cores) and batch-memory, and those of a
// koord-mid pod into mid-cpu and mid-memory. The original keys are removed, and a limit without a request gets
// a request equal to it. Pods of other classes are left alone.
func translateResources(pod *corev1.Pod) {
	pc := extension.GetPodPriorityClassWithDefault(pod)
	if pc != extension.PriorityBatch && pc != extension.PriorityMid {
		return
	}
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			r := &containers[i].Resources
			translateList(pc, r.Requests)
			translateList(pc, r.Limits)
			for _, name := range standardResources {
				name = extension.TranslateResourceNameByPriorityClass(pc, name)
				limit, hasLimit := r.Limits[name]
				if _, hasRequest := r.Requests[name]; hasLimit && !hasRequest {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = limit.DeepCopy()
				}
			}
		}
	}
	translateList(pc, pod.Spec.Overhead)
}

// translateList moves cpu and memory in list to the colocation resources of class pc.
func translateList(pc extension.PriorityClass, list corev1.ResourceList) {
	for _, name := range standardResources {
		q, ok := list[name]
		if !ok {
			continue
		}
		if name == corev1.ResourceCPU {
			q = extension.CPUToBatchCPU(q)
		}
		list[extension.TranslateResourceNameByPriorityClass(pc, name)] = q
		delete(list, name)
	}
}

// extendedResources are the resources recorded in the extended resource spec annotation.
var extendedResources = [...]corev1.ResourceName{extension.BatchCPU, extension.BatchMemory}

// updateExtendedResourceSpec rebuilds the extended resource spec annotation from the batch-cpu and
// batch-memory requests and limits of the regular containers. The annotation is written only when its content
// changes; it is not added to a pod without batch resources, and a stale one becomes "{}".
func updateExtendedResourceSpec(pod *corev1.Pod) error {
	spec := &extension.ExtendedResourceSpec{Containers: map[string]extension.ExtendedResourceContainerSpec{}}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		requests, limits := pickExtended(c.Resources.Requests), pickExtended(c.Resources.Limits)
		if requests != nil || limits != nil {
			spec.Containers[c.Name] = extension.ExtendedResourceContainerSpec{Requests: requests, Limits: limits}
		}
	}
	if _, ok := pod.Annotations[extension.AnnotationExtendedResourceSpec]; !ok && len(spec.Containers) == 0 {
		return nil
	}
	if current, err := extension.GetExtendedResourceSpec(pod.Annotations); err == nil && current != nil && equality.Semantic.DeepEqual(current, spec) {
		return nil
	}
	if err := extension.SetExtendedResourceSpec(pod, spec); err != nil {
		return fmt.Errorf("writing the extended resource spec: %w", err)
	}
	return nil
}

// pickExtended returns the extended resources in list, or nil when there are none.
func pickExtended(list corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for _, name := range extendedResources {
		if q, ok := list[name]; ok {
			if out == nil {
				out = corev1.ResourceList{}
			}
			out[name] = q.DeepCopy()
		}
	}
	return out
}
