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

package sim

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/pkg/koordlet/nodetopology"
)

// AnnotationCPUTopology gives a simulated node's CPU topology as "<sockets>x<cores per socket>x<threads per
// core>", e.g. "2x16x2" (64 CPUs, one NUMA node per socket). Without it the node has one socket of 2 threads
// per core for its CPU capacity (1 thread when the capacity is odd). Memory is split evenly over the sockets.
const AnnotationCPUTopology = "sim.koord.dev/cpu-topology"

// topologyOf returns the synthetic topology of node, or an error naming the annotation when it does not parse
// or does not match the node's CPU capacity.
func topologyOf(node *corev1.Node) (*nodetopology.Topology, error) {
	cpus := node.Status.Capacity.Cpu().Value()
	memory := node.Status.Capacity.Memory().Value()
	sockets, cores, threads := int64(1), cpus, int64(1)
	if cpus%2 == 0 && cpus > 0 {
		cores, threads = cpus/2, 2
	}
	if v, ok := node.Annotations[AnnotationCPUTopology]; ok {
		if _, err := fmt.Sscanf(v, "%dx%dx%d", &sockets, &cores, &threads); err != nil || sockets < 1 || cores < 1 || threads < 1 {
			return nil, fmt.Errorf("annotation %s: %q is not <sockets>x<cores per socket>x<threads per core>", AnnotationCPUTopology, v)
		}
		if n := sockets * cores * threads; n != cpus {
			return nil, fmt.Errorf("annotation %s: %q has %d CPUs, the node's capacity is %d", AnnotationCPUTopology, v, n, cpus)
		}
	}
	if cpus < 1 {
		return nil, fmt.Errorf("node %s has no CPU capacity", node.Name)
	}
	return nodetopology.Synthetic(int(sockets), int(cores), int(threads), memory/sockets), nil
}

// topologySource is a simulated node's topology for nodetopology's reporter: synthetic, and no kubelet CPU
// state (simulated kubelets pin nothing).
type topologySource struct{ view *nodeView }

// Read implements nodetopology.Source.
func (s topologySource) Read() (*nodetopology.Topology, *nodetopology.KubeletCPUState, error) {
	node := s.view.Node()
	if node == nil {
		return nil, nil, fmt.Errorf("node %s is not known yet", s.view.name)
	}
	t, err := topologyOf(node)
	return t, nil, err
}
