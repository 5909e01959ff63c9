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

package cpuburst

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "cpuburst"

// sharePoolWindow is the window the shared pool's usage is averaged over.
const sharePoolWindow = 10 * time.Second

// Strategy applies CPU burst to LS pods. Create it with New.
type Strategy struct {
	cg       *cgroup.Manager
	reporter *qosmanager.AnnotationReporter

	config qosmanager.LastGood[slov1alpha1.CPUBurstStrategy]
	// containers holds per-container state (throttling counters, burst limiter) by container ID.
	containers map[string]*containerState
	// touched holds the containers whose burst or quota this strategy moved away from kubelet's values.
	touched map[string]bool
	// started is set after the first round. The first round visits every LS container, so that what a
	// previous run of the agent left is undone when burst is off.
	started bool
}

type containerState struct {
	throttling    cgroup.Throttling
	hasThrottling bool
	limiter       *Limiter
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithRecorder reports malformed koordinator.sh/cpuBurst annotations as Events on their pods.
func WithRecorder(r record.EventRecorder) Option {
	return func(s *Strategy) { s.reporter = qosmanager.NewAnnotationReporter(r) }
}

// WithAnnotationReporter shares a reporter of malformed annotations with other strategies.
func WithAnnotationReporter(r *qosmanager.AnnotationReporter) Option {
	return func(s *Strategy) { s.reporter = r }
}

// New returns the strategy, writing through cg.
func New(cg *cgroup.Manager, opts ...Option) *Strategy {
	s := &Strategy{cg: cg, containers: map[string]*containerState{}, touched: map[string]bool{}}
	for _, o := range opts {
		o(s)
	}
	if s.reporter == nil {
		s.reporter = qosmanager.NewAnnotationReporter(nil)
	}
	return s
}

// Name implements qosmanager.Strategy.
func (s *Strategy) Name() string { return Name }

// Run implements qosmanager.Strategy: for every running container with a CPU limit of every LS pod it sets
// cfs_burst_us (cpuBurstOnly, auto) and scales the CFS quota (cfsQuotaBurstOnly, auto) following the pod's
// configuration (the NodeSLO's cpuBurstStrategy with the pod's koordinator.sh/cpuBurst annotation over it).
// Containers of pods whose policy is none are put back to kubelet's values (burst 0, quota of the limit) once.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	cfg, cfgErr := s.config.Update(st.CPUBurst())
	if cfg == nil {
		return cfgErr
	}
	errs := []error{cfgErr}
	s.reporter.Retain(st.Pods)
	node := &nodeStateOnce{st: st, threshold: ptr.Deref(cfg.SharePoolThresholdPercent, 50)}
	seen := map[string]bool{}
	for _, pod := range st.Pods {
		if qosmanager.PodQoS(pod) != extension.QoSLS {
			continue
		}
		podCfg, err := PodConfig(pod.Annotations, &cfg.CPUBurstConfig)
		if err != nil {
			s.reporter.Report(ctx, pod, extension.AnnotationPodCPUBurst, err)
		}
		containers := qosmanager.Containers(pod)
		if podCfg.Policy == "" || podCfg.Policy == slov1alpha1.CPUBurstNone {
			needed := !s.started
			for _, c := range containers {
				seen[c.Status.ContainerID] = true
				needed = needed || s.touched[c.Status.ContainerID]
			}
			if !needed {
				continue
			}
		}
		if err := s.reconcilePod(ctx, st, pod, containers, podCfg, node, seen); err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
		}
	}
	for id := range s.containers {
		if !seen[id] {
			delete(s.containers, id)
		}
	}
	for id := range s.touched {
		if !seen[id] {
			delete(s.touched, id)
		}
	}
	s.started = true
	return errors.Join(errs...)
}

// cgroupPlan is what a round writes to one cgroup: its CFS quota, from curQuota to newQuota, and its burst.
type cgroupPlan struct {
	dir                string
	curQuota, newQuota int64
	burst              int64
}

// podPlan is what a round writes to one pod: its cgroup and its containers'.
type podPlan struct {
	pod        cgroupPlan
	containers []cgroupPlan
}

// reconcilePod plans each container's burst and quota and the pod's, then applies the plan.
func (s *Strategy) reconcilePod(ctx context.Context, st *qosmanager.State, pod *corev1.Pod, containers []qosmanager.Container,
	cfg *slov1alpha1.CPUBurstConfig, node *nodeStateOnce, seen map[string]bool) error {
	plan, errs := s.planPod(ctx, st, pod, containers, cfg, node, seen)
	if plan != nil {
		errs = append(errs, s.apply(ctx, plan))
	}
	return errors.Join(errs...)
}

// planPod reads the pod's cgroups and decides their quotas and bursts: each container's from the policy, the
// pod's quota moved by as much as its containers' and its burst their sum, never above the pod's new quota. It
// returns nil when no container has a CPU limit, and the errors of the containers it had to leave out.
func (s *Strategy) planPod(ctx context.Context, st *qosmanager.State, pod *corev1.Pod, containers []qosmanager.Container,
	cfg *slov1alpha1.CPUBurstConfig, node *nodeStateOnce, seen map[string]bool) (*podPlan, []error) {
	l := s.cg.Layout()
	kubeQoS := extension.GetKubeQoSClass(pod)
	podDir := l.PodDir(kubeQoS, pod.UID)
	podQuota, _, err := s.cg.CFSQuota(ctx, podDir)
	if err != nil {
		return nil, []error{ignoreMissing(err)}
	}
	logger := klog.FromContext(ctx)
	var errs []error
	plan := &podPlan{pod: cgroupPlan{dir: podDir, curQuota: podQuota, newQuota: podQuota}}
	for _, c := range containers {
		id := c.Status.ContainerID
		seen[id] = true
		limitMilli := c.Spec.Resources.Limits.Cpu().MilliValue()
		if limitMilli <= 0 {
			continue
		}
		dir, err := l.ContainerDir(kubeQoS, pod.UID, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cur, period, err := s.cg.CFSQuota(ctx, dir)
		if err != nil {
			errs = append(errs, ignoreMissing(err))
			continue
		}
		base := limitMilli * period / 1000
		p := cgroupPlan{dir: dir, curQuota: cur, newQuota: cur}
		if cur > 0 {
			throttled := s.throttled(ctx, id, dir)
			allows := s.limiterAllows(st, id, cfg, limitMilli)
			op := QuotaOp(cfg.Policy, allows, throttled, node.get())
			ceil := base * ptr.Deref(cfg.CFSQuotaBurstPercent, 100) / 100
			p.newQuota = TargetQuota(op, cur, base, ceil)
			if p.newQuota != cur {
				logger.V(3).Info("Scaled a container's CFS quota", "pod", klog.KObj(pod), "container", c.Spec.Name,
					"operation", op, "nodeState", node.get(), "fromUs", cur, "toUs", p.newQuota)
			}
		}
		p.burst = BurstUs(cfg.Policy, limitMilli, ptr.Deref(cfg.CPUBurstPercent, 0), period)
		if p.newQuota > 0 {
			p.burst = min(p.burst, p.newQuota)
		}
		if p.burst != 0 || (p.newQuota > 0 && p.newQuota != base) {
			s.touched[id] = true
		} else {
			delete(s.touched, id)
		}
		plan.containers = append(plan.containers, p)
	}
	if len(plan.containers) == 0 {
		return nil, errs
	}
	for _, p := range plan.containers {
		if podQuota > 0 {
			plan.pod.newQuota += p.newQuota - p.curQuota
		}
		plan.pod.burst += p.burst
	}
	if plan.pod.newQuota > 0 {
		plan.pod.burst = min(plan.pod.burst, plan.pod.newQuota)
	}
	return plan, errs
}

// apply writes plan in the order that keeps every child's quota within its parent's and every burst within
// its quota at each step: a pod quota that grows is raised before its containers', one that shrinks is
// lowered after them; a cgroup's burst is lowered before its quota and raised after it.
func (s *Strategy) apply(ctx context.Context, plan *podPlan) error {
	var errs []error
	set := func(p cgroupPlan) {
		if p.newQuota < p.curQuota {
			errs = append(errs, s.setBurst(ctx, p.dir, p.burst), s.setQuota(ctx, p.dir, p.newQuota, p.curQuota))
		} else {
			errs = append(errs, s.setQuota(ctx, p.dir, p.newQuota, p.curQuota), s.setBurst(ctx, p.dir, p.burst))
		}
	}
	pod := plan.pod
	if pod.newQuota > pod.curQuota {
		errs = append(errs, s.setQuota(ctx, pod.dir, pod.newQuota, pod.curQuota))
	}
	for _, p := range plan.containers {
		set(p)
	}
	if pod.newQuota < pod.curQuota {
		set(pod)
	} else {
		errs = append(errs, s.setBurst(ctx, pod.dir, pod.burst))
	}
	return errors.Join(errs...)
}

func (s *Strategy) setQuota(ctx context.Context, dir string, quota, cur int64) error {
	if quota == cur {
		return nil
	}
	_, err := s.cg.SetCFSQuota(ctx, dir, quota)
	return ignoreMissing(err)
}

func (s *Strategy) setBurst(ctx context.Context, dir string, burst int64) error {
	_, err := s.cg.SetCFSBurst(ctx, dir, burst)
	return ignoreMissing(err)
}

// ignoreMissing drops the errors of cgroups that are gone and of knobs the kernel lacks (burst before 5.14).
func ignoreMissing(err error) error {
	if errors.Is(err, cgroup.ErrNotFound) || errors.Is(err, cgroup.ErrNotSupported) {
		return nil
	}
	return err
}

// throttled reports whether the container was throttled since the last round, from its cpu.stat counters.
func (s *Strategy) throttled(ctx context.Context, id, dir string) bool {
	t, err := s.cg.CPUThrottling(ctx, dir)
	if err != nil {
		return false
	}
	cs := s.state(id)
	prev, had := cs.throttling, cs.hasThrottling
	cs.throttling, cs.hasThrottling = t, true
	return had && t.Periods > prev.Periods && t.ThrottledPeriods > prev.ThrottledPeriods
}

// limiterAllows runs the container's burst limiter on its newest CPU usage sample (taken as 100 % of the limit
// when there is none). A negative cfsQuotaBurstPeriodSeconds means no limit.
func (s *Strategy) limiterAllows(st *qosmanager.State, id string, cfg *slov1alpha1.CPUBurstConfig, limitMilli int64) bool {
	period := ptr.Deref(cfg.CFSQuotaBurstPeriodSeconds, -1)
	if period < 0 {
		return true
	}
	percent := ptr.Deref(cfg.CFSQuotaBurstPercent, 100)
	cs := s.state(id)
	if cs.limiter == nil || !cs.limiter.Matches(period, percent) {
		cs.limiter = NewLimiter(period, percent, st.Now)
	}
	usagePercent := 100.0
	if u, ok := st.Latest(qosmanager.ContainerKey(id, corev1.ResourceCPU)); ok {
		usagePercent = u * 1000 / float64(limitMilli) * 100
	}
	allowed, _ := cs.limiter.Allow(st.Now, usagePercent)
	return allowed
}

func (s *Strategy) state(id string) *containerState {
	cs := s.containers[id]
	if cs == nil {
		cs = &containerState{}
		s.containers[id] = cs
	}
	return cs
}

// nodeStateOnce computes the node's shared-pool state on first use in a round.
type nodeStateOnce struct {
	st        *qosmanager.State
	threshold int64
	done      bool
	state     NodeState
}

func (n *nodeStateOnce) get() NodeState {
	if !n.done {
		n.state, n.done = sharePool(n.st, n.threshold), true
	}
	return n.state
}

// sharePool returns the node's state from the average usage of the last sharePoolWindow: the shared pool is the
// node's CPU capacity minus the CPU requests of LSE and LSR pods, its usage the node's minus the usage of LSE,
// LSR and BE pods.
func sharePool(st *qosmanager.State, thresholdPercent int64) NodeState {
	start := st.Now.Add(-sharePoolWindow)
	node, ok := st.Metrics.Aggregate(qosmanager.NodeKey(corev1.ResourceCPU), start, st.Now)
	if !ok {
		return NodeUnknown
	}
	total, usage := qosmanager.NodeCPUCapacity(st.Node), node.Avg
	for _, pod := range st.Pods {
		switch qosmanager.PodQoS(pod) {
		case extension.QoSLSE, extension.QoSLSR:
			total -= podCPURequest(pod)
		case extension.QoSBE:
		default:
			continue
		}
		if a, ok := st.Metrics.Aggregate(qosmanager.PodKey(pod.UID, corev1.ResourceCPU), start, st.Now); ok {
			usage -= a.Avg
		}
	}
	return SharePoolState(usage, total, thresholdPercent)
}

// podCPURequest returns the CPU requested by the pod's app containers and sidecars, in cores.
func podCPURequest(pod *corev1.Pod) float64 {
	var milli int64
	for i := range pod.Spec.Containers {
		milli += pod.Spec.Containers[i].Resources.Requests.Cpu().MilliValue()
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			milli += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	return float64(milli) / 1000
}
