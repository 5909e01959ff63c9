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

package v1alpha1

// HostApplicationSpec describes an out-of-band application on the node (a process outside Kubernetes, e.g. a
// YARN NodeManager) whose resources the node agent accounts for and manages by QoS class.
type HostApplicationSpec struct {
	// Name identifies the application on the node.
	// +optional
	Name string `json:"name,omitempty"`
	// Priority is the Koordinator priority class of the application.
	// +kubebuilder:validation:Enum="";koord-prod;koord-mid;koord-batch;koord-free
	// +optional
	Priority string `json:"priority,omitempty"`
	// QoS is the Koordinator QoS class of the application.
	// +kubebuilder:validation:Enum="";LSE;LSR;LS;BE;SYSTEM
	// +optional
	QoS string `json:"qos,omitempty"`
	// CgroupPath is the cgroup the application runs in. When unset, it is derived from Priority and QoS.
	// +optional
	CgroupPath *CgroupPath `json:"cgroupPath,omitempty"`
	// Strategy is the QoS strategy of the application. Reserved; it has no fields yet.
	// +optional
	Strategy *HostApplicationStrategy `json:"strategy,omitempty"`
}

// HostApplicationStrategy is the QoS strategy of a host application. It is reserved and has no fields yet.
type HostApplicationStrategy struct{}

// CgroupPath locates the cgroup of an out-of-band application: Base/ParentDir/RelativePath.
type CgroupPath struct {
	// Base is the cgroup directory the path starts from; its on-disk form depends on the cgroup driver.
	// +optional
	Base CgroupBaseType `json:"base,omitempty"`
	// ParentDir is the parent directory under Base.
	// +optional
	ParentDir string `json:"parentDir,omitempty"`
	// RelativePath is the application's directory under ParentDir.
	// +optional
	RelativePath string `json:"relativePath,omitempty"`
}

// CgroupBaseType names the base cgroup directory of a CgroupPath.
// +kubebuilder:validation:Enum=CgroupRoot;Kubepods;KubepodsBurstable;KubepodsBesteffort
type CgroupBaseType string

const (
	// CgroupBaseTypeRoot is the cgroup root, e.g. /sys/fs/cgroup/cpu/.
	CgroupBaseTypeRoot CgroupBaseType = "CgroupRoot"
	// CgroupBaseTypeKubepods is the kubepods cgroup, e.g. /sys/fs/cgroup/cpu/kubepods/.
	CgroupBaseTypeKubepods CgroupBaseType = "Kubepods"
	// CgroupBaseTypeKubeBurstable is the Burstable pods' cgroup, e.g. /sys/fs/cgroup/cpu/kubepods/burstable/.
	CgroupBaseTypeKubeBurstable CgroupBaseType = "KubepodsBurstable"
	// CgroupBaseTypeKubeBesteffort is the BestEffort pods' cgroup, e.g. /sys/fs/cgroup/cpu/kubepods/besteffort/.
	CgroupBaseTypeKubeBesteffort CgroupBaseType = "KubepodsBesteffort"
)
