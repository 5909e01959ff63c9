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

package cpuevict

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "cpuevict"

// Reasons of the evictions, by feature: the metric label and the reason in the Event's message.
const (
	// Reason is the reason of BECPUEvict's evictions, Koordinator's.
	Reason = "EvictPodByBECPUSatisfaction"
	// ReasonNodeUsage is the reason of CPUEvict's evictions.
	ReasonNodeUsage = "EvictPodByNodeCPUUsage"
	// ReasonAllocatable is the reason of CPUAllocatableEvict's evictions.
	ReasonAllocatable = "EvictPodByNodeCPUAllocatable"
)

// DefaultCoolDown is how long after a round that evicted the next rounds only sample.
const DefaultCoolDown = 20 * time.Second

// LowerBufferPercent is how far below cpuEvictThresholdPercent CPUEvict brings the node when
// cpuEvictLowerPercent is unset, Koordinator's.
const LowerBufferPercent = 2

// maxSamples bounds the samples kept, whatever the window.
const maxSamples = 3600

// Evictor evicts pods; *evictor.Evictor satisfies it.
type Evictor = qosmanager.Evictor

// Gates are the koordlet feature gates of the CPU evictions: which of them the strategy runs.
type Gates struct {
	// BECPUEvict evicts BE pods whose CPU satisfaction stays low while they use what they have.
	BECPUEvict bool
	// CPUAllocatableEvict evicts pods up to allocatableEvictPriorityThreshold when their mid or batch CPU
	// requests pass cpuAllocatableEvictThresholdPercent of the node's allocatable.
	CPUAllocatableEvict bool
	// CPUEvict evicts pods up to evictEnabledPriorityThreshold when the node's CPU usage reaches
	// cpuEvictThresholdPercent.
	CPUEvict bool
}

// Reasons returns the eviction reasons of the gates that are on: Reason (BECPUEvict), ReasonNodeUsage
// (CPUEvict) and ReasonAllocatable (CPUAllocatableEvict).
func (g Gates) Reasons() []string {
	var out []string
	for _, r := range []struct {
		on     bool
		reason string
	}{{g.BECPUEvict, Reason}, {g.CPUEvict, ReasonNodeUsage}, {g.CPUAllocatableEvict, ReasonAllocatable}} {
		if r.on {
			out = append(out, r.reason)
		}
	}
	return out
}

// Strategy evicts pods for CPU, as Koordinator's CPUEvict strategy: BE pods whose CPU satisfaction stays low
// (BECPUEvict), pods over the mid or batch allocatable (CPUAllocatableEvict) and pods up to a priority on node
// usage (CPUEvict), in that order within a round. Create it with New.
type Strategy struct {
	cg       *cgroup.Manager
	evictor  Evictor
	gates    Gates
	reporter *qosmanager.AnnotationReporter
	coolDown time.Duration
	interval time.Duration

	config    qosmanager.LastGood[slov1alpha1.ResourceThresholdStrategy]
	samples   []Sample
	lastEvict time.Time
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithCoolDown sets how long after a round that evicted no pod is evicted. A value below or equal to 0 keeps
// DefaultCoolDown.
func WithCoolDown(d time.Duration) Option {
	return func(s *Strategy) {
		if d > 0 {
			s.coolDown = d
		}
	}
}

// WithInterval tells the strategy how often it runs (the Manager's interval; qosmanager.DefaultInterval by
// default). It is the shortest averaging window, and the window counts as covered with a third of its rounds.
func WithInterval(d time.Duration) Option {
	return func(s *Strategy) {
		if d > 0 {
			s.interval = d
		}
	}
}

// WithGates sets which evictions run; without it only BECPUEvict does.
func WithGates(g Gates) Option {
	return func(s *Strategy) { s.gates = g }
}

// WithRecorder reports malformed koordinator.sh/eviction-priority and eviction-policy annotations as Events on
// their pods.
func WithRecorder(r record.EventRecorder) Option {
	return func(s *Strategy) { s.reporter = qosmanager.NewAnnotationReporter(r) }
}

// WithAnnotationReporter shares a reporter of malformed annotations with other strategies.
func WithAnnotationReporter(r *qosmanager.AnnotationReporter) Option {
	return func(s *Strategy) { s.reporter = r }
}

// New returns the strategy, reading the besteffort cgroup through cg and evicting through evictor.
func New(cg *cgroup.Manager, evictor Evictor, opts ...Option) *Strategy {
	s := &Strategy{cg: cg, evictor: evictor, coolDown: DefaultCoolDown, interval: qosmanager.DefaultInterval, gates: Gates{BECPUEvict: true}}
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

// Run implements qosmanager.Strategy: when resourceUsedThresholdWithBE is enabled it samples the BE pods
// (BECPUEvict) and, unless it is cooling down from a round that evicted, builds the task of each gate on (see
// the package doc) and runs them with qosmanager.RunEvictions. A task whose configuration is incomplete is
// skipped; an invalid one is reported as an error.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	cfg, cfgErr := s.config.Update(st.ResourceThreshold())
	if cfg == nil {
		return cfgErr
	}
	if !ptr.Deref(cfg.Enable, false) {
		s.samples = s.samples[:0]
		return cfgErr
	}
	errs := []error{cfgErr}
	var beTask func() []qosmanager.EvictionTask
	if s.gates.BECPUEvict {
		var err error
		beTask, err = s.sampleBE(ctx, st, cfg)
		errs = append(errs, err)
	}
	logger := klog.FromContext(ctx)
	if !s.lastEvict.IsZero() && st.Now.Sub(s.lastEvict) < s.coolDown {
		logger.V(4).Info("Skipped CPU eviction during its cool-down", "lastEviction", s.lastEvict)
		return errors.Join(errs...)
	}
	s.reporter.Retain(st.Pods)
	var tasks []qosmanager.EvictionTask
	if beTask != nil {
		tasks = append(tasks, beTask()...)
	}
	if s.gates.CPUAllocatableEvict {
		t, err := qosmanager.NewAllocatableThresholds(features.CPUAllocatableEvict, cfg.CPUAllocatableEvictThresholdPercent,
			cfg.CPUAllocatableEvictLowerPercent, cfg.AllocatableEvictPriorityThreshold)
		if err == nil {
			tasks = append(tasks, qosmanager.AllocatableTasks(ctx, st, corev1.ResourceCPU, t, ReasonAllocatable, s.reporter)...)
		}
		errs = append(errs, err)
	}
	if s.gates.CPUEvict {
		t, err := s.usageTask(ctx, st, cfg)
		tasks = append(tasks, t...)
		errs = append(errs, err)
	}
	if len(tasks) == 0 {
		return errors.Join(errs...)
	}
	results, err := qosmanager.RunEvictions(ctx, s.evictor, tasks)
	errs = append(errs, err)
	for _, r := range results {
		if r.Evicted > 0 {
			s.lastEvict = st.Now
		}
	}
	return errors.Join(errs...)
}

// sampleBE records this round's sample of the BE pods and returns the function that builds BECPUEvict's task,
// nil when the satisfaction percents are unset or the samples do not cover a third of the window yet.
func (s *Strategy) sampleBE(ctx context.Context, st *qosmanager.State, cfg *slov1alpha1.ResourceThresholdStrategy) (func() []qosmanager.EvictionTask, error) {
	if cfg.CPUEvictBESatisfactionLowerPercent == nil || cfg.CPUEvictBESatisfactionUpperPercent == nil {
		s.samples = s.samples[:0]
		return nil, nil
	}
	t := Thresholds{
		Lower: *cfg.CPUEvictBESatisfactionLowerPercent,
		Upper: *cfg.CPUEvictBESatisfactionUpperPercent,
		Usage: ptr.Deref(cfg.CPUEvictBEUsageThresholdPercent, DefaultUsageThresholdPercent),
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("NodeSLO %s: %w", st.NodeSLO.Name, err)
	}
	window := max(time.Duration(ptr.Deref(cfg.CPUEvictTimeWindowSeconds, 0))*time.Second, s.interval)
	current, err := s.sample(ctx, st, cfg.CPUEvictPolicy)
	if err != nil {
		return nil, err
	}
	s.record(current, window)
	if time.Duration(len(s.samples))*s.interval*3 < window {
		klog.FromContext(ctx).V(4).Info("Waited for BE CPU samples to cover a third of the window", "samples", len(s.samples), "window", window)
		return nil, nil
	}
	release := ToRelease(Average(s.samples), current, t)
	if release <= 0 {
		return nil, nil
	}
	return func() []qosmanager.EvictionTask {
		return []qosmanager.EvictionTask{s.beTask(ctx, st, current, t, release)}
	}, nil
}

// usageTask is CPUEvict's task: when the node's CPU usage, averaged over cpuEvictTimeWindowSeconds (at least
// one interval), reaches cpuEvictThresholdPercent of its capacity, pods labelled
// koordinator.sh/eviction-enabled=true with a priority up to evictEnabledPriorityThreshold, in
// qosmanager.SortVictims order by CPU usage, each releasing its usage, until the node is back at
// cpuEvictLowerPercent (default: the threshold − 2).
func (s *Strategy) usageTask(ctx context.Context, st *qosmanager.State, cfg *slov1alpha1.ResourceThresholdStrategy) ([]qosmanager.EvictionTask, error) {
	switch {
	case cfg.CPUEvictThresholdPercent == nil:
		klog.FromContext(ctx).V(4).Info("Skipped CPUEvict: resourceUsedThresholdWithBE.cpuEvictThresholdPercent is unset")
		return nil, nil
	case cfg.EvictEnabledPriorityThreshold == nil:
		return nil, fmt.Errorf("%s needs resourceUsedThresholdWithBE.evictEnabledPriorityThreshold", features.CPUEvict)
	}
	threshold := *cfg.CPUEvictThresholdPercent
	lower := ptr.Deref(cfg.CPUEvictLowerPercent, threshold-LowerBufferPercent)
	capacity := qosmanager.NodeCPUCapacity(st.Node)
	if capacity <= 0 {
		return nil, fmt.Errorf("node %s has no CPU capacity", st.Node.Name)
	}
	window := max(time.Duration(ptr.Deref(cfg.CPUEvictTimeWindowSeconds, 0))*time.Second, s.interval)
	agg, ok := st.Metrics.Aggregate(qosmanager.NodeKey(corev1.ResourceCPU), st.Now.Add(-window), st.Now)
	if !ok {
		return nil, fmt.Errorf("no node CPU usage sample in the last %v", window)
	}
	used := agg.Avg
	if used*100 < capacity*float64(threshold) {
		return nil, nil
	}
	need := used - capacity*float64(lower)/100
	filter := qosmanager.NodeLevelFilter{Feature: string(features.CPUEvict), MaxPriority: *cfg.EvictEnabledPriorityThreshold, Reporter: s.reporter}
	usage := map[types.UID]float64{}
	var victims []qosmanager.Victim
	var pending []*corev1.Pod
	for _, pod := range st.Pods {
		u, sampled := st.Latest(qosmanager.PodKey(pod.UID, corev1.ResourceCPU))
		if pod.DeletionTimestamp == nil && !sampled {
			continue
		}
		v, ok := filter.Victim(ctx, pod, u)
		switch {
		case !ok:
			continue
		case pod.DeletionTimestamp != nil:
			pending = append(pending, pod)
		default:
			victims = append(victims, v)
		}
		usage[pod.UID] = u
	}
	qosmanager.SortVictims(victims)
	percent := used * 100 / capacity
	return []qosmanager.EvictionTask{{
		Feature: filter.Feature, Reason: ReasonNodeUsage, Need: need, Candidates: qosmanager.VictimPods(victims), Pending: pending,
		Release: func(p *corev1.Pod) float64 { return usage[p.UID] },
		Message: func(p *corev1.Pod, left float64) string {
			return fmt.Sprintf("node CPU usage %s (average over %v) >= threshold %d%%, releasing %s to reach %d%%; pod CPU usage %s, priority %d <= %d",
				qosmanager.FormatPercent(percent), window, threshold, qosmanager.FormatCores(left), lower,
				qosmanager.FormatCores(usage[p.UID]), qosmanager.PodPriority(p), *cfg.EvictEnabledPriorityThreshold)
		},
	}}, nil
}

// sample measures the BE pods now.
func (s *Strategy) sample(ctx context.Context, st *qosmanager.State, policy slov1alpha1.CPUEvictPolicy) (Sample, error) {
	out := Sample{Time: st.Now}
	for _, pod := range st.Pods {
		if qosmanager.PodQoS(pod) != extension.QoSBE {
			continue
		}
		out.Request += batchCPURequest(pod)
		if u, ok := st.Latest(qosmanager.PodKey(pod.UID, corev1.ResourceCPU)); ok {
			out.Usage += u
		}
	}
	if policy == slov1alpha1.EvictByAllocatablePolicy {
		q := st.Node.Status.Allocatable[extension.BatchCPU]
		out.Limit = float64(q.Value()) / 1000
		return out, nil
	}
	dir := s.cg.Layout().QoSDir(corev1.PodQOSBestEffort)
	cpus, err := s.cg.CPUSet(ctx, dir)
	if err != nil {
		return out, fmt.Errorf("read the BE CPU limit: %w", err)
	}
	out.Limit = float64(cpus.Size())
	quota, period, err := s.cg.CFSQuota(ctx, dir)
	if err != nil {
		return out, fmt.Errorf("read the BE CPU limit: %w", err)
	}
	if quota > 0 && period > 0 {
		out.Limit = min(out.Limit, float64(quota)/float64(period))
	}
	return out, nil
}

// record keeps current and drops the samples out of the window.
func (s *Strategy) record(current Sample, window time.Duration) {
	s.samples = append(s.samples, current)
	i := 0
	for i < len(s.samples) && (current.Time.Sub(s.samples[i].Time) >= window || len(s.samples)-i > maxSamples) {
		i++
	}
	if i > 0 {
		s.samples = append(s.samples[:0], s.samples[i:]...)
	}
}

// beTask is BECPUEvict's task: BE pods (by their qosClass label) in SortCandidates order, each releasing its
// batch-cpu request, until release cores are released.
func (s *Strategy) beTask(ctx context.Context, st *qosmanager.State, current Sample, t Thresholds, release float64) qosmanager.EvictionTask {
	feature := string(features.BECPUEvict)
	var candidates []Candidate
	var pending []*corev1.Pod
	requests := map[types.UID]float64{}
	for _, pod := range st.Pods {
		if !qosmanager.LabelledBE(pod) || !qosmanager.PolicyAllows(ctx, s.reporter, pod, feature) {
			continue
		}
		req := batchCPURequest(pod)
		requests[pod.UID] = req
		if pod.DeletionTimestamp != nil {
			pending = append(pending, pod)
			continue
		}
		u, _ := st.Latest(qosmanager.PodKey(pod.UID, corev1.ResourceCPU))
		candidates = append(candidates, Candidate{Pod: pod, EvictionPriority: qosmanager.EvictionPriorityOf(ctx, s.reporter, pod),
			Priority: ptr.Deref(pod.Spec.Priority, 0), Request: req, Usage: u})
	}
	SortCandidates(candidates)
	pods := make([]*corev1.Pod, len(candidates))
	for i := range candidates {
		pods[i] = candidates[i].Pod
	}
	satisfaction := 0.0
	if current.Request > 0 {
		satisfaction = current.Limit / current.Request * 100
	}
	usage := 100.0
	if current.Limit > 0 {
		usage = current.Usage / current.Limit * 100
	}
	return qosmanager.EvictionTask{
		Feature: feature, Reason: Reason, Need: release, Candidates: pods, Pending: pending,
		Release: func(p *corev1.Pod) float64 { return requests[p.UID] },
		Message: func(p *corev1.Pod, left float64) string {
			return fmt.Sprintf("BE CPU satisfaction %s (limit %s / request %s) < %d%% while BE pods use %s of the limit >= %d%%, "+
				"releasing %s batch-cpu to reach %d%%; pod request %s",
				qosmanager.FormatPercent(satisfaction), qosmanager.FormatCores(current.Limit), qosmanager.FormatCores(current.Request), t.Lower,
				qosmanager.FormatPercent(usage), t.Usage, qosmanager.FormatCores(left), t.Upper, qosmanager.FormatCores(requests[p.UID]))
		},
	}
}

// batchCPURequest returns the pod's batch-cpu request in cores: its app containers' and sidecars'.
func batchCPURequest(pod *corev1.Pod) float64 {
	var milli int64
	add := func(c *corev1.Container) {
		for n, q := range c.Resources.Requests {
			if extension.NormalizeResourceName(n) == extension.BatchCPU {
				milli += q.Value()
			}
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	return float64(milli) / 1000
}
