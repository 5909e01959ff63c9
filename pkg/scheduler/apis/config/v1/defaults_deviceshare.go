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

// deviceScoringResources are the resources DeviceShare scores by default (Koordinator's).
func deviceScoringResources() []ResourceWeight {
	return []ResourceWeight{
		{Name: "koordinator.sh/gpu-memory-ratio", Weight: 1}, {Name: "koordinator.sh/gpu-memory", Weight: 1},
		{Name: "koordinator.sh/rdma", Weight: 1}, {Name: "koordinator.sh/fpga", Weight: 1},
	}
}

// SetDefaults_DeviceShareArgs fills in the defaults of DeviceShareArgs (Koordinator's).
func SetDefaults_DeviceShareArgs(obj *DeviceShareArgs) {
	if obj.ScoringStrategy == nil {
		obj.ScoringStrategy = &ScoringStrategy{}
	}
	if obj.ScoringStrategy.Type == "" {
		obj.ScoringStrategy.Type = "LeastAllocated"
	}
	if len(obj.ScoringStrategy.Resources) == 0 {
		obj.ScoringStrategy.Resources = deviceScoringResources()
	}
	for i := range obj.ScoringStrategy.Resources {
		if obj.ScoringStrategy.Resources[i].Weight == 0 {
			obj.ScoringStrategy.Resources[i].Weight = 1
		}
	}
	if obj.GPUSharedResourceTemplatesConfig == nil {
		obj.GPUSharedResourceTemplatesConfig = &GPUSharedResourceTemplatesConfig{}
	}
	c := obj.GPUSharedResourceTemplatesConfig
	if c.ConfigMapNamespace == "" {
		c.ConfigMapNamespace = "koordinator-system"
	}
	if c.ConfigMapName == "" {
		c.ConfigMapName = "gpu-shared-resource-templates"
	}
	if len(c.MatchedResources) == 0 {
		c.MatchedResources = []string{"huawei.com/npu-core"}
	}
}
