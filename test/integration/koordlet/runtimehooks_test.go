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
	"path/filepath"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/google/go-cmp/cmp"

	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/runtimehooks/nritest"
)

// TestRuntimeHooks runs koordlet with its NRI hooks on and the reconcile loop off, registered with the
// runtime's side of NRI (NRI's own adaptation, as containerd runs it): when the runtime starts the BE pod's
// sandbox, koordlet writes the pod's batch settings to its cgroup, and the runtime's CreateContainer reply
// carries the container's.
func TestRuntimeHooks(t *testing.T) {
	n := newNode(t, nodeConfig{
		version: cgroup.V1, driver: cgroup.Cgroupfs,
		cpus: 4, allocatableCPU: "4", memory: 8 * gi,
		busyCores: 1, memUsed: 2 * gi, memUsedWithCache: 3 * gi,
	})
	be := n.addPod(bePod("be", 0.1))

	socket := filepath.Join(t.TempDir(), "nri.sock")
	rt := nritest.StartRuntime(t, socket)

	startAgentWith(t, koordletConfig(t), n, func(o *koordlet.Options) {
		o.RuntimeHooks.NRI = true
		o.RuntimeHooks.SocketPath = socket
		o.RuntimeHooks.Backoff = 50 * time.Millisecond
	}, "PodCgroupReconcile=false")

	sandbox := &adaptation.PodSandbox{Id: "sandbox", Name: be.Name, Namespace: be.Namespace, Uid: string(be.UID)}
	podDir := n.podDir(be)
	// kubelet made the pod's cgroup with cpu.shares 2 (BestEffort); RunPodSandbox gives it the batch ones.
	eventually(t, "RunPodSandbox writing the pod's batch cpu.shares", func(ctx context.Context) (bool, error) {
		if err := rt.RunPodSandbox(ctx, &adaptation.RunPodSandboxRequest{Pod: sandbox}); err != nil {
			return false, err
		}
		shares, _ := n.readKnobInt(podDir, "cpu.shares")
		return shares == 512, nil
	})
	// 1000 milli-cores of batch-cpu for kubelet's period of 100 ms, 1Gi of batch-memory.
	for knob, want := range map[string]int64{"cpu.cfs_quota_us": 100000, "memory.limit_in_bytes": gi} {
		if got, _ := n.readKnobInt(podDir, knob); got != want {
			t.Errorf("pod cgroup %s = %d, want %d", knob, got, want)
		}
	}

	resp, err := rt.CreateContainer(t.Context(), &adaptation.CreateContainerRequest{Pod: sandbox,
		Container: &adaptation.Container{Id: "main", PodSandboxId: "sandbox", Name: "main"}})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	res := resp.GetAdjust().GetLinux().GetResources()
	got := map[string]int64{
		"shares": int64(res.GetCpu().GetShares().GetValue()),
		"quota":  res.GetCpu().GetQuota().GetValue(),
		"memory": res.GetMemory().GetLimit().GetValue(),
	}
	if diff := cmp.Diff(map[string]int64{"shares": 512, "quota": 100000, "memory": gi}, got); diff != "" {
		t.Errorf("the container's adjustment (-want,+got):\n%s", diff)
	}
}
