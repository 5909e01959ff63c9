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

package cgroupreconcile

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// Unlimited is the value of an unlimited CFS quota or memory limit.
const Unlimited = -1

// BatchSettings are the cgroup values of a BE pod or container derived from its batch resources. A field is
// nil when the batch resources do not decide it, and the cgroup is then left as kubelet made it.
type BatchSettings struct {
	// CPUShares is batch-cpu request (milli-cores) × 1024 / 1000, at least 2.
	CPUShares *int64
	// CFSQuotaMilli is the batch-cpu limit in milli-cores, or Unlimited; the quota in µs is this × period /
	// 1000.
	CFSQuotaMilli *int64
	// MemoryLimit is the batch-memory limit in bytes, or Unlimited.
	MemoryLimit *int64
}

// PodBatchSettings is what BatchResources decides for a pod and each of its containers (by name).
type PodBatchSettings struct {
	// Pod holds the pod cgroup's values.
	Pod BatchSettings
	// Containers holds each container's values, by container name.
	Containers map[string]BatchSettings
}

// BatchResources derives the cgroup values of a BE pod from the kubernetes.io/batch-cpu and
// kubernetes.io/batch-memory requests and limits of its app containers and sidecars (the deprecated
// koordinator.sh/ names count too). CPU shares are set when any container requests batch-cpu; the CFS quota
// when any container has a batch-cpu limit; the memory limit when any container has a batch-memory limit. A
// container without a limit is unlimited, and so is the pod then. Pod values are the sums of the containers'.
func BatchResources(pod *corev1.Pod) PodBatchSettings {
	out := PodBatchSettings{Containers: map[string]BatchSettings{}}
	var (
		anyRequest, anyCPULimit, anyMemLimit bool
		sumRequest, sumCPULimit, sumMemLimit int64
		cpuUnlimited, memUnlimited           bool
	)
	type parsed struct {
		name                             string
		request, cpuLimit, memLimit      int64
		hasReq, hasCPULimit, hasMemLimit bool
	}
	var containers []parsed
	visit := func(c *corev1.Container) {
		p := parsed{name: c.Name}
		p.request, p.hasReq = batchValue(c.Resources.Requests, extension.BatchCPU)
		p.cpuLimit, p.hasCPULimit = batchValue(c.Resources.Limits, extension.BatchCPU)
		p.memLimit, p.hasMemLimit = batchValue(c.Resources.Limits, extension.BatchMemory)
		anyRequest = anyRequest || p.hasReq
		anyCPULimit = anyCPULimit || p.hasCPULimit
		anyMemLimit = anyMemLimit || p.hasMemLimit
		sumRequest += p.request
		sumCPULimit += p.cpuLimit
		sumMemLimit += p.memLimit
		cpuUnlimited = cpuUnlimited || !p.hasCPULimit
		memUnlimited = memUnlimited || !p.hasMemLimit
		containers = append(containers, p)
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			visit(c)
		}
	}
	for i := range pod.Spec.Containers {
		visit(&pod.Spec.Containers[i])
	}

	for _, p := range containers {
		var s BatchSettings
		if anyRequest {
			s.CPUShares = ptr.To(sharesOf(p.request))
		}
		if anyCPULimit {
			s.CFSQuotaMilli = ptr.To(limitOf(p.cpuLimit, p.hasCPULimit))
		}
		if anyMemLimit {
			s.MemoryLimit = ptr.To(limitOf(p.memLimit, p.hasMemLimit))
		}
		out.Containers[p.name] = s
	}
	if anyRequest {
		out.Pod.CPUShares = ptr.To(sharesOf(sumRequest))
	}
	if anyCPULimit {
		out.Pod.CFSQuotaMilli = ptr.To(limitOf(sumCPULimit, !cpuUnlimited))
	}
	if anyMemLimit {
		out.Pod.MemoryLimit = ptr.To(limitOf(sumMemLimit, !memUnlimited))
	}
	return out
}

// batchValue returns the value of resource name (or its deprecated alias) in list: milli-cores for batch-cpu,
// bytes for batch-memory. A zero limit counts as no limit.
func batchValue(list corev1.ResourceList, name corev1.ResourceName) (int64, bool) {
	for n, q := range list {
		if extension.NormalizeResourceName(n) == name {
			if v := q.Value(); v > 0 {
				return v, true
			}
		}
	}
	return 0, false
}

// sharesOf converts a batch-cpu request in milli-cores into cpu.shares, as kubelet converts a cpu request.
func sharesOf(milli int64) int64 {
	return min(max(milli*1024/1000, cgroup.MinCPUShares), cgroup.MaxCPUShares)
}

func limitOf(v int64, limited bool) int64 {
	if !limited {
		return Unlimited
	}
	return v
}

// QuotaUs converts a CFSQuotaMilli value into a CFS quota for a period, both in µs: Unlimited stays so, and a
// limit is at least cgroup.MinCFSQuotaUs.
func QuotaUs(milli, periodUs int64) int64 {
	if milli == Unlimited {
		return Unlimited
	}
	return max(milli*periodUs/1000, cgroup.MinCFSQuotaUs)
}
