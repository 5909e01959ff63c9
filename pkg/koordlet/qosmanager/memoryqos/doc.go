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

// Package memoryqos is the memory QoS strategy (feature gate CgroupReconcile, Koordinator's name; alpha, off):
// it writes the memory cgroup knobs of every pod and container, and of kubelet's QoS cgroups, from the
// memoryQOS of the pod's class in the NodeSLO's resourceQOSStrategy (LSE pods take the LSR class's, pods
// without a class label the class their Kubernetes QoS class maps to), merged with the pod's
// koordinator.sh/memoryQOS annotation.
//
// With request r and limit l of a container (batch-memory for BE pods; the node's allocatable memory when the
// container has no limit):
//
//	memory.min  = r × minLimitPercent / 100
//	memory.low  = r × lowLimitPercent / 100, raised to memory.min when lower
//	memory.high = r + (l − r) × throttlingPercent / 100, rounded down to a page, raised to memory.min when
//	              lower; "max" when throttlingPercent is 0
//
// A pod cgroup gets memory.min and memory.low from the pod's request (no memory.high); kubelet's kubepods
// cgroup gets the sum of every pod's, and the burstable and besteffort cgroups the sums of theirs, so that the
// protection reaches the pods (cgroup v2 protects a cgroup only as far as its ancestors are protected). The
// Anolis OS knobs are written where the kernel has them: memory.wmark_ratio, memory.wmark_scale_factor and
// memory.wmark_min_adj (async reclaim) on pods and containers, memory.priority, memory.use_priority_oom and
// memory.oom.group on pods, containers and the QoS cgroups. On cgroup v1 kernels without memory.min, low and
// high (all but Anolis OS) those knobs are skipped after one log line per knob.
//
// A class whose memoryQOS is not enabled gets Koordinator's "none" values: memory.min and memory.low 0,
// memory.high max, wmark_ratio 0, wmark_scale_factor 50, wmark_min_adj 0, priority, use_priority_oom and
// oom.group 0. So turning the class off, or the pod's policy to none, reverts every knob it had set. The pod
// annotation's policy is "default" (or empty: the class's values), "none" (memory QoS off for the pod) or "auto"
// (Koordinator's recommended values for the class, whatever the NodeSLO says); knobs set in the annotation
// override the policy's. A malformed annotation is reported once as a Warning Event on the pod, and the pod
// gets its class's values. Page cache limits (memory.pagecache_limit.*) are not written.
package memoryqos
