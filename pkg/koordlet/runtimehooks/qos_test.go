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

package runtimehooks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cgroupreconcile"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

// qosSLO enables memory QoS (100 % of the request protected, throttling at half-way to the limit) and group
// identity for the LS class.
func qosSLO() *slov1alpha1.NodeSLO {
	return qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: &slov1alpha1.ResourceQOSStrategy{
		LSClass: &slov1alpha1.ResourceQOS{
			CPUQOS: &slov1alpha1.CPUQOSCfg{Enable: ptr.To(true)},
			MemoryQOS: &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true), MemoryQOS: slov1alpha1.MemoryQOS{
				MinLimitPercent: ptr.To[int64](100), LowLimitPercent: ptr.To[int64](100), ThrottlingPercent: ptr.To[int64](50),
			}},
		},
	}})
}

func lsMemoryPod() *corev1.Pod {
	return qostest.Pod("ls", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
		qostest.Container("app", "", qostest.Resources("memory", "1Gi"), qostest.Resources("memory", "2Gi")))
}

// At RunPodSandbox the pod's cgroup gets its memory protection and group identity (an Anolis-like kernel).
func TestRunPodSandboxQoS(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			fs := cgrouptest.NewFS(t, v, cgroup.Cgroupfs, cgrouptest.WithKnobs(map[string]string{
				"cpu.bvt.warp_ns": "0\n", "memory.min": "0\n", "memory.low": "0\n",
			}))
			cg := cgroup.NewManager(fs.Layout())
			_, ctx := ktesting.NewTestContext(t)
			pod := lsMemoryPod()
			pod.Status.ContainerStatuses = nil
			dir := fs.AddPod(corev1.PodQOSBurstable, pod.UID)
			h := New(cgroupreconcile.New(cg, cgroupreconcile.Features{BatchResource: true}),
				&inputs{node: node(), pods: []*corev1.Pod{pod}, slo: qosSLO()},
				WithQoS(QoS{Cgroups: cg, MemoryQoS: true, GroupIdentity: true}))
			if err := h.RunPodSandbox(ctx, sandbox(pod)); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, k := range []string{"memory.min", "memory.low", "cpu.bvt.warp_ns"} {
				got[k] = strings.TrimSpace(fs.ReadFile(dir, k))
			}
			want := map[string]string{"memory.min": "1073741824", "memory.low": "1073741824", "cpu.bvt.warp_ns": "2"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pod cgroup (-want +got):\n%s", diff)
			}
		})
	}
}

// At CreateContainer, on cgroup v2, the container's memory QoS comes as unified resources; cgroup v1 has none.
func TestCreateContainerMemoryQoS(t *testing.T) {
	for _, tc := range []struct {
		v    cgroup.Version
		want map[string]string
	}{
		// high = 1Gi + (2Gi − 1Gi) × 50 %.
		{cgroup.V2, map[string]string{"memory.min": "1073741824", "memory.low": "1073741824", "memory.high": "1610612736"}},
		{cgroup.V1, nil},
	} {
		t.Run(fmt.Sprint(tc.v), func(t *testing.T) {
			fs := cgrouptest.NewFS(t, tc.v, cgroup.Cgroupfs)
			cg := cgroup.NewManager(fs.Layout())
			_, ctx := ktesting.NewTestContext(t)
			pod := lsMemoryPod()
			h := New(cgroupreconcile.New(cg, cgroupreconcile.Features{}), &inputs{node: node(), pods: []*corev1.Pod{pod}, slo: qosSLO()},
				WithQoS(QoS{Cgroups: cg, MemoryQoS: true}))
			adjust, _, err := h.CreateContainer(ctx, sandbox(pod), &api.Container{Name: "app"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, adjust.GetLinux().GetResources().GetUnified()); diff != "" {
				t.Errorf("unified resources (-want +got):\n%s", diff)
			}
		})
	}
}

// Without a NodeSLO yet, nothing is decided and nothing fails.
func TestQoSWithoutNodeSLO(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Cgroupfs)
	cg := cgroup.NewManager(fs.Layout())
	_, ctx := ktesting.NewTestContext(t)
	pod := lsMemoryPod()
	dir := fs.AddPod(corev1.PodQOSBurstable, pod.UID)
	h := New(cgroupreconcile.New(cg, cgroupreconcile.Features{}), &inputs{node: node(), pods: []*corev1.Pod{pod}},
		WithQoS(QoS{Cgroups: cg, MemoryQoS: true, GroupIdentity: true}))
	if err := h.RunPodSandbox(ctx, sandbox(pod)); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(fs.ReadFile(dir, "memory.min")); got != "0" {
		t.Errorf("memory.min = %s without a NodeSLO, want it untouched", got)
	}
	adjust, _, err := h.CreateContainer(ctx, sandbox(pod), &api.Container{Name: "app"})
	if err != nil || len(adjust.GetLinux().GetResources().GetUnified()) != 0 {
		t.Errorf("CreateContainer = %v, %v; want no unified resources", adjust.GetLinux().GetResources().GetUnified(), err)
	}
}
