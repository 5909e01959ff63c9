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

// Package cpuburst is the CPU burst strategy for LS pods (feature gate CPUBurst), driven by the NodeSLO's
// cpuBurstStrategy and the pod's koordinator.sh/cpuBurst annotation, which overrides it field by field (a
// malformed annotation is reported as an InvalidAnnotation Event on the pod and ignored). It applies to the
// running containers with a CPU limit of LS pods (labelled LS, or Kubernetes Burstable without a label); LSE,
// LSR, BE and SYSTEM pods are left alone.
//
//   - cpuBurstOnly: cfs_burst_us (v2 cpu.max.burst) = limit cores × cpuBurstPercent/100 × period, capped at the
//     container's quota because the kernel takes no more; the pod gets the sum of its containers'.
//   - cfsQuotaBurstOnly: a container throttled since the last round (cpu.stat nr_throttled grew) gets its quota
//     × 1.2, up to cfsQuotaBurstPercent of its limit, while the node's shared pool is below
//     sharePoolThresholdPercent × 0.9 (averaged over 10 s); at or above the threshold raised quotas go down by
//     × 0.8, never below the limit; in between they stay. cfsQuotaBurstPeriodSeconds (when not -1) bounds how
//     long a container may stay above its limit with a token bucket. The pod's quota follows its containers'.
//   - auto: both. none: containers go back to burst 0 and the quota of their limit, once.
//
// Writes keep a child's quota within its parent's and a burst within its quota at every step.
package cpuburst
