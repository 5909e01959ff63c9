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

package cpusuppress

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "cpusuppress"

// Strategy limits the CPU of BE pods to BEAllowed, by cpuset or by the CFS quota of the besteffort cgroup.
// Create it with New.
type Strategy struct {
	cg       *cgroup.Manager
	metrics  *Metrics
	topology map[int]CPUInfo
	nodeCPUs func(ctx context.Context) (cpuset.CPUSet, error)

	config qosmanager.LastGood[slov1alpha1.ResourceThresholdStrategy]
	// restored tells, per policy, that what the policy wrote has been undone since it was last applied. Both
	// start false, so the first round undoes whatever a previous run of the agent left in place.
	restored map[slov1alpha1.CPUSuppressPolicy]bool
	// applied is the last allowance written, for logging changes only.
	applied appliedState
	// noPressureSaid is set once the pressure rule has been said to have no samples.
	noPressureSaid bool
}

type appliedState struct {
	policy slov1alpha1.CPUSuppressPolicy
	value  string
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithMetrics sets the collectors the strategy records into.
func WithMetrics(m *Metrics) Option { return func(s *Strategy) { s.metrics = m } }

// WithTopology sets where each CPU sits (see ReadTopology), so that the cpuset policy spreads BE CPUs over
// NUMA nodes and keeps hyper-thread siblings together. Without it every CPU counts as its own core on one node.
func WithTopology(t map[int]CPUInfo) Option { return func(s *Strategy) { s.topology = t } }

// WithNodeCPUs replaces how the node's CPUs are found (by default qosmanager.NodeCPUs: the kubepods cgroup's
// cpuset).
func WithNodeCPUs(f func(ctx context.Context) (cpuset.CPUSet, error)) Option {
	return func(s *Strategy) { s.nodeCPUs = f }
}

// New returns the strategy, writing through cg.
func New(cg *cgroup.Manager, opts ...Option) *Strategy {
	s := &Strategy{cg: cg, restored: map[slov1alpha1.CPUSuppressPolicy]bool{}}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.nodeCPUs == nil {
		s.nodeCPUs = func(ctx context.Context) (cpuset.CPUSet, error) { return qosmanager.NodeCPUs(ctx, cg) }
	}
	return s
}

// Name implements qosmanager.Strategy.
func (s *Strategy) Name() string { return Name }

// Run implements qosmanager.Strategy: when resourceUsedThresholdWithBE is enabled it computes BEAllowed from
// the newest usage samples and applies it with the configured policy, undoing the other policy once; when it
// is disabled it undoes both once (CFS quota -1, cpuset = every CPU BE pods may use). An invalid threshold
// strategy is reported and the last valid one is used.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	cfg, cfgErr := s.config.Update(st.ResourceThreshold())
	if cfg == nil {
		return cfgErr
	}
	errs := []error{cfgErr}
	if !ptr.Deref(cfg.Enable, false) {
		s.metrics.suppress.Reset()
		errs = append(errs, s.restore(ctx, st, slov1alpha1.CPUCfsQuotaPolicy), s.restore(ctx, st, slov1alpha1.CPUSetPolicy))
		return errors.Join(errs...)
	}

	in, err := inputs(st, cfg)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	// A malformed reservation annotation leaves kubelet's reservation in force; it is reported, not fatal.
	reserved, err := qosmanager.NodeReservedCPU(st.Node)
	in.NodeReserved = reserved
	errs = append(errs, err)
	allowed := BEAllowed(in)
	s.metrics.allowed.Set(allowed)
	logger := klog.FromContext(ctx)
	if in.PSIThresholdPercent != nil && !in.pressureSampled && !s.noPressureSaid {
		logger.Info("cpuSuppressPSIThresholdPercent is set but no pod's CPU pressure is sampled; the pressure rule is idle (it needs the PSICollector gate and PSI in the kernel)")
		s.noPressureSaid = true
	}
	if logger.V(4).Enabled() {
		logger.V(4).Info("Computed the BE CPU allowance", "allowedCores", allowed, "capacityCores", in.Capacity,
			"thresholdPercent", in.ThresholdPercent, "nonBEPodsUsageCores", in.NonBEPodsUsage,
			"nonBEHostAppsUsageCores", in.NonBEHostAppsUsage, "nonBEPressurePercent", in.NonBEPressure, "systemUsageCores", in.SystemUsage, "nodeReservedCores", in.NodeReserved)
	}

	if cfg.CPUSuppressPolicy == slov1alpha1.CPUCfsQuotaPolicy {
		errs = append(errs, s.applyQuota(ctx, st, in, allowed), s.restore(ctx, st, slov1alpha1.CPUSetPolicy))
	} else {
		errs = append(errs, s.applyCPUSet(ctx, st, in, allowed), s.restore(ctx, st, slov1alpha1.CPUCfsQuotaPolicy))
	}
	return errors.Join(errs...)
}

// inputs gathers the node's capacity and the usage terms of BEAllowed, from the newest samples no older than
// st.MaxSampleAge. Pods without a fresh sample count as using nothing (they have just started or are gone); the
// system usage falls back to node − Σ pods when its own series has no fresh sample. A missing node sample is an
// error: nothing can be decided.
func inputs(st *qosmanager.State, cfg *slov1alpha1.ResourceThresholdStrategy) (Inputs, error) {
	in := Inputs{
		Capacity:         qosmanager.NodeCPUCapacity(st.Node),
		ThresholdPercent: ptr.Deref(cfg.CPUSuppressThresholdPercent, 0),
		MinPercent:       cfg.CPUSuppressMinPercent,
	}
	if in.Capacity <= 0 {
		return in, fmt.Errorf("node %s has no CPU capacity", st.Node.Name)
	}
	nodeUsage, ok := st.Latest(qosmanager.NodeKey(corev1.ResourceCPU))
	if !ok {
		return in, fmt.Errorf("no node CPU usage sample newer than %v", st.MaxSampleAge)
	}
	podsUsage := 0.0
	for _, pod := range st.Pods {
		u, ok := st.Latest(qosmanager.PodKey(pod.UID, corev1.ResourceCPU))
		if !ok {
			continue
		}
		podsUsage += u
		if qosmanager.PodQoS(pod) != extension.QoSBE {
			in.NonBEPodsUsage += u
		}
	}
	if in.PSIThresholdPercent = cfg.CPUSuppressPSIThresholdPercent; in.PSIThresholdPercent != nil {
		for _, pod := range st.Pods {
			if qosmanager.PodQoS(pod) == extension.QoSBE {
				continue
			}
			if p, ok := st.Latest(qosmanager.PodKey(pod.UID, metriccache.ResourcePSICPUSomeAvg10)); ok {
				in.NonBEPressure = max(in.NonBEPressure, p)
				in.pressureSampled = true
			}
		}
	}
	appsUsage := 0.0
	if st.NodeSLO != nil {
		for _, app := range st.NodeSLO.Spec.HostApplications {
			u, ok := st.Latest(qosmanager.HostAppKey(app.Name, corev1.ResourceCPU))
			if !ok {
				continue
			}
			appsUsage += u
			if extension.QoSClass(app.QoS) != extension.QoSBE {
				in.NonBEHostAppsUsage += u
			}
		}
	}
	if sys, ok := st.Latest(qosmanager.SystemKey(corev1.ResourceCPU)); ok {
		in.SystemUsage = sys
	} else {
		in.SystemUsage = max(nodeUsage-podsUsage-appsUsage, 0)
	}
	return in, nil
}

// applyCPUSet confines the BE pods to CPUSetSize(allowed) CPUs chosen by SelectCPUs.
func (s *Strategy) applyCPUSet(ctx context.Context, st *qosmanager.State, in Inputs, allowed float64) error {
	nodeCPUs, err := s.nodeCPUs(ctx)
	if err != nil {
		return err
	}
	pools, poolErr := qosmanager.SplitCPUs(st.Node, st.Pods, nodeCPUs, st.KubeletExclusive())
	eligible := pools.BEEligible()
	if eligible.IsEmpty() {
		return errors.Join(poolErr, fmt.Errorf("no CPU left for BE pods: all of %s are LSE or reserved", nodeCPUs))
	}
	current, err := s.cg.CPUSet(ctx, s.cg.Layout().QoSDir(corev1.PodQOSBestEffort))
	if err != nil {
		return errors.Join(poolErr, err)
	}
	n := CPUSetSize(allowed, current.Size(), nodeCPUs.Size(), eligible.Size())
	cpus := SelectCPUs(n, Pools{LSR: pools.LSR, LS: pools.Shared}, s.topology)
	s.restored[slov1alpha1.CPUSetPolicy] = false
	if err := s.writeCPUSet(ctx, st, current, cpus); err != nil {
		return errors.Join(poolErr, err)
	}
	s.metrics.suppress.DeleteLabelValues(string(slov1alpha1.CPUCfsQuotaPolicy))
	s.metrics.suppress.WithLabelValues(string(slov1alpha1.CPUSetPolicy)).Set(float64(cpus.Size()))
	s.logApplied(ctx, slov1alpha1.CPUSetPolicy, cpus.String(), in, allowed)
	return poolErr
}

// writeCPUSet gives cpus to the besteffort cgroup and every BE pod and container. Parents must hold their
// children's CPUs on cgroup v1, so the besteffort cgroup first grows to current ∪ cpus, then each pod's tree
// is set (cgroup.Manager.SetCPUSetTree), then the besteffort cgroup shrinks to cpus. Pods and containers
// whose cgroup is gone are skipped.
func (s *Strategy) writeCPUSet(ctx context.Context, st *qosmanager.State, current, cpus cpuset.CPUSet) error {
	qosDir := s.cg.Layout().QoSDir(corev1.PodQOSBestEffort)
	if s.cg.Layout().Version == cgroup.V1 {
		if _, err := s.cg.SetCPUSet(ctx, qosDir, current.Union(cpus)); err != nil {
			return err
		}
	}
	var errs []error
	for _, pod := range st.Pods {
		if qosmanager.PodQoS(pod) != extension.QoSBE {
			continue
		}
		dirs, err := podDirs(s.cg.Layout(), pod)
		if err != nil {
			errs = append(errs, err)
		}
		if s.allHave(ctx, dirs, cpus) {
			continue
		}
		if _, err := s.cg.SetCPUSetTree(ctx, dirs, cpus); err != nil && !errors.Is(err, cgroup.ErrNotFound) {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
		}
	}
	if _, err := s.cg.SetCPUSet(ctx, qosDir, cpus); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// allHave reports whether every one of dirs already has exactly cpus, reading each once: the common case of a
// round that changes nothing, cheaper than SetCPUSetTree's passes.
func (s *Strategy) allHave(ctx context.Context, dirs []string, cpus cpuset.CPUSet) bool {
	for _, dir := range dirs {
		cur, err := s.cg.CPUSet(ctx, dir)
		if err != nil || !cur.Equals(cpus) {
			return false
		}
	}
	return true
}

// podDirs returns the cgroup of pod followed by those of its containers. A container ID that names no
// directory is left out and reported.
func podDirs(l cgroup.Layout, pod *corev1.Pod) ([]string, error) {
	kubeQoS := extension.GetKubeQoSClass(pod)
	dirs := []string{l.PodDir(kubeQoS, pod.UID)}
	var errs []error
	for _, c := range qosmanager.Containers(pod) {
		dir, err := l.ContainerDir(kubeQoS, pod.UID, c.Status.ContainerID)
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
			continue
		}
		dirs = append(dirs, dir)
	}
	return dirs, errors.Join(errs...)
}

// applyQuota limits the besteffort cgroup's CFS quota to CFSQuota(allowed).
func (s *Strategy) applyQuota(ctx context.Context, st *qosmanager.State, in Inputs, allowed float64) error {
	qosDir := s.cg.Layout().QoSDir(corev1.PodQOSBestEffort)
	current, period, err := s.cg.CFSQuota(ctx, qosDir)
	if err != nil {
		return err
	}
	s.restored[slov1alpha1.CPUCfsQuotaPolicy] = false
	quota, write := CFSQuota(allowed, in.Capacity, current, period)
	if write {
		if s.cg.Layout().Version == cgroup.V1 {
			// cgroup v1 refuses a parent quota below a child's (as a share of the period): lower the BE pods
			// and containers that are above the new quota first.
			if err := s.capChildQuotas(ctx, st, quota, period); err != nil {
				return err
			}
		}
		if _, err := s.cg.SetCFSQuota(ctx, qosDir, quota); err != nil {
			return err
		}
	}
	s.metrics.suppress.DeleteLabelValues(string(slov1alpha1.CPUSetPolicy))
	s.metrics.suppress.WithLabelValues(string(slov1alpha1.CPUCfsQuotaPolicy)).Set(float64(quota) / float64(period))
	s.logApplied(ctx, slov1alpha1.CPUCfsQuotaPolicy, fmt.Sprintf("%d/%d", quota, period), in, allowed)
	return nil
}

// capChildQuotas lowers the CFS quota of every BE pod under the besteffort cgroup, and of its containers,
// whose quota is above quota/period of the besteffort cgroup; containers first.
func (s *Strategy) capChildQuotas(ctx context.Context, st *qosmanager.State, quota, period int64) error {
	var errs []error
	for _, pod := range st.Pods {
		if qosmanager.PodQoS(pod) != extension.QoSBE || extension.GetKubeQoSClass(pod) != corev1.PodQOSBestEffort {
			continue
		}
		dirs, err := podDirs(s.cg.Layout(), pod)
		if err != nil {
			errs = append(errs, err)
		}
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := s.capQuota(ctx, dirs[i], quota, period); err != nil && !errors.Is(err, cgroup.ErrNotFound) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// capQuota lowers the quota of dir to quota/period of its own period when it is limited and above it.
func (s *Strategy) capQuota(ctx context.Context, dir string, quota, period int64) error {
	cur, curPeriod, err := s.cg.CFSQuota(ctx, dir)
	if err != nil {
		return err
	}
	if cur == -1 || cur*period <= quota*curPeriod {
		return nil
	}
	_, err = s.cg.SetCFSQuota(ctx, dir, max(quota*curPeriod/period, cgroup.MinCFSQuotaUs))
	return err
}

// restore undoes policy once: the cfsQuota policy by an unlimited besteffort quota, the cpuset policy by
// giving the BE cgroups every CPU they may use.
func (s *Strategy) restore(ctx context.Context, st *qosmanager.State, policy slov1alpha1.CPUSuppressPolicy) error {
	if s.restored[policy] {
		return nil
	}
	qosDir := s.cg.Layout().QoSDir(corev1.PodQOSBestEffort)
	switch policy {
	case slov1alpha1.CPUCfsQuotaPolicy:
		if _, err := s.cg.SetCFSQuota(ctx, qosDir, -1); err != nil {
			return fmt.Errorf("restore the besteffort CFS quota: %w", err)
		}
	default:
		nodeCPUs, err := s.nodeCPUs(ctx)
		if err != nil {
			return fmt.Errorf("restore the BE cpuset: %w", err)
		}
		pools, poolErr := qosmanager.SplitCPUs(st.Node, st.Pods, nodeCPUs, st.KubeletExclusive())
		eligible := pools.BEEligible()
		if eligible.IsEmpty() {
			return errors.Join(poolErr, fmt.Errorf("restore the BE cpuset: no CPU left for BE pods in %s", nodeCPUs))
		}
		current, err := s.cg.CPUSet(ctx, qosDir)
		if err != nil {
			return fmt.Errorf("restore the BE cpuset: %w", err)
		}
		if err := s.writeCPUSet(ctx, st, current, eligible); err != nil {
			return fmt.Errorf("restore the BE cpuset: %w", err)
		}
	}
	s.restored[policy] = true
	if s.applied.policy == policy {
		s.applied = appliedState{}
	}
	klog.FromContext(ctx).V(2).Info("Restored the BE cgroups after CPU suppression", "policy", policy)
	return nil
}

// logApplied logs the allowance in force when it changed.
func (s *Strategy) logApplied(ctx context.Context, policy slov1alpha1.CPUSuppressPolicy, value string, in Inputs, allowed float64) {
	if s.applied == (appliedState{policy: policy, value: value}) {
		return
	}
	s.applied = appliedState{policy: policy, value: value}
	klog.FromContext(ctx).V(2).Info("Suppressed BE CPU", "policy", policy, "value", value, "allowedCores", allowed,
		"capacityCores", in.Capacity, "thresholdPercent", in.ThresholdPercent, "nonBEPodsUsageCores", in.NonBEPodsUsage,
		"nonBEHostAppsUsageCores", in.NonBEHostAppsUsage, "nonBEPressurePercent", in.NonBEPressure, "systemUsageCores", in.SystemUsage, "nodeReservedCores", in.NodeReserved)
}
