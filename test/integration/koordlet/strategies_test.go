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
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// lsPod is an LS pod with a CPU limit of 2 cores (kubelet sets a CFS quota of 200000 µs on it).
func lsPod(name string, cpu float64) podConfig {
	return podConfig{
		name: name, qos: extension.QoSLS, priorityClass: extension.PriorityProd,
		requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		cpu:      cpu, memory: 700 * mi, inactiveFile: 100 * mi,
	}
}

// bePod is a BE pod that requests 500 milli-cores of batch-cpu and 512Mi of batch-memory and is limited to 1000
// milli-cores and 1Gi.
func bePod(name string, cpu float64) podConfig {
	return podConfig{
		name: name, qos: extension.QoSBE, priorityClass: extension.PriorityBatch,
		requests: corev1.ResourceList{extension.BatchCPU: resource.MustParse("500"), extension.BatchMemory: resource.MustParse("512Mi")},
		limits:   corev1.ResourceList{extension.BatchCPU: resource.MustParse("1000"), extension.BatchMemory: resource.MustParse("1Gi")},
		cpu:      cpu, memory: 300 * mi, inactiveFile: 44 * mi,
	}
}

// waitForQuota waits until the CFS quota (cgroup v1) of dir is within tolerance of want.
func (n *testNode) waitForQuota(dir string, want, tolerance int64) {
	n.t.Helper()
	var last int64
	err := wait.PollUntilContextTimeout(n.t.Context(), pollInterval, pollTimeout, true, func(context.Context) (bool, error) {
		v, ok := n.readKnobInt(dir, "cpu.cfs_quota_us")
		if !ok {
			return false, nil
		}
		last = v
		return v >= want-tolerance && v <= want+tolerance, nil
	})
	if err != nil {
		n.t.Fatalf("cpu.cfs_quota_us of %s is %d, want %d ± %d: %v", dir, last, want, tolerance, err)
	}
	n.t.Logf("cpu.cfs_quota_us of %s is %d (want %d ± %d)", dir, last, want, tolerance)
}

// TestNodeSLOSwitchesStrategies changes the node's NodeSLO and checks that BE CPU suppression (cfsQuota policy)
// and CPU burst (cpuBurstOnly) are applied to the cgroups and undone.
func TestNodeSLOSwitchesStrategies(t *testing.T) {
	n := newNode(t, nodeConfig{
		version: cgroup.V1, driver: cgroup.Cgroupfs,
		cpus: 4, allocatableCPU: "3800m", memory: 8 * gi,
		busyCores: 2, memUsed: 3 * gi, memUsedWithCache: 4 * gi,
		slo: slov1alpha1.NodeSLOSpec{
			ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{Enable: ptr.To(false)},
			CPUBurstStrategy:            &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{Policy: slov1alpha1.CPUBurstNone}},
		},
	})
	ls := n.addPod(lsPod("ls", 0.8))
	be := n.addPod(bePod("be", 0.6))
	startAgent(t, koordletConfig(t), n)
	// The strategies act on the newest samples: wait until there are some of every pod.
	n.waitForPodsReported(ls, be)

	beDir := n.host.fs.Layout().QoSDir(corev1.PodQOSBestEffort)
	n.waitForKnob(beDir, "cpu.cfs_quota_us", "-1")

	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) {
		s.ResourceUsedThresholdWithBE = &slov1alpha1.ResourceThresholdStrategy{
			Enable:                      ptr.To(true),
			CPUSuppressPolicy:           slov1alpha1.CPUCfsQuotaPolicy,
			CPUSuppressThresholdPercent: ptr.To[int64](65),
		}
	})
	// BEAllowed = capacity × 65% − Σ non-BE pod usage − max(system usage, reserved)
	//           = 4 × 0.65 − 0.8 (ls) − max(2 − 0.8 − 0.6 = 0.6, 4 − 3.8 = 0.2)
	//           = 2.6 − 0.8 − 0.6 = 1.2 cores → 1.2 × 100000 = 120000 µs.
	// The strategy reads single 1 s samples: the node's is exact (see host) and the system's is node − pods
	// of the same round, so the result is 2.6 − node + be and carries be's sampling error alone (≤ 2 % of 0.6
	// cores, 1200 µs). The strategy does not rewrite a quota within 1 % of the node's CPU (4000 µs) of its
	// target, so the quota settles anywhere within 1200 + 4000 µs of 120000. A quota computed from a sample the
	// fake counters made stale (see TestNodeMetricReporting) is further off and rewritten the next round; the
	// poll waits for the settled value.
	n.waitForQuota(beDir, 120000, 5200)

	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) { s.ResourceUsedThresholdWithBE.Enable = ptr.To(false) })
	n.waitForKnob(beDir, "cpu.cfs_quota_us", "-1")

	// cpuBurstOnly: cfs_burst_us = limit × cpuBurstPercent / 100 × period = 2 × 50 / 100 × 100000 = 100000 µs on
	// the container, and the sum of its containers' on the pod.
	lsContainer, lsPodDir := n.containerDir(ls), n.podDir(ls)
	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) {
		s.CPUBurstStrategy = &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{
			Policy: slov1alpha1.CPUBurstOnly, CPUBurstPercent: ptr.To[int64](50),
		}}
	})
	n.waitForKnob(lsContainer, "cpu.cfs_burst_us", "100000")
	n.waitForKnob(lsPodDir, "cpu.cfs_burst_us", "100000")
	// Burst does not touch the quota kubelet set for the 2-core limit.
	for _, dir := range []string{lsContainer, lsPodDir} {
		if got := n.host.fs.ReadFile(dir, "cpu.cfs_quota_us"); got != "200000" {
			t.Errorf("cpu.cfs_quota_us of %s is %s, want kubelet's 200000", dir, got)
		}
	}

	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) { s.CPUBurstStrategy.Policy = slov1alpha1.CPUBurstNone })
	n.waitForKnob(lsContainer, "cpu.cfs_burst_us", "0")
	n.waitForKnob(lsPodDir, "cpu.cfs_burst_us", "0")
}

// TestPerClassSettingsAndDriftRepair checks that a BE pod's cgroups get the CPU shares, CFS quota and memory
// limit of its batch resources, and that the agent puts back a value someone else changed, on a cgroup v1
// cgroupfs node and a cgroup v2 systemd node.
func TestPerClassSettingsAndDriftRepair(t *testing.T) {
	// The BE pod requests 500 milli-cores of batch-cpu and is limited to 1000 and to 1Gi of batch-memory:
	// cpu.shares = 500 × 1024 / 1000 = 512, CFS quota = 1000 × 100000 / 1000 = 100000 µs, memory limit =
	// 1073741824 bytes; its single container gets the same. On v2, cpu.weight = 1 + (512 − 2) × 9999 / 262142 =
	// 20 (kubelet's conversion).
	for name, tc := range map[string]struct {
		version cgroup.Version
		driver  cgroup.Driver
		// want are the knobs of the pod's and its container's cgroups.
		want map[string]string
		// podDrift and containerDrift are overwritten, one on the pod and one on the container.
		podDrift, containerDrift [2]string
	}{
		"cgroup=v1/driver=cgroupfs": {
			version: cgroup.V1, driver: cgroup.Cgroupfs,
			want:           map[string]string{"cpu.shares": "512", "cpu.cfs_quota_us": "100000", "memory.limit_in_bytes": "1073741824"},
			podDrift:       [2]string{"cpu.shares", "1024"},
			containerDrift: [2]string{"memory.limit_in_bytes", "9223372036854771712"},
		},
		"cgroup=v2/driver=systemd": {
			version: cgroup.V2, driver: cgroup.Systemd,
			want:           map[string]string{"cpu.weight": "20", "cpu.max": "100000 100000", "memory.max": "1073741824"},
			podDrift:       [2]string{"cpu.weight", "100"},
			containerDrift: [2]string{"memory.max", "max"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			n := newNode(t, nodeConfig{
				version: tc.version, driver: tc.driver,
				cpus: 4, allocatableCPU: "4", memory: 8 * gi,
				busyCores: 1, memUsed: 2 * gi, memUsedWithCache: 3 * gi,
			})
			be := n.addPod(bePod("be", 0.3))
			startAgent(t, koordletConfig(t), n)

			podDir, containerDir := n.podDir(be), n.containerDir(be)
			for _, dir := range []string{podDir, containerDir} {
				for knob, want := range tc.want {
					n.waitForKnob(dir, knob, want)
				}
			}

			n.host.fs.WriteFile(podDir, tc.podDrift[0], tc.podDrift[1]+"\n")
			n.host.fs.WriteFile(containerDir, tc.containerDrift[0], tc.containerDrift[1]+"\n")
			n.waitForKnob(podDir, tc.podDrift[0], tc.want[tc.podDrift[0]])
			n.waitForKnob(containerDir, tc.containerDrift[0], tc.want[tc.containerDrift[0]])

			// The agent also samples the pod on this layout.
			status := n.waitForPodsReported(be)
			for _, pm := range status.PodsMetric {
				if got := pm.PodUsage.ResourceList.Memory().Value(); got != 256*mi {
					t.Errorf("reported memory of pod %s is %s, want %s (usage − inactive_file)", pm.Name,
						strconv.FormatInt(got, 10), strconv.FormatInt(256*mi, 10))
				}
			}
		})
	}
}

// TestSystemConfigFollowsTheNodeSLO turns the NodeSLO's systemStrategy on and off: koordlet (gate SystemConfig)
// writes min_free_kbytes and watermark_scale_factor in the node's /proc, puts back what they were when the
// fields are unset, and when it stops.
func TestSystemConfigFollowsTheNodeSLO(t *testing.T) {
	n := newNode(t, nodeConfig{
		version: cgroup.V2, driver: cgroup.Systemd,
		cpus: 4, allocatableCPU: "4", memory: 8 * gi,
		busyCores: 1, memUsed: 2 * gi, memUsedWithCache: 3 * gi,
	})
	minFree := filepath.Join(n.host.proc, "sys", "vm", "min_free_kbytes")
	scale := filepath.Join(n.host.proc, "sys", "vm", "watermark_scale_factor")
	for path, v := range map[string]string{minFree: "67584\n", scale: "10\n"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) string {
		b, _ := os.ReadFile(path)
		return strings.TrimSpace(string(b))
	}
	waitFor := func(msg, path, want string) {
		t.Helper()
		eventually(t, msg, func(context.Context) (bool, error) { return read(path) == want, nil })
	}
	agent := startAgent(t, koordletConfig(t), n, "SystemConfig=true")

	// 100 × 8 GiB in kB / 10000 = 83886 kB.
	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) {
		s.SystemStrategy = &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100), WatermarkScaleFactor: ptr.To[int64](150)}
	})
	waitFor("min_free_kbytes from minFreeKbytesFactor", minFree, "83886")
	waitFor("watermark_scale_factor from the NodeSLO", scale, "150")

	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) {
		s.SystemStrategy = &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100)}
	})
	waitFor("watermark_scale_factor back to the node's value", scale, "10")

	agent.stop(t)
	if got := read(minFree); got != "67584" {
		t.Errorf("min_free_kbytes = %s after koordlet stopped, want the node's 67584", got)
	}
}

// TestMemoryAndCPUQoSFollowTheNodeSLO turns memory QoS (gate CgroupReconcile) and the coreSched CPU QoS policy
// (gate CoreSched) on and off through the NodeSLO: koordlet writes memory.min and memory.low of the LS pod, its
// container and kubepods, and cpu.idle of the besteffort cgroup, reverts them when the classes are turned off,
// and records an Event on a pod whose koordinator.sh/memoryQOS annotation is malformed.
func TestMemoryAndCPUQoSFollowTheNodeSLO(t *testing.T) {
	n := newNode(t, nodeConfig{
		version: cgroup.V2, driver: cgroup.Systemd,
		cpus: 4, allocatableCPU: "4", memory: 8 * gi,
		busyCores: 1, memUsed: 2 * gi, memUsedWithCache: 3 * gi,
	})
	ls := n.addPod(lsPod("ls", 0.5))
	malformed := lsPod("malformed", 0.1)
	malformed.annotations = map[string]string{extension.AnnotationPodMemoryQoS: `{"policy":`}
	bad := n.addPod(malformed)
	n.addPod(bePod("be", 0.2))
	startAgent(t, koordletConfig(t), n, "CgroupReconcile=true", "CoreSched=true")

	// Both LS pods request 1Gi: 100 % of it is protected for each, and kubepods and burstable hold the sum.
	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) {
		s.ResourceQOSStrategy = &slov1alpha1.ResourceQOSStrategy{
			Policies: &slov1alpha1.ResourceQOSPolicies{CPUPolicy: ptr.To(slov1alpha1.CPUQOSPolicyCoreSched)},
			LSClass: &slov1alpha1.ResourceQOS{MemoryQOS: &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true), MemoryQOS: slov1alpha1.MemoryQOS{
				MinLimitPercent: ptr.To[int64](100), LowLimitPercent: ptr.To[int64](100),
			}}},
			BEClass: &slov1alpha1.ResourceQOS{CPUQOS: &slov1alpha1.CPUQOSCfg{Enable: ptr.To(true), CPUQOS: slov1alpha1.CPUQOS{SchedIdle: ptr.To[int64](1)}}},
		}
	})
	layout := n.host.fs.Layout()
	for _, dir := range []string{n.podDir(ls), n.containerDir(ls), n.podDir(bad)} {
		n.waitForKnob(dir, "memory.min", "1073741824")
		n.waitForKnob(dir, "memory.low", "1073741824")
	}
	n.waitForKnob(layout.QoSDir(corev1.PodQOSBurstable), "memory.min", "2147483648")
	n.waitForKnob(layout.QoSDir(corev1.PodQOSGuaranteed), "memory.min", "2147483648")
	n.waitForKnob(layout.QoSDir(corev1.PodQOSBestEffort), "cpu.idle", "1")

	eventually(t, "no InvalidAnnotation Event on the pod with a malformed memoryQOS annotation", func(ctx context.Context) (bool, error) {
		events := &corev1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace(n.name)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.UID == bad.UID && e.Reason == qosmanager.ReasonInvalidAnnotation &&
				strings.Contains(e.Message, extension.AnnotationPodMemoryQoS) {
				return true, nil
			}
		}
		return false, nil
	})

	// Turned off: every knob goes back to the none values.
	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) { s.ResourceQOSStrategy = nil })
	for _, dir := range []string{n.podDir(ls), n.containerDir(ls), layout.QoSDir(corev1.PodQOSGuaranteed)} {
		n.waitForKnob(dir, "memory.min", "0")
		n.waitForKnob(dir, "memory.low", "0")
	}
	n.waitForKnob(layout.QoSDir(corev1.PodQOSBestEffort), "cpu.idle", "0")
}

// TestResctrlAndGroupIdentityFollowTheNodeSLO gives koordlet a node with resctrl (a fake tree: 11 cache ways,
// one cache and one memory domain) and an Anolis OS kernel's group identity (cpu.bvt.warp_ns in the cgroups):
// turning the BE class's resctrlQOS and the LS and BE classes' cpuQOS on limits the BE group to 4 of the 11
// ways and half the memory bandwidth, moves the BE pod's threads into it, and sets the group identities;
// turning them off puts back the full schemata and identity 0.
func TestResctrlAndGroupIdentityFollowTheNodeSLO(t *testing.T) {
	n := newNode(t, nodeConfig{
		version: cgroup.V1, driver: cgroup.Cgroupfs,
		cpus: 4, allocatableCPU: "4", memory: 8 * gi,
		busyCores: 1, memUsed: 2 * gi, memUsedWithCache: 3 * gi,
	})
	ls := n.addPod(lsPod("ls", 0.5))
	be := n.addPod(bePod("be", 0.2))
	layout := n.host.fs.Layout()
	bvtDirs := map[string]string{
		"kubepods": layout.QoSDir(corev1.PodQOSGuaranteed), "burstable": layout.QoSDir(corev1.PodQOSBurstable),
		"besteffort": layout.QoSDir(corev1.PodQOSBestEffort), "ls": n.podDir(ls), "be": n.podDir(be),
	}
	for _, dir := range append(slices.Collect(maps.Values(bvtDirs)), "/") {
		n.host.fs.WriteFile(dir, "cpu.bvt.warp_ns", "0\n")
	}
	n.host.fs.WriteFile(n.containerDir(be), "tasks", "4242\n4243\n")

	resctrl := t.TempDir()
	for path, content := range map[string]string{
		"schemata": "L3:0=7ff\nMB:0=100\n", "info/L3/cbm_mask": "7ff\n", "info/L3/min_cbm_bits": "1\n",
		"info/L3/num_closids": "16\n", "info/MB/min_bandwidth": "10\n", "info/MB/bandwidth_gran": "10\n",
	} {
		if err := os.MkdirAll(filepath.Join(resctrl, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(resctrl, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startAgentWith(t, koordletConfig(t), n, func(o *koordlet.Options) { o.ResctrlRoot = resctrl })

	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) {
		s.ResourceQOSStrategy = &slov1alpha1.ResourceQOSStrategy{
			LSClass: &slov1alpha1.ResourceQOS{CPUQOS: &slov1alpha1.CPUQOSCfg{Enable: ptr.To(true)}},
			BEClass: &slov1alpha1.ResourceQOS{
				CPUQOS:     &slov1alpha1.CPUQOSCfg{Enable: ptr.To(true)},
				ResctrlQOS: &slov1alpha1.ResctrlQOSCfg{Enable: ptr.To(true), ResctrlQOS: slov1alpha1.ResctrlQOS{MBAPercent: ptr.To[int64](50)}},
			},
		}
	})
	// The defaults: group identity 2 for LS, -1 for BE; BE's cache 0-30 % of 11 ways = the 4 lowest.
	for name, want := range map[string]string{"kubepods": "0", "burstable": "2", "besteffort": "-1", "ls": "2", "be": "-1"} {
		n.waitForKnob(bvtDirs[name], "cpu.bvt.warp_ns", want)
	}
	read := func(path string) string {
		b, _ := os.ReadFile(filepath.Join(resctrl, path))
		return strings.TrimSpace(string(b))
	}
	eventually(t, "the BE resctrl group's schemata and tasks", func(context.Context) (bool, error) {
		return read("BE/schemata") == "L3:0=f\nMB:0=50" && read("BE/tasks") == "4242\n4243", nil
	})

	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) { s.ResourceQOSStrategy = nil })
	for name := range bvtDirs {
		n.waitForKnob(bvtDirs[name], "cpu.bvt.warp_ns", "0")
	}
	eventually(t, "the BE resctrl group's full schemata back", func(context.Context) (bool, error) {
		return read("BE/schemata") == "L3:0=7ff\nMB:0=100", nil
	})
}

// TestPressureTightensSuppression: with the PSICollector gate, koordlet samples the LS pod's CPU pressure (its
// cpu.pressure in the hybrid mount's unified tree, cgroup v1); cpuSuppressPSIThresholdPercent 10 against a
// pressure of 40 % leaves the BE pods a quarter of what the usage formula gives, and the quota comes back when
// the pressure falls.
func TestPressureTightensSuppression(t *testing.T) {
	n := newNode(t, nodeConfig{
		version: cgroup.V1, driver: cgroup.Cgroupfs,
		cpus: 4, allocatableCPU: "3800m", memory: 8 * gi,
		busyCores: 2, memUsed: 3 * gi, memUsedWithCache: 4 * gi,
	})
	ls := n.addPod(lsPod("ls", 0.8))
	be := n.addPod(bePod("be", 0.6))
	pressure := filepath.Join(n.host.fs.Root(), "unified", n.podDir(ls), "cpu.pressure")
	setPressure := func(avg10 string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(pressure), 0o755); err != nil {
			t.Fatal(err)
		}
		content := "some avg10=" + avg10 + " avg60=1.00 avg300=1.00 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		if err := os.WriteFile(pressure, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setPressure("40.00")
	startAgent(t, koordletConfig(t), n, "PSICollector=true")
	n.waitForPodsReported(ls, be)

	beDir := n.host.fs.Layout().QoSDir(corev1.PodQOSBestEffort)
	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) {
		s.ResourceUsedThresholdWithBE = &slov1alpha1.ResourceThresholdStrategy{
			Enable:                         ptr.To(true),
			CPUSuppressPolicy:              slov1alpha1.CPUCfsQuotaPolicy,
			CPUSuppressThresholdPercent:    ptr.To[int64](65),
			CPUSuppressPSIThresholdPercent: ptr.To[int64](10),
		}
	})
	// The usage formula gives 1.2 cores (see TestNodeSLOSwitchesStrategies); × 10 / 40 = 0.3 cores → 30000 µs,
	// within the same tolerance scaled: 1300 µs of sampling error plus the 4000 µs the strategy does not rewrite.
	n.waitForQuota(beDir, 30000, 5300)

	// The pressure falls below the threshold: the quota grows back towards 120000 µs (by at most 10 % of the
	// node, 40000 µs, a round).
	setPressure("5.00")
	n.waitForQuota(beDir, 120000, 5200)
}
