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
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeviceSource(t *testing.T) {
	tests := map[string]struct {
		annotation string
		want       []string
		wantErr    string
	}{
		"none": {},
		// 2 NUMA nodes (2 sockets of the node's 32 CPUs): GPUs 0, 1 and NIC 0 on NUMA node 0, the rest on 1.
		"GPUs and NICs": {annotation: "gpu=4x16Gi,rdma=2", want: []string{
			"gpu 0 numa 0 pci0000:00 16Gi", "gpu 1 numa 0 pci0000:00 16Gi", "gpu 2 numa 1 pci0000:80 16Gi", "gpu 3 numa 1 pci0000:80 16Gi",
			"rdma 0 numa 0 pci0000:00 4 VFs", "rdma 1 numa 1 pci0000:80 4 VFs",
		}},
		"no count":     {annotation: "gpu=x16Gi", wantErr: `annotation sim.koord.dev/devices: "gpu=x16Gi": gpu=x16Gi is not <count>x<memory> (want gpu=<count>x<memory>,rdma=<count>)`},
		"bad memory":   {annotation: "gpu=2x0", wantErr: `annotation sim.koord.dev/devices: "gpu=2x0": gpu memory "0" is not a positive quantity (want gpu=<count>x<memory>,rdma=<count>)`},
		"unknown kind": {annotation: "tpu=2", wantErr: `annotation sim.koord.dev/devices: "tpu=2": unknown device kind "tpu" (want gpu=<count>x<memory>,rdma=<count>)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{AnnotationCPUTopology: "2x8x2"}},
				Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("64Gi")}}}
			if tc.annotation != "" {
				node.Annotations[AnnotationDevices] = tc.annotation
			}
			found, err := deviceSource{name: "n1", node: func() *corev1.Node { return node }}.Discover(context.Background())
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Discover error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range found.Devices {
				s := fmt.Sprintf("%s %d numa %d %s", d.Type, *d.Minor, d.Topology.NodeID, d.Topology.PCIEID)
				if q, ok := d.Resources["koordinator.sh/gpu-memory"]; ok {
					s += " " + q.String()
				}
				for _, g := range d.VFGroups {
					s += fmt.Sprintf(" %d VFs", len(g.VFs))
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("devices (-want,+got):\n%s", diff)
			}
		})
	}
}
