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
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "cgroupreconcile"

// Features are the parts of the reconciler that are on: the resolved BatchResource and CPUSetAllocator gates.
type Features struct {
	// BatchResource writes BE pods' CPU shares, CFS quota and memory limit.
	BatchResource bool
	// CPUSetAllocator writes LSE, LSR and LS containers' cpusets.
	CPUSetAllocator bool
}

// Strategy writes the per-class cgroup settings every round. Create it with New.
type Strategy struct {
	cg       *cgroup.Manager
	features Features
	nodeCPUs func(ctx context.Context) (cpuset.CPUSet, error)
	numaCPUs func() (map[int]cpuset.CPUSet, error)
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithNodeCPUs replaces how the node's CPUs are found (by default qosmanager.NodeCPUs: the kubepods cgroup's
// cpuset).
func WithNodeCPUs(f func(ctx context.Context) (cpuset.CPUSet, error)) Option {
	return func(s *Strategy) { s.nodeCPUs = f }
}

// WithNUMACPUs sets where the CPUs of each NUMA node come from (nodetopology.ReadNUMACPUs): LS pods the
// scheduler gave cpu on some NUMA nodes (resource-status numaNodeResources) run on the shared pool's CPUs of
// those NUMA nodes. Without it they get the whole shared pool.
func WithNUMACPUs(f func() (map[int]cpuset.CPUSet, error)) Option {
	return func(s *Strategy) { s.numaCPUs = f }
}

// New returns the reconciler with the given features, writing through cg.
func New(cg *cgroup.Manager, f Features, opts ...Option) *Strategy {
	s := &Strategy{cg: cg, features: f}
	for _, o := range opts {
		o(s)
	}
	if s.nodeCPUs == nil {
		s.nodeCPUs = func(ctx context.Context) (cpuset.CPUSet, error) { return qosmanager.NodeCPUs(ctx, cg) }
	}
	return s
}

// Name implements qosmanager.Strategy.
func (s *Strategy) Name() string { return Name }

// Run implements qosmanager.Strategy: it writes what the pods' specs and annotations ask for and what differs
// from it on disk, so drift is repaired within a round. Pods and containers whose cgroup does not exist (yet or
// any more) are skipped; knobs the kernel lacks are skipped after one log line from the cgroup package.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	var errs []error
	if s.features.BatchResource {
		errs = append(errs, s.reconcileBatch(ctx, st))
	}
	if s.features.CPUSetAllocator {
		errs = append(errs, s.reconcileCPUSets(ctx, st))
	}
	return errors.Join(errs...)
}

// reconcileBatch writes every BE pod's BatchResources.
func (s *Strategy) reconcileBatch(ctx context.Context, st *qosmanager.State) error {
	quotaCap := s.batchQuotaCap(ctx)
	var errs []error
	for _, pod := range st.Pods {
		if err := s.syncBatchPod(ctx, pod, quotaCap); err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
		}
	}
	return errors.Join(errs...)
}

// SyncBatchPod writes the BatchResources of one BE pod to its cgroup and its running containers' now, as a
// round does: what a runtime hook does when the pod's sandbox starts. Other pods are left alone.
func (s *Strategy) SyncBatchPod(ctx context.Context, pod *corev1.Pod) error {
	if !s.features.BatchResource {
		return nil
	}
	return s.syncBatchPod(ctx, pod, s.batchQuotaCap(ctx))
}

// BatchContainer is what a BE container gets from its batch resources when it is created; a nil field is left
// as kubelet asked.
type BatchContainer struct {
	// CPUShares is the container's cpu.shares.
	CPUShares *int64
	// CFSQuotaUs is the container's CFS quota for the period it is created with, Unlimited for none.
	CFSQuotaUs *int64
	// MemoryLimit is the container's memory limit in bytes, Unlimited for none.
	MemoryLimit *int64
}

// BatchContainerOf returns what the container named container of pod gets from BatchResources, its quota for a
// period of periodUs µs (kubelet's, 100000 when it sets none) and capped as a round caps it: nothing for a pod
// that is not BE or asks for no batch resources.
func (s *Strategy) BatchContainerOf(ctx context.Context, pod *corev1.Pod, container string, periodUs int64) BatchContainer {
	if !s.features.BatchResource || qosmanager.PodQoS(pod) != extension.QoSBE {
		return BatchContainer{}
	}
	want, ok := BatchResources(pod).Containers[container]
	if !ok {
		return BatchContainer{}
	}
	out := BatchContainer{CPUShares: want.CPUShares, MemoryLimit: want.MemoryLimit}
	if want.CFSQuotaMilli != nil {
		q := QuotaUs(*want.CFSQuotaMilli, periodUs)
		if extension.GetKubeQoSClass(pod) == corev1.PodQOSBestEffort {
			q = s.batchQuotaCap(ctx).apply(q, periodUs)
		}
		out.CFSQuotaUs = &q
	}
	return out
}

// cfsCap is the CFS quota BE pods under the besteffort cgroup are capped at.
type cfsCap struct {
	quota, period int64
}

// batchQuotaCap returns the besteffort cgroup's quota on cgroup v1, where a child's CFS quota may not exceed its
// parent's (as a share of the period): the besteffort cgroup's quota belongs to cpusuppress, so BE pods under it
// are capped at it. On cgroup v2, or when it cannot be read, there is no cap.
func (s *Strategy) batchQuotaCap(ctx context.Context) cfsCap {
	l := s.cg.Layout()
	if l.Version != cgroup.V1 {
		return cfsCap{quota: Unlimited}
	}
	q, p, err := s.cg.CFSQuota(ctx, l.QoSDir(corev1.PodQOSBestEffort))
	if err != nil || p <= 0 {
		return cfsCap{quota: Unlimited}
	}
	return cfsCap{quota: q, period: p}
}

// apply caps the quota q for a period of periodUs µs.
func (c cfsCap) apply(q, periodUs int64) int64 {
	if c.quota == Unlimited {
		return q
	}
	limit := max(c.quota*periodUs/c.period, cgroup.MinCFSQuotaUs)
	if q == Unlimited || q > limit {
		return limit
	}
	return q
}

// syncBatchPod writes one pod's BatchResources, if it is BE and asks for batch resources.
func (s *Strategy) syncBatchPod(ctx context.Context, pod *corev1.Pod, quotaCap cfsCap) error {
	if qosmanager.PodQoS(pod) != extension.QoSBE {
		return nil
	}
	want := BatchResources(pod)
	if want.Pod == (BatchSettings{}) {
		return nil
	}
	l := s.cg.Layout()
	kubeQoS := extension.GetKubeQoSClass(pod)
	podDir := l.PodDir(kubeQoS, pod.UID)
	var errs []error
	var containers []dirSettings
	for _, c := range qosmanager.Containers(pod) {
		dir, err := l.ContainerDir(kubeQoS, pod.UID, c.Status.ContainerID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		containers = append(containers, dirSettings{dir: dir, want: want.Containers[c.Spec.Name]})
	}
	if kubeQoS != corev1.PodQOSBestEffort {
		quotaCap = cfsCap{quota: Unlimited}
	}
	errs = append(errs, s.applyBatch(ctx, dirSettings{dir: podDir, want: want.Pod}, containers, quotaCap))
	return errors.Join(errs...)
}

// dirSettings pairs a cgroup with the settings it should have.
type dirSettings struct {
	dir  string
	want BatchSettings
}

// applyBatch writes one pod's settings. A limit that grows is written to the pod before its containers, one that
// shrinks to the containers first, so that no child is ever above its parent. Quotas are capped at quotaCap.
func (s *Strategy) applyBatch(ctx context.Context, pod dirSettings, containers []dirSettings, quotaCap cfsCap) error {
	var errs []error
	keep := func(err error) {
		if err != nil && !errors.Is(err, cgroup.ErrNotFound) && !errors.Is(err, cgroup.ErrNotSupported) {
			errs = append(errs, err)
		}
	}

	if pod.want.CPUShares != nil {
		for _, d := range append([]dirSettings{pod}, containers...) {
			if d.want.CPUShares != nil {
				_, err := s.cg.SetCPUShares(ctx, d.dir, *d.want.CPUShares)
				keep(err)
			}
		}
	}

	if pod.want.CFSQuotaMilli != nil {
		quota := func(d dirSettings, periodUs int64) int64 {
			return quotaCap.apply(QuotaUs(*d.want.CFSQuotaMilli, periodUs), periodUs)
		}
		cur, period, err := s.cg.CFSQuota(ctx, pod.dir)
		if err != nil {
			keep(err)
		} else {
			target := quota(pod, period)
			setPod := func() { _, err := s.cg.SetCFSQuota(ctx, pod.dir, target); keep(err) }
			setContainers := func() {
				// kubelet gives a pod and its containers the same period.
				for _, c := range containers {
					if c.want.CFSQuotaMilli != nil {
						_, err := s.cg.SetCFSQuota(ctx, c.dir, quota(c, period))
						keep(err)
					}
				}
			}
			if grows(cur, target) {
				setPod()
				setContainers()
			} else {
				setContainers()
				setPod()
			}
		}
	}

	if pod.want.MemoryLimit != nil {
		cur, err := s.cg.MemoryLimit(ctx, pod.dir)
		if err != nil {
			keep(err)
		} else {
			setPod := func() { _, err := s.cg.SetMemoryLimit(ctx, pod.dir, *pod.want.MemoryLimit); keep(err) }
			setContainers := func() {
				for _, c := range containers {
					if c.want.MemoryLimit != nil {
						_, err := s.cg.SetMemoryLimit(ctx, c.dir, *c.want.MemoryLimit)
						keep(err)
					}
				}
			}
			if grows(cur, *pod.want.MemoryLimit) {
				setPod()
				setContainers()
			} else {
				setContainers()
				setPod()
			}
		}
	}
	return errors.Join(errs...)
}

// grows reports whether a limit changing from cur to target grows (Unlimited is the largest).
func grows(cur, target int64) bool {
	switch {
	case target == Unlimited:
		return true
	case cur == Unlimited:
		return false
	default:
		return target >= cur
	}
}

// reconcileCPUSets pins LSE and LSR containers to their scheduled CPUs (and unsets their CFS quota, pod and
// containers, as Koordinator does) and LS containers to the shared pool, which leaves out the CPUs kubelet's
// static CPU manager pinned pods to; those pods are left alone. BE containers belong to cpusuppress; LSE and
// LSR pods without a scheduled cpuset and other classes are left alone.
func (s *Strategy) reconcileCPUSets(ctx context.Context, st *qosmanager.State) error {
	pools, err := s.cpuPools(ctx, st)
	if err != nil {
		return err
	}
	errs := []error{pools.err}
	l := s.cg.Layout()
	for _, pod := range st.Pods {
		set, err := pools.of(st, pod)
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
		}
		if set.CPUs.IsEmpty() {
			continue
		}
		kubeQoS := extension.GetKubeQoSClass(pod)
		keep := func(err error) {
			if err != nil && !errors.Is(err, cgroup.ErrNotFound) && !errors.Is(err, cgroup.ErrNotSupported) {
				errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
			}
		}
		if set.Bound {
			// A pod bound to whole CPUs is not throttled below them, as Koordinator unsets its CPU quota: the
			// pod's cgroup first (a child may not exceed its parent on cgroup v1).
			_, err := s.cg.SetCFSQuota(ctx, l.PodDir(kubeQoS, pod.UID), Unlimited)
			keep(err)
		}
		for _, c := range qosmanager.Containers(pod) {
			dir, err := l.ContainerDir(kubeQoS, pod.UID, c.Status.ContainerID)
			if err != nil {
				errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
				continue
			}
			_, err = s.cg.SetCPUSet(ctx, dir, set.CPUs)
			keep(err)
			if set.Bound {
				_, err := s.cg.SetCFSQuota(ctx, dir, Unlimited)
				keep(err)
			}
		}
	}
	return errors.Join(errs...)
}

// UnsetPodQuota unsets the CFS quota of the cgroup of pod, one bound to CPUs of its own (PodCPUSet.Bound), as
// the reconciler does, and reports whether it wrote. A cgroup that is gone is not an error.
func (s *Strategy) UnsetPodQuota(ctx context.Context, pod *corev1.Pod) (bool, error) {
	dir := s.cg.Layout().PodDir(extension.GetKubeQoSClass(pod), pod.UID)
	wrote, err := s.cg.SetCFSQuota(ctx, dir, Unlimited)
	if errors.Is(err, cgroup.ErrNotFound) {
		return false, nil
	}
	return wrote, err
}

// PodCPUSet is the cpuset the containers of a pod get.
type PodCPUSet struct {
	// CPUs is the cpuset; empty when the pod's cpusets are left as they are.
	CPUs cpuset.CPUSet
	// Bound tells that the pod is bound to CPUs of its own (LSE, LSR): its CFS quota is unset.
	Bound bool
}

// CPUSetOf returns the cpuset reconcileCPUSets gives the containers of pod, with the node and its pods in st:
// what a runtime hook gives a container before it starts.
func (s *Strategy) CPUSetOf(ctx context.Context, st *qosmanager.State, pod *corev1.Pod) (PodCPUSet, error) {
	if !s.features.CPUSetAllocator {
		return PodCPUSet{}, nil
	}
	pools, err := s.cpuPools(ctx, st)
	if err != nil {
		return PodCPUSet{}, err
	}
	// A malformed annotation of another pod (pools.err) is the reconcile loop's to report.
	return pools.of(st, pod)
}

// cpuPools is the node's CPUs split into pools for one decision, and the NUMA nodes' CPUs when a pod needs them.
type cpuPools struct {
	nodeCPUs cpuset.CPUSet
	pools    qosmanager.CPUPools
	// err is SplitCPUs' error (a malformed pod annotation); the pools are still usable.
	err  error
	numa *numaReader
}

func (s *Strategy) cpuPools(ctx context.Context, st *qosmanager.State) (*cpuPools, error) {
	nodeCPUs, err := s.nodeCPUs(ctx)
	if err != nil {
		return nil, err
	}
	pools, err := qosmanager.SplitCPUs(st.Node, st.Pods, nodeCPUs, st.KubeletExclusive())
	return &cpuPools{nodeCPUs: nodeCPUs, pools: pools, err: err, numa: s.numaReader()}, nil
}

// of decides the cpuset of pod: its scheduled CPUs for LSE and LSR pods, the shared pool (confined to the NUMA
// nodes the scheduler gave it, if any) for LS pods and for LSE and LSR pods given NUMA nodes but no cpuset;
// nothing for pods kubelet's static CPU manager pinned, BE pods and the rest.
func (p *cpuPools) of(st *qosmanager.State, pod *corev1.Pod) (PodCPUSet, error) {
	if _, pinned := st.KubeletCPUs[pod.UID]; pinned {
		// kubelet's static CPU manager owns this pod's cpuset.
		return PodCPUSet{}, nil
	}
	switch qosmanager.PodQoS(pod) {
	case extension.QoSLSE, extension.QoSLSR, extension.QoSLS:
	default:
		return PodCPUSet{}, nil
	}
	status, err := extension.GetResourceStatus(pod.Annotations)
	if err != nil {
		// A malformed status is reported by SplitCPUs.
		return PodCPUSet{}, nil
	}
	if status != nil && status.CPUSet != "" {
		ids, err := status.CPUs()
		if err != nil {
			return PodCPUSet{}, nil
		}
		cpus := cpuset.New(ids...).Intersection(p.nodeCPUs)
		if cpus.IsEmpty() {
			return PodCPUSet{}, errors.New("no CPU to pin it to")
		}
		return PodCPUSet{CPUs: cpus, Bound: true}, nil
	}
	ids := numaCPUNodes(status)
	if qosmanager.PodQoS(pod) != extension.QoSLS && len(ids) == 0 {
		// An LSE or LSR pod without a cpuset (ConstrainedBurst, or not placed by koord-scheduler) that was
		// given no NUMA nodes keeps kubelet's cpuset.
		return PodCPUSet{}, nil
	}
	cpus := p.pools.Shared
	var confineErr error
	if len(ids) > 0 {
		cpus, confineErr = p.numa.confine(p.pools.Shared, ids)
	}
	if cpus.IsEmpty() {
		return PodCPUSet{}, errors.Join(confineErr, errors.New("no CPU to pin it to"))
	}
	return PodCPUSet{CPUs: cpus}, confineErr
}

// numaCPUNodes returns the NUMA nodes on which status holds cpu for the pod.
func numaCPUNodes(status *extension.ResourceStatus) []int {
	if status == nil {
		return nil
	}
	var ids []int
	for _, r := range status.NUMANodeResources {
		if q, ok := r.Resources[corev1.ResourceCPU]; ok && !q.IsZero() {
			ids = append(ids, int(r.Node))
		}
	}
	return ids
}

// numaReader reads the NUMA nodes' CPUs at most once a round, when a pod needs them.
type numaReader struct {
	read  func() (map[int]cpuset.CPUSet, error)
	cpus  map[int]cpuset.CPUSet
	err   error
	ready bool
}

func (s *Strategy) numaReader() *numaReader { return &numaReader{read: s.numaCPUs} }

// confine returns the CPUs of shared on the NUMA nodes ids: shared itself when the NUMA nodes are not known
// (no reader, or it failed: then with the error) or when none of shared's CPUs is on them, so that a pod is
// never left without CPUs.
func (r *numaReader) confine(shared cpuset.CPUSet, ids []int) (cpuset.CPUSet, error) {
	if r.read == nil {
		return shared, nil
	}
	if !r.ready {
		r.cpus, r.err = r.read()
		r.ready = true
	}
	if r.err != nil {
		return shared, fmt.Errorf("confine to NUMA nodes %v: %w", ids, r.err)
	}
	on := cpuset.New()
	for _, id := range ids {
		on = on.Union(r.cpus[id])
	}
	if got := shared.Intersection(on); !got.IsEmpty() {
		return got, nil
	}
	return shared, nil
}
