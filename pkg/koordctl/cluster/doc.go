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

// Package cluster owns the lifecycle of a local Koord cluster made of real parts: etcd and kube-apiserver
// (through controller-runtime's envtest control plane, with an administrator kubeconfig any kubectl since 1.20
// reads), Koord's CRDs, namespace, PriorityClasses and slo-controller-config with colocation on,
// kube-controller-manager and kube-scheduler (default-scheduler) so that Deployments, Jobs, namespace deletion
// and garbage collection work as on any cluster, koord-manager (webhooks registered by URL on 127.0.0.1),
// koord-scheduler, KWOK with fake nodes, and the simulated node agents of package sim, in this process, for
// those nodes.
//
// Start brings it up step by step and returns a running Cluster; Stop takes it down in reverse order and
// removes what Start created. `koordctl up`, `make demo` and the end-to-end tests use it:
//
//	c, err := cluster.Start(ctx, opts, printer)
//	...
//	defer c.Stop()
//	cfg := c.RESTConfig()
//
// # State directory
//
// Options.StateDir holds everything of a running cluster: the pid file (PIDFile; the running process holds a
// flock on it, so a second cluster on the same directory is refused and Down finds the process to signal), the
// administrator kubeconfig (KubeconfigFile), a sample BE pod (SampleBEPodFile), the logs of every process
// (LogDir, kept after Stop unless Options.Clean) and the run directory (RunDir: etcd data, certificates,
// generated configurations; removed on Stop). Every child process names the run directory on its command line,
// so the processes of a run whose koordctl was killed are found and stopped by the next Start or by Down.
//
// # Processes
//
// kube-controller-manager, kube-scheduler, koord-manager, koord-scheduler and KWOK run from Options.BinDir,
// each in a process group of its own (a Ctrl-C at the terminal reaches koordctl only, which then stops them in
// order) and with a parent-death signal, so they do not outlive koordctl. A component that exits while the cluster runs closes Failed, and Err names it
// with the end of its log; kube-apiserver (and etcd behind it) is watched through /readyz.
package cluster
