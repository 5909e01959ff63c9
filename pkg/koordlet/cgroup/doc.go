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

// Package cgroup owns every cgroup file the node agent reads or writes.
//
// It knows two things: where kubelet puts pods and containers in the cgroup
// tree ([Layout]: cgroup v1 or v2, cgroupfs or systemd naming, kubelet's
// --cgroup-root), and how to read and write the knobs koordlet uses
// ([Manager]: CPU time, memory working set, throttling, cpu.shares/cpu.weight,
// CFS quota and burst, cpuset.cpus, memory limit and high). Nothing here is
// global: the mount point and the naming come from the Layout a Manager is
// built with, so tests point it at a fake tree in t.TempDir() (see
// package cgrouptest) and the agent at /sys/fs/cgroup or a host mount.
//
// Directories passed to a Manager are cgroup paths relative to a controller
// root, beginning with "/", as the Layout methods return them. On cgroup v1
// the controller (cpu, cpuacct, cpuset, memory) is chosen from the knob's name.
//
// Writes are validated, read back first and skipped when the kernel already
// has the value, so a reconcile loop can call them every round. Errors follow
// one contract:
//   - [ErrNotFound]: the cgroup directory is gone (the pod or container
//     exited); callers skip it quietly and nothing is logged.
//   - [ErrNotSupported]: the directory exists but the knob file does not (the
//     kernel lacks the feature, or a v2 controller is not enabled there); the
//     Manager logs this once per knob, callers skip it quietly.
//   - [ErrInvalidValue]: the value asked for is out of the knob's range; the
//     message names the knob, the directory and the value.
//
// Anything else (a malformed file, a value the kernel rejects, such as a CFS
// burst larger than the quota (EINVAL), a v1 cpuset outside its parent's
// (EACCES) or smaller than a child's (EBUSY)) is returned wrapped with the knob and directory; errors.Is finds
// the errno.
package cgroup
