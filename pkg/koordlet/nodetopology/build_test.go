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
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
)

func TestBuild(t *testing.T) {
	topo, err := ReadTopology(writeSysfs(t, twoSockets(), true, 4<<20))
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name, qos, cpus string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name), Labels: map[string]string{}, Annotations: map[string]string{}}}
		if qos != "" {
			p.Labels[extension.LabelPodQoS] = qos
		}
		if cpus != "" {
			p.Annotations[extension.AnnotationResourceStatus] = `{"cpuset":"` + cpus + `"}`
		}
		return p
	}
	pods := []*corev1.Pod{
		pod("lse", "LSE", "0,4"),
		pod("lsr", "LSR", "1,5"),
		// A Guaranteed pod without a QoS label: kubelet's static CPU manager pinned it.
		pod("guaranteed", "", ""),
		// An LS pod kubelet also lists (a Guaranteed LS pod): Koord's, not counted as kubelet's.
		pod("ls", "LS", ""),
	}
	kubelet := &KubeletCPUState{
		Policy: "static", Options: map[string]string{"full-pcpus-only": "true"}, ReservedCPUs: cpuset.New(0),
		TopologyPolicy: "single-numa-node", TopologyScope: "pod",
		Entries: map[string]map[string]cpuset.CPUSet{
			"guaranteed": {"main": cpuset.New(2, 6)},
			"ls":         {"main": cpuset.New(3)},
		},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{
		extension.AnnotationNodeReservation: `{"reservedCPUs":"7"}`,
	}}}
	got, err := Build(topo, kubelet, node, pods)
	if err != nil {
		t.Fatal(err)
	}
	// Every CPU 0-7; kubelet's 2,6 and the reserved 7 are in no pool; LSE 0,4 and LSR 1,5 are not shared by LS
	// pods, only LSE's are out of the BE pool.
	cpu := func(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }
	mem := *resource.NewQuantity(4<<30, resource.BinarySI)
	zone := func(id string) topologyv1alpha1.Zone {
		return topologyv1alpha1.Zone{Name: "node-" + id, Type: "Node", Resources: topologyv1alpha1.ResourceInfoList{
			{Name: "cpu", Capacity: cpu(4), Allocatable: cpu(4), Available: cpu(4)},
			{Name: "memory", Capacity: mem, Allocatable: mem, Available: mem},
		}}
	}
	want := &Report{
		TopologyPolicies: []string{"SingleNUMANodePodLevel"},
		Zones:            topologyv1alpha1.ZoneList{zone("0"), zone("1")},
		Annotations: map[string]string{
			extension.AnnotationNodeCPUTopology: `{"detail":[{"id":0,"core":0,"socket":0,"node":0},{"id":1,"core":1,"socket":0,"node":0},` +
				`{"id":2,"core":2,"socket":1,"node":1},{"id":3,"core":3,"socket":1,"node":1},{"id":4,"core":0,"socket":0,"node":0},` +
				`{"id":5,"core":1,"socket":0,"node":0},{"id":6,"core":2,"socket":1,"node":1},{"id":7,"core":3,"socket":1,"node":1}]}`,
			extension.AnnotationNodeCPUSharedPools:      `[{"socket":1,"node":1,"cpuset":"3"}]`,
			extension.AnnotationNodeBECPUSharedPools:    `[{"socket":0,"node":0,"cpuset":"1,5"},{"socket":1,"node":1,"cpuset":"3"}]`,
			extension.AnnotationNodeCPUAllocs:           `[{"namespace":"ns","name":"guaranteed","uid":"guaranteed","cpuset":"2,6","managedByKubelet":true}]`,
			extension.AnnotationKubeletCPUManagerPolicy: `{"policy":"static","options":{"full-pcpus-only":"true"},"reservedCPUs":"0"}`,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want,+got):\n%s", diff)
	}

	// A pod whose resource-status does not parse is named, and the rest is still reported.
	bad := pod("bad", "LSR", "")
	bad.Annotations[extension.AnnotationResourceStatus] = `{"cpuset":"x"}`
	got, err = Build(topo, nil, node, append(pods, bad))
	if err == nil || got == nil {
		t.Fatalf("Build with a malformed resource-status = %v, %v; want a report and an error", got, err)
	}
	if got.Annotations[extension.AnnotationKubeletCPUManagerPolicy] != `{"policy":"none"}` {
		t.Errorf("without kubelet state the policy is %s, want none", got.Annotations[extension.AnnotationKubeletCPUManagerPolicy])
	}
}

func TestReadKubeletCPUState(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("kind: KubeletConfiguration\ncpuManagerPolicy: static\nreservedSystemCPUs: \"0-1\"\n"+
		"cpuManagerPolicyOptions:\n  full-pcpus-only: \"true\"\ntopologyManagerPolicy: best-effort\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpu_manager_state"), []byte(
		`{"policyName":"static","defaultCpuSet":"0-1,4-7","entries":{"uid-1":{"app":"2-3"}},"checksum":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadKubeletCPUState(config, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := &KubeletCPUState{
		Policy: "static", Options: map[string]string{"full-pcpus-only": "true"}, ReservedCPUs: cpuset.New(0, 1),
		TopologyPolicy: "best-effort", Entries: map[string]map[string]cpuset.CPUSet{"uid-1": {"app": cpuset.New(2, 3)}},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b cpuset.CPUSet) bool { return a.Equals(b) })); diff != "" {
		t.Errorf("state (-want,+got):\n%s", diff)
	}
	if p := got.topologyPolicy(); p != "BestEffortContainerLevel" {
		t.Errorf("topology policy %s, want BestEffortContainerLevel", p)
	}

	// Nothing there: kubelet's defaults.
	got, err = ReadKubeletCPUState(filepath.Join(dir, "missing.yaml"), t.TempDir())
	if err != nil || got.Policy != "none" || len(got.Entries) != 0 {
		t.Errorf("without files: %+v, %v; want policy none and no entries", got, err)
	}
	// A checkpoint that does not parse is an error naming the file.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "cpu_manager_state"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKubeletCPUState("", bad); err == nil {
		t.Error("a malformed checkpoint was accepted")
	}
}

func TestKubeletPinned(t *testing.T) {
	dir := t.TempDir()
	k := NewKubeletPinned(dir)
	if got, err := k.Pinned(); err != nil || got != nil {
		t.Fatalf("without a checkpoint: %v, %v; want none", got, err)
	}
	path := filepath.Join(dir, "cpu_manager_state")
	if err := os.WriteFile(path, []byte(`{"policyName":"static","defaultCpuSet":"0,3","entries":{"u1":{"a":"1","b":"2"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := k.Pinned()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[types.UID]string{"u1": "1-2"}, stringsOf(got)); diff != "" {
		t.Errorf("pinned (-want,+got):\n%s", diff)
	}
	// A broken checkpoint keeps the last good answer, with the error.
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = k.Pinned()
	if err == nil || stringsOf(got)["u1"] != "1-2" {
		t.Errorf("after a broken checkpoint: %v, %v; want the last answer and an error", got, err)
	}
}

func stringsOf(m map[types.UID]cpuset.CPUSet) map[types.UID]string {
	out := map[types.UID]string{}
	for k, v := range m {
		out[k] = v.String()
	}
	return out
}
