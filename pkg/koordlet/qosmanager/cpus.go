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

package qosmanager

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// NodeCPUs returns the CPUs pods may run on: the cpuset of kubelet's kubepods cgroup (on cgroup v2 its
// effective cpuset when it sets none itself).
func NodeCPUs(ctx context.Context, cg *cgroup.Manager) (cpuset.CPUSet, error) {
	dir := cg.Layout().KubepodsDir()
	cpus, err := cg.CPUSet(ctx, dir)
	if err != nil {
		return cpuset.New(), fmt.Errorf("read the node's CPUs from %s: %w", dir, err)
	}
	if cpus.IsEmpty() {
		return cpus, fmt.Errorf("read the node's CPUs from %s: empty cpuset", dir)
	}
	return cpus, nil
}

// CPUPools is how the node's CPUs are shared between QoS classes.
type CPUPools struct {
	// LSE are the CPUs bound to LSE pods: nobody else runs there.
	LSE cpuset.CPUSet
	// LSR are the CPUs bound to LSR pods: only BE pods may share them.
	LSR cpuset.CPUSet
	// Reserved are the CPUs the node.koordinator.sh/reservation annotation keeps from pods.
	Reserved cpuset.CPUSet
	// Shared is the rest: the pool of LS pods.
	Shared cpuset.CPUSet
}

// BEEligible returns the CPUs BE pods may run on: the shared pool and the LSR CPUs.
func (p CPUPools) BEEligible() cpuset.CPUSet { return p.Shared.Union(p.LSR) }

// SplitCPUs splits nodeCPUs into pools from the cpusets the scheduler wrote in the LSE and LSR pods'
// scheduling.koordinator.sh/resource-status and the node's reservation annotation, with the CPUs kubelet's
// static CPU manager pinned pods to (kubeletExclusive) in no pool; CPUs outside nodeCPUs are
// ignored. A pod or node whose annotation cannot be parsed is left out and named in the returned error; the
// pools are still computed from the rest.
func SplitCPUs(node *corev1.Node, pods []*corev1.Pod, nodeCPUs, kubeletExclusive cpuset.CPUSet) (CPUPools, error) {
	var errs []error
	lse, lsr := cpuset.New(), cpuset.New()
	for _, pod := range pods {
		qos := PodQoS(pod)
		if qos != extension.QoSLSE && qos != extension.QoSLSR {
			continue
		}
		status, err := extension.GetResourceStatus(pod.Annotations)
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
			continue
		}
		if status == nil || status.CPUSet == "" {
			continue
		}
		ids, err := status.CPUs()
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
			continue
		}
		if qos == extension.QoSLSE {
			lse = lse.Union(cpuset.New(ids...))
		} else {
			lsr = lsr.Union(cpuset.New(ids...))
		}
	}
	reserved := cpuset.New()
	if node != nil {
		r, err := extension.GetNodeReservation(node.Annotations)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("node %s: %w", node.Name, err))
		case r != nil && r.ReservedCPUs != "":
			if ids, err := extension.ParseCPUSet(r.ReservedCPUs); err == nil {
				reserved = cpuset.New(ids...)
			}
		}
	}
	lse = lse.Intersection(nodeCPUs)
	reserved = reserved.Intersection(nodeCPUs).Difference(lse)
	lsr = lsr.Intersection(nodeCPUs).Difference(lse).Difference(reserved)
	return CPUPools{
		LSE:      lse,
		LSR:      lsr,
		Reserved: reserved,
		Shared:   nodeCPUs.Difference(lse).Difference(lsr).Difference(reserved).Difference(kubeletExclusive),
	}, errors.Join(errs...)
}
