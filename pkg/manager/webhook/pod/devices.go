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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/extension"
)

// gpuShareResources are the resources that make a container a GPU-sharing one for the device steps.
var gpuShareResources = []corev1.ResourceName{
	extension.ResourceGPU, extension.ResourceGPUCore, extension.ResourceGPUMemory, extension.ResourceGPUMemoryRatio, extension.ResourceGPUShared,
}

// normalizeDeviceResources is Koordinator's DeviceResourceSpec step, for the init and regular containers that
// request GPUs in Koordinator's resources: koordinator.sh/gpu: X becomes gpu-core: X and gpu-memory-ratio: X
// (requests and limits), and a container without koordinator.sh/gpu.shared gets the number of GPUs it uses:
// gpu-memory-ratio/100 when that is a multiple of 100 above 100, else gpu-core/100 by the same rule (without
// a ratio), else 1. nvidia.com/gpu and the other vendors' resources are left for the scheduler.
func normalizeDeviceResources(pod *corev1.Pod) {
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			r := &containers[i].Resources
			if !requestsAny(r, gpuShareResources) {
				continue
			}
			for _, list := range []corev1.ResourceList{r.Requests, r.Limits} {
				if q, ok := list[extension.ResourceGPU]; ok {
					list[extension.ResourceGPUCore] = q.DeepCopy()
					list[extension.ResourceGPUMemoryRatio] = q.DeepCopy()
					delete(list, extension.ResourceGPU)
				}
			}
			if requestsAny(r, []corev1.ResourceName{extension.ResourceGPUShared}) {
				continue
			}
			shared := int64(1)
			ratio, hasRatio := value(r.Requests, extension.ResourceGPUMemoryRatio)
			core, hasCore := value(r.Requests, extension.ResourceGPUCore)
			switch {
			case hasRatio && ratio > 100 && ratio%100 == 0:
				shared = ratio / 100
			case !hasRatio && hasCore && core > 100 && core%100 == 0:
				shared = core / 100
			}
			for _, list := range []*corev1.ResourceList{&r.Requests, &r.Limits} {
				if *list == nil {
					*list = corev1.ResourceList{}
				}
				(*list)[extension.ResourceGPUShared] = *resource.NewQuantity(shared, resource.DecimalSI)
			}
		}
	}
}

// validateDeviceResources checks the GPU requests of every container, Koordinator's ValidatePodDeviceResource
// rules and the scheduler's unit rules, so that a pod the scheduler could never place is refused at once:
// koordinator.sh/gpu with gpu.shared, a zero koordinator.sh/gpu or gpu.shared, a share above 100 that is not
// whole GPUs, a shared request with both or neither of gpu-memory and gpu-memory-ratio, gpu-core or
// gpu-memory-ratio not divisible by gpu.shared, and nvidia.com/gpu with Koordinator's GPU resources.
func validateDeviceResources(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	for _, group := range []struct {
		path       *field.Path
		containers []corev1.Container
	}{
		{field.NewPath("spec", "initContainers"), pod.Spec.InitContainers},
		{field.NewPath("spec", "containers"), pod.Spec.Containers},
	} {
		for i := range group.containers {
			errs = append(errs, validateContainerDevices(group.path.Index(i).Child("resources", "requests"), group.containers[i].Resources.Requests)...)
		}
	}
	return errs
}

func validateContainerDevices(path *field.Path, req corev1.ResourceList) field.ErrorList {
	var errs field.ErrorList
	gpu, hasGPU := value(req, extension.ResourceGPU)
	shared, hasShared := value(req, extension.ResourceGPUShared)
	core, _ := value(req, extension.ResourceGPUCore)
	ratio, _ := value(req, extension.ResourceGPUMemoryRatio)
	memory, _ := value(req, extension.ResourceGPUMemory)
	if _, ok := req[extension.ResourceNvidiaGPU]; ok {
		for _, name := range gpuShareResources {
			if _, ok := req[name]; ok {
				errs = append(errs, field.Forbidden(path.Key(string(name)), fmt.Sprintf("cannot be requested with %s: use one or the other", extension.ResourceNvidiaGPU)))
			}
		}
	}
	if hasGPU && hasShared {
		return append(errs, field.Forbidden(path.Key(string(extension.ResourceGPUShared)), fmt.Sprintf("cannot be requested with %s", extension.ResourceGPU)))
	}
	if hasGPU {
		errs = append(errs, percentage(path.Key(string(extension.ResourceGPU)), gpu)...)
	}
	if !hasShared {
		for _, p := range []struct {
			name corev1.ResourceName
			v    int64
		}{{extension.ResourceGPUCore, core}, {extension.ResourceGPUMemoryRatio, ratio}} {
			if _, ok := req[p.name]; ok {
				errs = append(errs, percentage(path.Key(string(p.name)), p.v)...)
			}
		}
		return errs
	}
	sharedPath := path.Key(string(extension.ResourceGPUShared))
	if shared <= 0 {
		return append(errs, field.Invalid(sharedPath, shared, "must be greater than zero"))
	}
	if npu, _ := value(req, extension.ResourceHuaweiNPUCore); npu != 0 {
		return errs
	}
	switch {
	case memory == 0 && ratio == 0:
		errs = append(errs, field.Required(path.Key(string(extension.ResourceGPUMemoryRatio)),
			fmt.Sprintf("a request of %s needs %s or %s", extension.ResourceGPUShared, extension.ResourceGPUMemoryRatio, extension.ResourceGPUMemory)))
	case memory != 0 && ratio != 0:
		errs = append(errs, field.Forbidden(path.Key(string(extension.ResourceGPUMemory)),
			fmt.Sprintf("cannot be requested with %s: ask for GPU memory in one of them", extension.ResourceGPUMemoryRatio)))
	}
	for _, p := range []struct {
		name corev1.ResourceName
		v    int64
	}{{extension.ResourceGPUCore, core}, {extension.ResourceGPUMemoryRatio, ratio}} {
		switch {
		case p.v%shared != 0:
			errs = append(errs, field.Invalid(path.Key(string(p.name)), p.v, fmt.Sprintf("must be a multiple of %s (%d): each shared GPU gets an equal part", extension.ResourceGPUShared, shared)))
		case p.v/shared > 100:
			errs = append(errs, field.Invalid(path.Key(string(p.name)), p.v, fmt.Sprintf("is more than 100 per GPU over %s (%d) GPUs", extension.ResourceGPUShared, shared)))
		}
	}
	return errs
}

// percentage checks a percent-of-a-device value: above zero, and a multiple of 100 (whole devices) above 100.
func percentage(path *field.Path, v int64) field.ErrorList {
	switch {
	case v <= 0:
		return field.ErrorList{field.Invalid(path, v, "must be greater than zero")}
	case v > 100 && v%100 != 0:
		return field.ErrorList{field.Invalid(path, v, "must be at most 100 (a share of one device) or a multiple of 100 (whole devices)")}
	}
	return nil
}

// requestsAny tells whether the requests or limits have one of names.
func requestsAny(r *corev1.ResourceRequirements, names []corev1.ResourceName) bool {
	for _, name := range names {
		if _, ok := r.Requests[name]; ok {
			return true
		}
		if _, ok := r.Limits[name]; ok {
			return true
		}
	}
	return false
}

// value returns list[name] as an integer and whether it is there.
func value(list corev1.ResourceList, name corev1.ResourceName) (int64, bool) {
	q, ok := list[name]
	if !ok {
		return 0, false
	}
	return q.Value(), true
}
