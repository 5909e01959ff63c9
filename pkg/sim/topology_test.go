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
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTopologyOf(t *testing.T) {
	node := func(cpus string, annotation string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{}}, Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpus), corev1.ResourceMemory: resource.MustParse("64Gi"),
		}}}
		if annotation != "" {
			n.Annotations[AnnotationCPUTopology] = annotation
		}
		return n
	}
	tests := map[string]struct {
		node                   *corev1.Node
		cpus, numaNodes, cores int
		wantErr                bool
	}{
		"annotated 2x16x2":         {node: node("64", "2x16x2"), cpus: 64, numaNodes: 2, cores: 32},
		"default: 2 threads":       {node: node("8", ""), cpus: 8, numaNodes: 1, cores: 4},
		"default, odd: 1 thread":   {node: node("3", ""), cpus: 3, numaNodes: 1, cores: 3},
		"annotation not a shape":   {node: node("8", "eight"), wantErr: true},
		"annotation of other size": {node: node("8", "2x4x2"), wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			topo, err := topologyOf(tc.node)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("topologyOf accepted %v", tc.node.Annotations)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cores := map[int32]bool{}
			for _, c := range topo.CPUs {
				cores[c.Core] = true
			}
			if len(topo.CPUs) != tc.cpus || len(topo.NUMANodes) != tc.numaNodes || len(cores) != tc.cores {
				t.Errorf("%d CPUs, %d NUMA nodes, %d cores; want %d, %d, %d", len(topo.CPUs), len(topo.NUMANodes), len(cores), tc.cpus, tc.numaNodes, tc.cores)
			}
			if got := topo.NUMANodes[0].MemoryBytes; got != (64<<30)/int64(tc.numaNodes) {
				t.Errorf("NUMA node 0 has %d bytes, want the node's memory split over %d", got, tc.numaNodes)
			}
		})
	}
}
