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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// DeviceShareArgs configures the DeviceShare plugin, with Koordinator's fields.
type DeviceShareArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Allocator is Koordinator's deprecated allocator name: accepted, not used.
	Allocator string `json:"allocator,omitempty"`
	// ScoringStrategy scores devices and nodes by their free device resources. Defaults to LeastAllocated
	// over koordinator.sh/gpu-memory-ratio, gpu-memory, rdma and fpga, weight 1 each (Koordinator's).
	ScoringStrategy *ScoringStrategy `json:"scoringStrategy,omitempty"`
	// DisableDeviceNUMATopologyAlignment turns off aligning devices with the pod's NUMA nodes.
	DisableDeviceNUMATopologyAlignment bool `json:"disableDeviceNUMATopologyAlignment,omitempty"`
	// GPUSharedResourceTemplatesConfig is where Koordinator's GPU shared-resource templates are. Defaults to
	// the ConfigMap koordinator-system/gpu-shared-resource-templates matching huawei.com/npu-core.
	GPUSharedResourceTemplatesConfig *GPUSharedResourceTemplatesConfig `json:"gpuSharedResourceTemplatesConfig,omitempty"`
	// GPUShareUnsupportedModels are the GPU models on which GPUs are never shared.
	GPUShareUnsupportedModels []GPUModel `json:"gpuShareUnsupportedModels,omitempty"`
}

// GPUSharedResourceTemplatesConfig names the ConfigMap of GPU shared-resource templates.
type GPUSharedResourceTemplatesConfig struct {
	ConfigMapNamespace string   `json:"configMapNamespace,omitempty"`
	ConfigMapName      string   `json:"configMapName,omitempty"`
	MatchedResources   []string `json:"matchedResources,omitempty"`
}

// GPUModel is a GPU vendor and model, as the node labels node.koordinator.sh/gpu-vendor and gpu-model say.
type GPUModel struct {
	Vendor string `json:"vendor,omitempty"`
	Model  string `json:"model,omitempty"`
}
