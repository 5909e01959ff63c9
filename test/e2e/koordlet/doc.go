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

// Package koordlet is koordlet's end-to-end test on the machine's real cgroup v1 tree: it builds a kubelet-style
// pod hierarchy under a test-only parent (/sys/fs/cgroup/<controller>/koord-e2e-<pid>-<random>), runs real
// CPU-burning processes in an LS and a BE pod, runs the agent in-process against a real kube-apiserver, and
// checks what the agent reports and enforces against the kernel's own accounting. It needs root and a writable
// cgroup v1 hierarchy and skips otherwise. The tests are in package koordlet_test; this file only documents the
// package.
package koordlet
