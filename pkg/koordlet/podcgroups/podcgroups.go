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

// Package podcgroups reads the cgroup settings of a pod and its containers as the kernel has them — what
// koordlet's strategies and runtime hooks applied, and what kubelet set where they did not — and serves them
// from koordlet's metrics endpoint at /pods/{namespace}/{name}/cgroups, for `koordctl explain pod`, which reaches
// it through the apiserver's node proxy.
package podcgroups

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// Path is the pattern of the endpoint, for an http.ServeMux.
const Path = "GET /pods/{namespace}/{name}/cgroups"

// URLPath returns the endpoint's path for a pod.
func URLPath(namespace, name string) string {
	return "/pods/" + namespace + "/" + name + "/cgroups"
}

// Pod is the cgroup settings of one pod and its containers.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// QoSClass is Koordinator's QoS class and KubeQoSClass the Kubernetes one, which places the pod's cgroup.
	QoSClass     string `json:"qosClass"`
	KubeQoSClass string `json:"kubeQoSClass"`
	// CgroupVersion is v1 or v2.
	CgroupVersion string `json:"cgroupVersion"`
	// Pod is the pod-level cgroup.
	Pod Settings `json:"pod"`
	// Containers are the containers that have started, in the pod's status order.
	Containers []Container `json:"containers,omitempty"`
}

// Container is one container's cgroup.
type Container struct {
	Name        string `json:"name"`
	ContainerID string `json:"containerID"`
	Settings
}

// Settings are the values of one cgroup; a knob the kernel does not have is left out. CPU values are in the
// units of the cgroup v1 files (shares, microseconds), memory in bytes; -1 is unlimited.
type Settings struct {
	// Dir is the cgroup, relative to the hierarchies' roots.
	Dir string `json:"dir"`
	// CPUShares is cpu.shares (v2: cpu.weight converted to shares).
	CPUShares *int64 `json:"cpuShares,omitempty"`
	// CFSQuotaUs and CFSPeriodUs are cpu.cfs_quota_us and cpu.cfs_period_us (v2: cpu.max).
	CFSQuotaUs  *int64 `json:"cfsQuotaUs,omitempty"`
	CFSPeriodUs *int64 `json:"cfsPeriodUs,omitempty"`
	// CFSBurstUs is cpu.cfs_burst_us (v2: cpu.max.burst), Linux 5.14 and later.
	CFSBurstUs *int64 `json:"cfsBurstUs,omitempty"`
	// CPUSet is cpuset.cpus (v2: the effective set where the file is empty).
	CPUSet *string `json:"cpuset,omitempty"`
	// CPUIdle is cpu.idle (SCHED_IDLE), Linux 5.15 and later.
	CPUIdle *int64 `json:"cpuIdle,omitempty"`
	// BVTWarpNs is cpu.bvt.warp_ns, the group identity of Anolis OS.
	BVTWarpNs *int64 `json:"bvtWarpNs,omitempty"`
	// MemoryLimitBytes is memory.limit_in_bytes (v2: memory.max).
	MemoryLimitBytes *int64 `json:"memoryLimitBytes,omitempty"`
	// MemoryHighBytes, MemoryMinBytes and MemoryLowBytes are memory.high, memory.min and memory.low (v2, or
	// v1 kernels that add them).
	MemoryHighBytes *int64 `json:"memoryHighBytes,omitempty"`
	MemoryMinBytes  *int64 `json:"memoryMinBytes,omitempty"`
	MemoryLowBytes  *int64 `json:"memoryLowBytes,omitempty"`
	// Errors are the knobs that could not be read, with why.
	Errors []string `json:"errors,omitempty"`
}

// Read returns the settings of pod's cgroups. A container that has not started (no container ID) is left
// out; a cgroup that could not be read says so in its Errors.
func Read(ctx context.Context, m *cgroup.Manager, pod *corev1.Pod) *Pod {
	kubeQoS := extension.GetKubeQoSClass(pod)
	layout := m.Layout()
	out := &Pod{
		Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID),
		QoSClass: string(extension.GetPodQoSClassWithDefault(pod)), KubeQoSClass: string(kubeQoS),
		CgroupVersion: layout.Version.String(),
		Pod:           readSettings(ctx, m, layout.PodDir(kubeQoS, pod.UID)),
	}
	for _, status := range pod.Status.ContainerStatuses {
		if status.ContainerID == "" {
			continue
		}
		c := Container{Name: status.Name, ContainerID: status.ContainerID}
		dir, err := layout.ContainerDir(kubeQoS, pod.UID, status.ContainerID)
		if err != nil {
			c.Errors = []string{err.Error()}
		} else {
			c.Settings = readSettings(ctx, m, dir)
		}
		out.Containers = append(out.Containers, c)
	}
	return out
}

// readSettings reads every knob of dir; knobs the kernel lacks are left out, other failures noted.
func readSettings(ctx context.Context, m *cgroup.Manager, dir string) Settings {
	s := Settings{Dir: dir}
	note := func(knob string, err error) bool {
		switch {
		case err == nil:
			return true
		case errors.Is(err, cgroup.ErrNotSupported):
		default:
			s.Errors = append(s.Errors, fmt.Sprintf("%s: %v", knob, err))
		}
		return false
	}
	readInto := func(knob string, dst **int64, read func() (int64, error)) {
		v, err := read()
		if note(knob, err) {
			*dst = &v
		}
	}
	shares, err := m.CPUShares(ctx, dir)
	if errors.Is(err, cgroup.ErrNotFound) {
		// The cgroup is gone (or not made yet): the other knobs would say the same.
		s.Errors = []string{err.Error()}
		return s
	}
	if note("cpu shares", err) {
		s.CPUShares = &shares
	}
	quota, period, err := m.CFSQuota(ctx, dir)
	if note("cfs quota", err) {
		s.CFSQuotaUs, s.CFSPeriodUs = &quota, &period
	}
	readInto("cfs burst", &s.CFSBurstUs, func() (int64, error) { return m.CFSBurst(ctx, dir) })
	if cpus, err := m.CPUSet(ctx, dir); note("cpuset", err) {
		v := cpus.String()
		s.CPUSet = &v
	}
	readInto(cgroup.KnobCPUIdle.Name, &s.CPUIdle, func() (int64, error) { return m.Int(ctx, dir, cgroup.KnobCPUIdle) })
	readInto(cgroup.KnobCPUBVTWarpNs.Name, &s.BVTWarpNs, func() (int64, error) { return m.Int(ctx, dir, cgroup.KnobCPUBVTWarpNs) })
	readInto("memory limit", &s.MemoryLimitBytes, func() (int64, error) { return m.MemoryLimit(ctx, dir) })
	readInto("memory.high", &s.MemoryHighBytes, func() (int64, error) { return m.MemoryHigh(ctx, dir) })
	readInto("memory.min", &s.MemoryMinBytes, func() (int64, error) { return m.MemoryMin(ctx, dir) })
	readInto("memory.low", &s.MemoryLowBytes, func() (int64, error) { return m.MemoryLow(ctx, dir) })
	return s
}

// Handler serves Path: the settings of the pod of the node (from pods) with the path's namespace and name as
// JSON, 404 when the node has no such pod.
func Handler(m *cgroup.Manager, pods func() []*corev1.Pod) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns, name := r.PathValue("namespace"), r.PathValue("name")
		for _, p := range pods() {
			if p.Namespace != ns || p.Name != name {
				continue
			}
			w.Header().Set("Content-Type", "application/json")
			if err := json.NewEncoder(w).Encode(Read(r.Context(), m, p)); err != nil {
				klog.FromContext(r.Context()).V(2).Info("Could not write a pod's cgroup settings", "pod", klog.KObj(p), "err", err)
			}
			return
		}
		http.Error(w, fmt.Sprintf("pod %s/%s is not on this node", ns, name), http.StatusNotFound)
	})
}
