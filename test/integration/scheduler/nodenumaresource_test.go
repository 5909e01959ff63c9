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

package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
)

// TestNodeNUMAResource: on a node of 2 sockets (one NUMA node each) × 4 cores × 2 threads, as koordlet reports
// it, LSR pods get disjoint whole cores on one NUMA node (the one with the most free, LeastAllocated), a
// SpreadByPCPUs pod one thread per core, a SingleNUMANode pod that fits on no NUMA node waits with the
// numbers, and after a restart of the scheduler the allocations are kept.
func TestNodeNUMAResource(t *testing.T) {
	f := newFixture(t)
	stop := startScheduler(t, requestsOnly)
	node := f.node("a", "0", 0, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")})
	f.topology(node, 2, 4, 2)

	lsr := func(name, cpus string, annotations map[string]string) *corev1.Pod {
		return f.pod(name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus), corev1.ResourceMemory: resource.MustParse("1Gi")}, func(p *corev1.Pod) {
			p.Labels = map[string]string{extension.LabelPodQoS: string(extension.QoSLSR)}
			p.Annotations = annotations
			p.Spec.Containers[0].Resources.Limits = p.Spec.Containers[0].Resources.Requests
		})
	}
	// Linux numbering: cores 0-3 on NUMA node 0 are CPUs 0-3 with siblings 8-11; cores 4-7 on node 1 are 4-7, 12-15.
	a := f.cpusetOf(lsr("a", "4", nil))
	b := f.cpusetOf(lsr("b", "4", nil))
	if want := "0-1,8-9"; a.String() != want {
		t.Errorf("pod a got CPUs %s, want whole cores 0 and 1 of NUMA node 0 (%s)", a, want)
	}
	if want := "4-5,12-13"; b.String() != want {
		t.Errorf("pod b got CPUs %s, want whole cores of NUMA node 1, which has the most free (%s)", b, want)
	}
	spread := f.cpusetOf(lsr("spread", "2", map[string]string{extension.AnnotationResourceSpec: `{"preferredCPUBindPolicy":"SpreadByPCPUs"}`}))
	if want := "2-3"; spread.String() != want {
		t.Errorf("the SpreadByPCPUs pod got CPUs %s, want one thread of each of two cores (%s)", spread, want)
	}

	// NUMA node 0 has 2 free CPUs left (10, 11), node 1 four: 6 fit on the node, on no NUMA node.
	single := lsr("single", "6", map[string]string{extension.AnnotationNUMATopologySpec: `{"numaTopologyPolicy":"SingleNUMANode"}`})
	msg := f.unschedulable(single)
	for _, want := range []string{"NUMA node 0: 2 free CPUs", "NUMA node 1: 4 free CPUs", "the pod needs 6 CPUs", "on one NUMA node (SingleNUMANode)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("PodScheduled message %q does not say %q", msg, want)
		}
	}
	if err := env.Client.Delete(t.Context(), single, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}

	// A new scheduler rebuilds the allocations from the pods' resource-status.
	stop()
	startScheduler(t, requestsOnly)
	after := f.cpusetOf(lsr("after", "2", nil))
	for name, other := range map[string]cpuset.CPUSet{"a": a, "b": b, "spread": spread} {
		if !after.Intersection(other).IsEmpty() {
			t.Errorf("after a restart pod after got CPUs %s, which pod %s holds (%s)", after, name, other)
		}
	}
}

// TestNodeNUMAResourceExclusive: a pod spanning both NUMA nodes gets its memory split evenly over them; then a
// SingleNUMANode pod is refused there (singleNUMANodeExclusive Required, the default) with the reason, and
// placed with Preferred.
func TestNodeNUMAResourceExclusive(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	node := f.node("a", "0", 0, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")})
	f.topology(node, 2, 4, 2)
	lsr := func(name, cpus, numaSpec string) *corev1.Pod {
		return f.pod(name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus), corev1.ResourceMemory: resource.MustParse("1Gi")}, func(p *corev1.Pod) {
			p.Labels = map[string]string{extension.LabelPodQoS: string(extension.QoSLSR)}
			p.Annotations = map[string]string{extension.AnnotationNUMATopologySpec: numaSpec}
			p.Spec.Containers[0].Resources.Limits = p.Spec.Containers[0].Resources.Requests
		})
	}

	// 10 CPUs need both NUMA nodes (8 CPUs each).
	wide := lsr("wide", "10", `{"numaTopologyPolicy":"Restricted"}`)
	f.cpusetOf(wide)
	got := &corev1.Pod{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(wide), got); err != nil {
		t.Fatal(err)
	}
	status, err := extension.GetResourceStatus(got.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	memory := map[int32]string{}
	for _, r := range status.NUMANodeResources {
		memory[r.Node] = r.Resources.Memory().String()
	}
	if diff := cmp.Diff(map[int32]string{0: "512Mi", 1: "512Mi"}, memory); diff != "" {
		t.Errorf("the wide pod's memory per NUMA node (-want,+got):\n%s", diff)
	}

	msg := f.unschedulable(lsr("narrow", "2", `{"numaTopologyPolicy":"SingleNUMANode"}`))
	for _, want := range []string{"NUMA node 0: 1 pods spanning NUMA nodes", "singleNUMANodeExclusive Required, SingleNUMANode"} {
		if !strings.Contains(msg, want) {
			t.Errorf("PodScheduled message %q does not say %q", msg, want)
		}
	}
	f.cpusetOf(lsr("preferred", "2", `{"numaTopologyPolicy":"SingleNUMANode","singleNUMANodeExclusive":"Preferred"}`))
}

// topology creates the NodeResourceTopology of node as koordlet writes it: sockets × coresPerSocket ×
// threads CPUs, numbered as Linux numbers them (the first thread of every core, then the second), one NUMA
// node per socket with its CPUs and half the node's 10Gi. It is deleted when the test ends.
func (f *fixture) topology(node string, sockets, coresPerSocket, threads int) {
	f.t.Helper()
	cores := sockets * coresPerSocket
	var detail []extension.CPUInfo
	for th := range threads {
		for core := range cores {
			s := core / coresPerSocket
			detail = append(detail, extension.CPUInfo{ID: int32(th*cores + core), Core: int32(core), Socket: int32(s), Node: int32(s)})
		}
	}
	nrt := &topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{Name: node}, TopologyPolicies: []string{"None"}}
	if err := extension.SetCPUTopology(nrt, &extension.CPUTopology{Detail: detail}); err != nil {
		f.t.Fatal(err)
	}
	mem := resource.MustParse(fmt.Sprintf("%dGi", 10/sockets))
	for s := range sockets {
		cpu := *resource.NewQuantity(int64(coresPerSocket*threads), resource.DecimalSI)
		nrt.Zones = append(nrt.Zones, topologyv1alpha1.Zone{Name: fmt.Sprintf("node-%d", s), Type: "Node", Resources: topologyv1alpha1.ResourceInfoList{
			{Name: "cpu", Capacity: cpu, Allocatable: cpu, Available: cpu},
			{Name: "memory", Capacity: mem, Allocatable: mem, Available: mem},
		}})
	}
	if err := env.Client.Create(f.t.Context(), nrt); err != nil {
		f.t.Fatalf("create NodeResourceTopology %s: %v", node, err)
	}
	f.t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), nrt); err != nil {
			f.t.Errorf("delete NodeResourceTopology %s: %v", node, err)
		}
	})
}

// cpusetOf waits until the pod is bound and returns the CPUs its resource-status gives it.
func (f *fixture) cpusetOf(p *corev1.Pod) cpuset.CPUSet {
	f.t.Helper()
	f.boundNode(p)
	got := &corev1.Pod{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(p), got); err != nil {
		f.t.Fatal(err)
	}
	status, err := extension.GetResourceStatus(got.Annotations)
	if err != nil || status == nil {
		f.t.Fatalf("pod %s has no resource-status (%v): annotations %v", p.Name, err, got.Annotations)
	}
	cpus, err := cpuset.Parse(status.CPUSet)
	if err != nil {
		f.t.Fatal(err)
	}
	return cpus
}

// TestNodeNUMAResourceReservation: a Reservation of an LSR template holds whole cores (written on the
// Reservation), a stranger gets others, and the owner gets exactly the Reservation's.
func TestNodeNUMAResourceReservation(t *testing.T) {
	f := newFixture(t)
	startScheduler(t, requestsOnly)
	node := f.node("a", "0", 0, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")})
	f.topology(node, 2, 4, 2)
	four := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	name := f.reservationWith("cpus", "4", func(r *schedulingv1alpha1.Reservation) {
		r.Spec.Template.Labels = map[string]string{extension.LabelPodQoS: string(extension.QoSLSR)}
		r.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: four, Limits: four}
	})
	f.eventuallyReservation(name, schedulingv1alpha1.ReservationAvailable, node)
	var held cpuset.CPUSet
	f.eventually("the Reservation has no resource-status", func(ctx context.Context) (bool, error) {
		r := &schedulingv1alpha1.Reservation{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, r); err != nil {
			return false, err
		}
		status, err := extension.GetResourceStatus(r.Annotations)
		if err != nil || status == nil || status.CPUSet == "" {
			return false, nil
		}
		held, err = cpuset.Parse(status.CPUSet)
		return err == nil, err
	})
	if held.Size() != 4 {
		t.Fatalf("the Reservation holds CPUs %s, want 4", held)
	}
	lsr := func(pod string, labels map[string]string) *corev1.Pod {
		return f.pod(pod, four, func(p *corev1.Pod) {
			p.Labels = labels
			p.Spec.Containers[0].Resources.Limits = four
		})
	}
	stranger := f.cpusetOf(lsr("stranger", map[string]string{extension.LabelPodQoS: string(extension.QoSLSR)}))
	if !stranger.Intersection(held).IsEmpty() {
		t.Errorf("a stranger got CPUs %s, of which the Reservation holds %s", stranger, held)
	}
	owner := f.cpusetOf(lsr("owner", map[string]string{extension.LabelPodQoS: string(extension.QoSLSR), "app": "owner"}))
	if !owner.Equals(held) {
		t.Errorf("the owner got CPUs %s, want the Reservation's %s", owner, held)
	}
}
