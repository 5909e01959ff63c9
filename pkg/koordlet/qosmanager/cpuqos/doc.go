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

// Package cpuqos is the CPU QoS strategy: Koordinator's resourceQOSStrategy cpuQOS, under the policy the
// NodeSLO's policies.cpuPolicy names.
//
// groupIdentity (the default policy; feature gate GroupIdentity, beta, on) writes cpu.bvt.warp_ns, the group
// identity of Anolis OS kernels: each pod's cgroup gets its class's groupIdentity when the class's cpuQOS is
// enabled and 0 otherwise (LSE pods take the LSR class's; a koordinator.sh/cpuQOS annotation with a
// groupIdentity overrides it for the pod); kubelet's besteffort cgroup gets the BE value, burstable the LS value
// and kubepods 0. Host applications of the NodeSLO get their class's value. /proc/sys/kernel/
// sched_group_identity_enabled is turned on while a class is enabled. A kernel without cpu.bvt.warp_ns is said
// once ("not supported on this kernel") when a class enables it, and nothing is written.
//
// coreSched (feature gate CoreSched, alpha, off) uses two mainline features. cgroup idle (cpu.idle, Linux 5.15):
// kubelet's besteffort cgroup gets 1 when the BE class is enabled with schedIdle 1, and 0 otherwise, the
// burstable cgroup likewise from the LS class; kubepods, which holds every pod, is left alone. Host
// applications get their class's value. Core scheduling cookies (prctl PR_SCHED_CORE, CONFIG_SCHED_CORE, Linux 5.14, SMT): the processes of the
// pods of an enabled class get one cookie per group, so that pods of different groups never share a physical
// core at the same time. The group is the pod's koordinator.sh/core-sched-group-id label (empty by default),
// its UID with koordinator.sh/core-sched-policy=exclusive, and none with policy none; classes with coreExpeller
// get their own group per group id. Pods of disabled classes, and with policy none, have their cookies cleared.
// A kernel without core scheduling is said once, and cpu.idle is still written. On Anolis OS kernels with
// group identity, its sysctl is turned off first, as the two exclude each other.
//
// When the policy changes, or a class is turned off, the knobs of the other policy are written back to 0 on
// the next round, so every knob is reverted.
package cpuqos
