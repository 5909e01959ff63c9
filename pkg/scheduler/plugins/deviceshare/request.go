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

package deviceshare

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// request is what a pod asks of the plugin, read once at PreFilter: per device type, how many devices and how
// much of each.
type request struct {
	types map[extension.DeviceType]*typeRequest
	// joint, when set, has the primary type first and the types allocated on its devices' PCIe switches after.
	joint *extension.DeviceJointAllocate
}

// typeRequest is the request of one device type.
type typeRequest struct {
	// count is the number of devices; all (with ApplyForAll) means every device the hint's selector keeps.
	count int
	all   bool
	// per is what each device gives (GPUs: gpu-core, gpu-memory-ratio or gpu-memory; others their resource).
	per quantity.Amounts
	// shared is set for a part of one GPU (less than all its memory, or memory in bytes).
	shared bool
	hint   *extension.DeviceHint
}

// gpuResources are the pod resources that ask for GPUs.
var gpuResources = []corev1.ResourceName{
	extension.ResourceNvidiaGPU, extension.ResourceAMDGPU, extension.ResourceHygonDCU, extension.ResourceGPU,
	extension.ResourceGPUShared, extension.ResourceGPUCore, extension.ResourceGPUMemory, extension.ResourceGPUMemoryRatio,
}

// vendorGPUs are the device-plugin resources counted in whole GPUs.
var vendorGPUs = []corev1.ResourceName{extension.ResourceNvidiaGPU, extension.ResourceAMDGPU, extension.ResourceHygonDCU}

// requestOf reads the pod's device requests and hints; nil when it asks for no device. A combination the
// plugin cannot place (the ones Koordinator refuses: gpu-core alone, nvidia.com/gpu with Koordinator's GPU
// resources, a share above 100 that is not whole devices, ...) is an error naming it.
func requestOf(pod *corev1.Pod) (*request, error) {
	all := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	hints, err := extension.GetDeviceAllocateHints(pod.Annotations)
	if err != nil {
		return nil, err
	}
	joint, err := extension.GetDeviceJointAllocate(pod.Annotations)
	if err != nil {
		return nil, err
	}
	r := &request{types: map[extension.DeviceType]*typeRequest{}}
	gpu := map[corev1.ResourceName]int64{}
	for _, name := range gpuResources {
		if q, ok := all[name]; ok && !q.IsZero() {
			gpu[name] = q.Value()
		}
	}
	for _, name := range []corev1.ResourceName{extension.ResourceHuaweiNPUCore, extension.ResourceHuaweiNPUCPU, extension.ResourceHuaweiNPUDVPP} {
		if q, ok := all[name]; ok && !q.IsZero() {
			return nil, fmt.Errorf("%s: Huawei NPUs are not supported by Koord's DeviceShare yet", name)
		}
	}
	if len(gpu) > 0 {
		t, err := gpuRequest(gpu)
		if err != nil {
			return nil, err
		}
		t.hint = hints[extension.DeviceTypeGPU]
		r.types[extension.DeviceTypeGPU] = t
	}
	for typ, name := range map[extension.DeviceType]corev1.ResourceName{extension.DeviceTypeRDMA: extension.ResourceRDMA, extension.DeviceTypeFPGA: extension.ResourceFPGA} {
		q, ok := all[name]
		if !ok || q.IsZero() {
			continue
		}
		t, err := countedRequest(name, q.Value(), hints[typ])
		if err != nil {
			return nil, err
		}
		r.types[typ] = t
	}
	if len(r.types) == 0 {
		return nil, nil
	}
	if joint != nil {
		var types []extension.DeviceType
		for _, t := range joint.DeviceTypes {
			if tr := r.types[t]; tr != nil && !tr.all && !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
		if len(types) > 1 {
			r.joint = &extension.DeviceJointAllocate{DeviceTypes: types, RequiredScope: joint.RequiredScope}
		}
	}
	return r, nil
}

// gpuRequest turns the GPU resources of a pod into devices: nvidia.com/gpu (amd.com/gpu, dcu.com/gpu) N is N
// whole GPUs; koordinator.sh/gpu X is gpu-core and gpu-memory-ratio X; otherwise gpu-core with gpu-memory or
// gpu-memory-ratio, or either memory alone, optionally with gpu.shared, the number of GPUs. The count is
// gpu.shared, else the ratio (or, without it, the core) in whole GPUs above 100, else 1; each device gets an
// equal part.
func gpuRequest(gpu map[corev1.ResourceName]int64) (*typeRequest, error) {
	for _, v := range vendorGPUs {
		n, ok := gpu[v]
		if !ok {
			continue
		}
		if len(gpu) > 1 {
			return nil, fmt.Errorf("%s cannot be requested with other GPU resources", v)
		}
		return &typeRequest{count: int(n), per: quantity.Amounts{extension.ResourceGPUCore: 100, extension.ResourceGPUMemoryRatio: 100}}, nil
	}
	if x, ok := gpu[extension.ResourceGPU]; ok {
		if len(gpu) > 1 {
			return nil, fmt.Errorf("%s cannot be requested with other GPU resources", extension.ResourceGPU)
		}
		gpu = map[corev1.ResourceName]int64{extension.ResourceGPUCore: x, extension.ResourceGPUMemoryRatio: x}
	}
	core, hasCore := gpu[extension.ResourceGPUCore]
	ratio, hasRatio := gpu[extension.ResourceGPUMemoryRatio]
	memory, hasMemory := gpu[extension.ResourceGPUMemory]
	shared, hasShared := gpu[extension.ResourceGPUShared]
	switch {
	case hasRatio && hasMemory:
		return nil, fmt.Errorf("%s and %s cannot be requested together", extension.ResourceGPUMemoryRatio, extension.ResourceGPUMemory)
	case !hasRatio && !hasMemory:
		return nil, fmt.Errorf("a GPU request needs %s or %s", extension.ResourceGPUMemoryRatio, extension.ResourceGPUMemory)
	}
	count := int64(1)
	switch {
	case hasShared:
		count = shared
	case hasRatio && ratio > 100 && ratio%100 == 0:
		count = ratio / 100
	case !hasRatio && hasCore && core > 100 && core%100 == 0:
		count = core / 100
	}
	per := quantity.Amounts{}
	for _, v := range []struct {
		name corev1.ResourceName
		v    int64
		has  bool
	}{{extension.ResourceGPUCore, core, hasCore}, {extension.ResourceGPUMemoryRatio, ratio, hasRatio}} {
		if !v.has {
			continue
		}
		if v.v%count != 0 {
			return nil, fmt.Errorf("%s %d is not divisible over %d GPUs", v.name, v.v, count)
		}
		if v.v/count > 100 {
			return nil, fmt.Errorf("%s %d is more than 100 on each of %d GPUs (above 100, ask for whole GPUs in multiples of 100)", v.name, v.v, count)
		}
		per[v.name] = v.v / count
	}
	if hasMemory {
		per[extension.ResourceGPUMemory] = memory / count
	}
	return &typeRequest{count: int(count), per: per, shared: hasMemory || per[extension.ResourceGPUMemoryRatio] < 100}, nil
}

// countedRequest turns an RDMA or FPGA request into devices: a multiple of 100 above 100 is that many whole
// devices, else one device with that much; with RequestsAsCount the value is the number of devices (of 1
// each, or 100 with the DeviceLevel exclusive policy), with ApplyForAll every device gets the value.
func countedRequest(name corev1.ResourceName, v int64, hint *extension.DeviceHint) (*typeRequest, error) {
	t := &typeRequest{count: 1, per: quantity.Amounts{name: v}, hint: hint}
	switch {
	case hint != nil && hint.AllocateStrategy == extension.ApplyForAllDeviceAllocateStrategy:
		t.all = true
	case hint != nil && hint.AllocateStrategy == extension.RequestsAsCountDeviceAllocateStrategy:
		t.count, t.per[name] = int(v), 1
		if hint.ExclusivePolicy == extension.DeviceLevelDeviceExclusivePolicy {
			t.per[name] = 100
		}
	case v > 100 && v%100 == 0:
		t.count, t.per[name] = int(v/100), 100
	case v > 100:
		return nil, fmt.Errorf("%s %d: at most 100 (a share of one device) or a multiple of 100 (whole devices)", name, v)
	}
	return t, nil
}
