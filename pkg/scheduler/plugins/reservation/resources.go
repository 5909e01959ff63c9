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
	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// free returns the unrequested amount of resource name on a node, in quantity.Value's unit: allocatable −
// requested of its NodeInfo.
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
