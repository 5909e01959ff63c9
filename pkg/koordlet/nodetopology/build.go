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

package nodetopology

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// ZoneTypeNode is the zone type of a NUMA node, and zoneName names the zone of NUMA node id, as Koordinator
// names them.
const ZoneTypeNode = "Node"

func zoneName(id int32) string { return fmt.Sprintf("node-%d", id) }

// managedAnnotations are the NodeResourceTopology annotations koordlet owns.
var managedAnnotations = []string{
	extension.AnnotationNodeCPUTopology,
	extension.AnnotationNodeCPUSharedPools,
	extension.AnnotationNodeBECPUSharedPools,
	extension.AnnotationNodeCPUAllocs,
	extension.AnnotationKubeletCPUManagerPolicy,
}

// Report is what koordlet writes into the node's NodeResourceTopology.
type Report struct {
	TopologyPolicies []string
	Zones            topologyv1alpha1.ZoneList
	// Annotations holds a value for every managed annotation.
	Annotations map[string]string
}

// Build computes the report from the topology, kubelet's CPU state, the node (its
// node.koordinator.sh/reservation annotation) and the node's pods:
//   - zones: one per NUMA node, with its CPUs and memory as capacity, allocatable and available;
//   - pod-cpu-allocs: the static CPU manager's exclusive CPUs of pods Koord does not bind (neither LS nor BE,
//     and without a scheduled cpuset);
//   - cpu-shared-pools (LS and Burstable pods): every CPU but kubelet's exclusive ones, the node's reserved
//     CPUs and the CPUs of LSE and LSR pods; be-cpu-shared-pools: the same, keeping the LSR pods' CPUs;
//     both by NUMA node, as Koordinator writes them.
//
// A pod or node annotation that does not parse is left out and named in the returned error; the report is
// still built from the rest.
func Build(topo *Topology, kubelet *KubeletCPUState, node *corev1.Node, pods []*corev1.Pod) (*Report, error) {
	var errs []error
	all := cpuset.New()
	info := map[int]extension.CPUInfo{}
	for _, c := range topo.CPUs {
		all = all.Union(cpuset.New(int(c.ID)))
		info[int(c.ID)] = c
	}

	// kubelet's exclusive CPUs, of pods Koord does not bind (the QoS label only, as Koordinator: a pod without
	// one is kubelet's to pin, unless the scheduler bound it).
	koordBound := map[string]bool{}
	podsByUID := map[string]*corev1.Pod{}
	for _, pod := range pods {
		podsByUID[string(pod.UID)] = pod
		if qos := extension.GetPodQoSClassRaw(pod); qos == extension.QoSLS || qos == extension.QoSBE {
			koordBound[string(pod.UID)] = true
		}
		if status, err := extension.GetResourceStatus(pod.Annotations); err == nil && status != nil && status.CPUSet != "" {
			koordBound[string(pod.UID)] = true
		}
	}
	var allocs extension.PodCPUAllocs
	kubeletExclusive := cpuset.New()
	if kubelet != nil {
		for _, uid := range slices.Sorted(maps.Keys(kubelet.Entries)) {
			if koordBound[uid] {
				continue
			}
			cpus := cpuset.New()
			for _, c := range kubelet.Entries[uid] {
				cpus = cpus.Union(c)
			}
			if cpus.IsEmpty() {
				continue
			}
			alloc := extension.PodCPUAlloc{UID: types.UID(uid), CPUSet: cpus.String(), ManagedByKubelet: true}
			if pod := podsByUID[uid]; pod != nil {
				alloc.Namespace, alloc.Name = pod.Namespace, pod.Name
			}
			allocs = append(allocs, alloc)
			kubeletExclusive = kubeletExclusive.Union(cpus)
		}
	}
	// The pools as koordlet applies them (qosmanager.SplitCPUs): LS the shared pool, BE it and the LSR CPUs.
	split, err := qosmanager.SplitCPUs(node, pods, all, kubeletExclusive)
	if err != nil {
		errs = append(errs, err)
	}
	lsPool, bePool := split.Shared, split.BEEligible()

	r := &Report{Annotations: map[string]string{}}
	holder := &metav1.ObjectMeta{}
	cpuTopology := &extension.CPUTopology{Detail: slices.Clone(topo.CPUs)}
	policy := &extension.KubeletCPUManagerPolicy{Policy: extension.KubeletCPUManagerPolicyNone}
	r.TopologyPolicies = []string{"None"}
	if kubelet != nil {
		policy = &extension.KubeletCPUManagerPolicy{Policy: kubelet.Policy, Options: kubelet.Options, ReservedCPUs: kubelet.ReservedCPUs.String()}
		r.TopologyPolicies = []string{kubelet.topologyPolicy()}
	}
	for _, err := range []error{
		extension.SetCPUTopology(holder, cpuTopology),
		extension.SetCPUSharedPools(holder, extension.AnnotationNodeCPUSharedPools, pools(lsPool, info)),
		extension.SetCPUSharedPools(holder, extension.AnnotationNodeBECPUSharedPools, pools(bePool, info)),
		extension.SetPodCPUAllocs(holder, allocs),
		extension.SetKubeletCPUManagerPolicy(holder, policy),
	} {
		if err != nil {
			return nil, errors.Join(append(errs, err)...)
		}
	}
	r.Annotations = holder.Annotations

	for _, n := range topo.NUMANodes {
		cpu := *resource.NewQuantity(int64(n.CPUs.Size()), resource.DecimalSI)
		mem := *resource.NewQuantity(n.MemoryBytes, resource.BinarySI)
		r.Zones = append(r.Zones, topologyv1alpha1.Zone{
			Name: zoneName(n.ID),
			Type: ZoneTypeNode,
			Resources: topologyv1alpha1.ResourceInfoList{
				{Name: string(corev1.ResourceCPU), Capacity: cpu, Allocatable: cpu, Available: cpu},
				{Name: string(corev1.ResourceMemory), Capacity: mem, Allocatable: mem, Available: mem},
			},
		})
	}
	return r, errors.Join(errs...)
}

// pools splits cpus by NUMA node, ordered by socket and node.
func pools(cpus cpuset.CPUSet, info map[int]extension.CPUInfo) extension.CPUSharedPools {
	type key struct{ socket, node int32 }
	byNode := map[key][]int{}
	for _, id := range cpus.List() {
		c := info[id]
		k := key{c.Socket, c.Node}
		byNode[k] = append(byNode[k], id)
	}
	out := extension.CPUSharedPools{}
	for k, ids := range byNode {
		out = append(out, extension.CPUSharedPool{Socket: k.socket, Node: k.node, CPUSet: cpuset.New(ids...).String()})
	}
	slices.SortFunc(out, func(a, b extension.CPUSharedPool) int {
		return cmp.Or(cmp.Compare(a.Socket, b.Socket), cmp.Compare(a.Node, b.Node))
	})
	return out
}
