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

// Package realnode is the real-node end-to-end suite (make test-realnode; build tag realnode, so that `go test
// ./...` leaves it out): it starts a real single-node cluster (package node: kubelet, containerd, runc, the CNI
// bridge, kube-proxy and the control plane), installs Koord with helm from charts/koord and the images of `make
// images`, and checks on the real kernel that Koord works: the components become Ready, NodeMetric reports a
// real pod's usage as its cgroup accounts it, colocation gives the node batch resources, a pod matched by a
// ClusterColocationProfile is mutated through the webhook Service, scheduled by koord-scheduler and gets BE
// cgroup settings from its batch resources, a BE container starts with its CFS quota set (koordlet's NRI hook
// in containerd), BE suppression lowers a BE burner's CPU while an LS burner keeps
// its share, and helm uninstall removes Koord. The node's Stop then leaves the host as it found it, which the
// suite checks too. docs/install.md says how it works.
package realnode
