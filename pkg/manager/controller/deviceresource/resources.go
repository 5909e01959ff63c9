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

package deviceresource

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// copiedLabels are the Device labels copied to the node.
var copiedLabels = []string{extension.LabelGPUVendor, extension.LabelGPUModel, extension.LabelGPUDriverVersion}

// ResourceNames are the node resources the controller owns: set from the Device, removed when it has none.
var ResourceNames = []corev1.ResourceName{
	extension.ResourceGPU, extension.ResourceGPUCore, extension.ResourceGPUMemory, extension.ResourceGPUMemoryRatio,
	extension.ResourceGPUShared, extension.ResourceRDMA, extension.ResourceFPGA,
}

// Resources are a node's device resources from its Device (nil: none), Koordinator's rules:
//   - gpu-core, gpu-memory and gpu-memory-ratio: the sums of the healthy GPUs' resources;
//   - koordinator.sh/gpu: the sum of their gpu-core, for NVIDIA GPUs (the Device's gpu-vendor label nvidia or
//     unset);
//   - koordinator.sh/gpu.shared: 100 per healthy GPU (up to 100 pods share a GPU; the pod webhook gives every
//     GPU-sharing pod a gpu.shared request, so nodes must offer it);
//   - koordinator.sh/rdma: 100 per healthy RDMA device; koordinator.sh/fpga: the sum of the healthy FPGAs'.
//
// Unhealthy devices count for nothing.
func Resources(d *schedulingv1alpha1.Device) corev1.ResourceList {
	if d == nil {
		return nil
	}
	out := corev1.ResourceList{}
	add := func(name corev1.ResourceName, q resource.Quantity) {
		cur := out[name]
		cur.Add(q)
		out[name] = cur
	}
	var gpus, nics int64
	for _, dev := range d.Spec.Devices {
		if !dev.Health {
			continue
		}
		switch dev.Type {
		case schedulingv1alpha1.GPU:
			gpus++
			for _, name := range []corev1.ResourceName{extension.ResourceGPUCore, extension.ResourceGPUMemory, extension.ResourceGPUMemoryRatio} {
				if q, ok := dev.Resources[name]; ok {
					add(name, q)
				}
			}
		case schedulingv1alpha1.RDMA:
			nics++
		case schedulingv1alpha1.FPGA:
			if q, ok := dev.Resources[extension.ResourceFPGA]; ok {
				add(extension.ResourceFPGA, q)
			}
		}
	}
	if gpus > 0 {
		if v := d.Labels[extension.LabelGPUVendor]; v == "" || v == "nvidia" {
			if q, ok := out[extension.ResourceGPUCore]; ok {
				out[extension.ResourceGPU] = q.DeepCopy()
			}
		}
		out[extension.ResourceGPUShared] = *resource.NewQuantity(gpus*100, resource.DecimalSI)
	}
	if nics > 0 {
		out[extension.ResourceRDMA] = *resource.NewQuantity(nics*100, resource.DecimalSI)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
