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

// Package devices discovers the node's accelerators and RDMA NICs and reports them as the node's Device
// object (scheduling.koordinator.sh/v1alpha1, named like the node), in Koordinator's form, which koord-manager
// turns into the node's device resources and koord-scheduler's DeviceShare plugin allocates:
//
//   - GPUs through NVML (github.com/NVIDIA/go-nvml, loaded at run time; koordlet must be built with cgo):
//     UUID, minor, memory, NUMA node and PCIe root from sysfs, health re-checked every report; resources
//     koordinator.sh/gpu-core 100, gpu-memory (bytes) and gpu-memory-ratio 100 each; the Device's labels name
//     the vendor, model and driver version;
//   - RDMA NICs from /sys/class/infiniband and the PCI tree, with their SR-IOV virtual functions; resource
//     koordinator.sh/rdma 100 each;
//   - a file (--device-file) that declares devices instead, for tests and demos on machines without them.
package devices
