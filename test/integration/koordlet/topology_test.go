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

package koordlet

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// TestNodeResourceTopology: koordlet, as its shipped role, creates the node's NodeResourceTopology from the
// machine's topology (4 CPUs on one NUMA node), owned by the node, and keeps the shared pools in line with the
// pods: an LSR pod's CPUs leave the LS pool and stay in the BE pool.
func TestNodeResourceTopology(t *testing.T) {
	n := newNode(t, nodeConfig{version: cgroup.V1, driver: cgroup.Cgroupfs, cpus: 4, allocatableCPU: "4", memory: 8 << 30})
	startAgent(t, koordletConfig(t), n)

	nrt := &topologyv1alpha1.NodeResourceTopology{}
	eventually(t, "no NodeResourceTopology", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, nrt)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if refs := nrt.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].Name != n.name {
		t.Errorf("owner references %+v, want the node", refs)
	}
	cpus, mem := resource.MustParse("4"), resource.MustParse("8Gi")
	wantZones := topologyv1alpha1.ZoneList{{Name: "node-0", Type: "Node", Resources: topologyv1alpha1.ResourceInfoList{
		{Name: "cpu", Capacity: cpus, Allocatable: cpus, Available: cpus},
		{Name: "memory", Capacity: mem, Allocatable: mem, Available: mem},
	}}}
	if diff := cmp.Diff(wantZones, nrt.Zones, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("zones (-want,+got):\n%s", diff)
	}
	if got := nrt.Annotations[extension.AnnotationNodeCPUTopology]; got != `{"detail":[{"id":0,"core":0,"socket":0,"node":0},{"id":1,"core":1,"socket":0,"node":0},{"id":2,"core":2,"socket":0,"node":0},{"id":3,"core":3,"socket":0,"node":0}]}` {
		t.Errorf("cpu-topology annotation %s", got)
	}

	n.addPod(podConfig{
		name: "lsr", qos: extension.QoSLSR,
		requests:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		limits:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		annotations: map[string]string{extension.AnnotationResourceStatus: `{"cpuset":"2-3"}`},
	})
	var pools [2]string
	eventually(t, "the LSR pod's CPUs did not leave the LS shared pool", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, nrt); err != nil {
			return false, err
		}
		pools = [2]string{nrt.Annotations[extension.AnnotationNodeCPUSharedPools], nrt.Annotations[extension.AnnotationNodeBECPUSharedPools]}
		return pools[0] == `[{"socket":0,"node":0,"cpuset":"0-1"}]`, nil
	})
	if want := `[{"socket":0,"node":0,"cpuset":"0-3"}]`; pools[1] != want {
		t.Errorf("BE shared pool %s, want %s (an LSR pod's CPUs are shared with BE pods)", pools[1], want)
	}
}
