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

// Package runtimehooks applies koordlet's per-container rules when the container runtime starts a pod or
// creates or updates a container, before the container's first instruction, through NRI (the Node Resource
// Interface of containerd ≥ 1.7 and CRI-O ≥ 1.26): koordlet registers with the runtime as the NRI plugin
// koordlet_nri, index 00, as Koordinator's does.
//
// The rules are the cgroup reconciler's (package qosmanager/cgroupreconcile), so a container gets at creation
// what the reconcile loop would write a round later:
//   - RunPodSandbox: a BE pod's cgroup gets its batch cpu.shares, CFS quota and memory limit, written to the
//     files (NRI adjusts containers, not pods);
//   - CreateContainer: a BE container's cpu.shares, CFS quota (capped at the besteffort cgroup's on cgroup v1,
//     as a round caps it) and memory limit, and an LSE, LSR or LS container's cpuset (LSE and LSR without a
//     CFS quota), are returned as the container's adjustment;
//   - UpdateContainer: kubelet's updates (a resize, its CPU manager's cpuset reconcile) are answered with the
//     same values, so that kubelet does not undo them.
//
// The reconcile loop stays: it repairs drift and covers containers created while koordlet was away. A hook
// that cannot decide (the pod not yet known to koordlet, a cgroup unreadable) changes nothing and, with the
// failure policy Ignore (the default), never fails the container; with Fail, the runtime fails the request.
// When the runtime offers no NRI socket, koordlet says so once and keeps trying in the background; the
// reconcile loop then applies everything as before.
package runtimehooks
