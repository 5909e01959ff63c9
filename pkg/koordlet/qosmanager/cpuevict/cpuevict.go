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
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "cpuevict"

// Reason is the reason of the evictions and their Events.
const Reason = "EvictPodByBECPUSatisfaction"

// DefaultCoolDown is how long after a round that evicted the next rounds only sample.
const DefaultCoolDown = 20 * time.Second

// maxSamples bounds the samples kept, whatever the window.
const maxSamples = 3600

// Evictor evicts pods; *evictor.Evictor satisfies it.
type Evictor interface {
	// Evict evicts pod and reports whether it did.
	Evict(ctx context.Context, pod *corev1.Pod, reason, message string) (bool, error)
}

// Strategy evicts BE pods whose CPU satisfaction stays low while they use what they have. Create it with New.
type Strategy struct {
	cg       *cgroup.Manager
	evictor  Evictor
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

// WithRecorder reports malformed koordinator.sh/eviction-priority annotations as Events on their pods.
func WithRecorder(r record.EventRecorder) Option {
	return func(s *Strategy) { s.reporter = qosmanager.NewAnnotationReporter(r) }
}

// WithAnnotationReporter shares a reporter of malformed annotations with other strategies.
func WithAnnotationReporter(r *qosmanager.AnnotationReporter) Option {
	return func(s *Strategy) { s.reporter = r }
}

// New returns the strategy, reading the besteffort cgroup through cg and evicting through evictor.
func New(cg *cgroup.Manager, evictor Evictor, opts ...Option) *Strategy {
	s := &Strategy{cg: cg, evictor: evictor, coolDown: DefaultCoolDown, interval: qosmanager.DefaultInterval}
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

// Run implements qosmanager.Strategy: when resourceUsedThresholdWithBE is enabled with both satisfaction
// percents set, it samples the BE pods' usage, request and limit every round; when the samples cover a third of
// the window (cpuEvictTimeWindowSeconds, at least one interval) it evicts BE pods, in SortCandidates order, until
// their batch-cpu requests add up to ToRelease of the window's average and the newest sample.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	cfg, cfgErr := s.config.Update(st.ResourceThreshold())
	if cfg == nil {
		return cfgErr
	}
	if !ptr.Deref(cfg.Enable, false) || cfg.CPUEvictBESatisfactionLowerPercent == nil || cfg.CPUEvictBESatisfactionUpperPercent == nil {
		s.samples = s.samples[:0]
		return cfgErr
	}
	t := Thresholds{
		Lower: *cfg.CPUEvictBESatisfactionLowerPercent,
		Upper: *cfg.CPUEvictBESatisfactionUpperPercent,
		Usage: ptr.Deref(cfg.CPUEvictBEUsageThresholdPercent, DefaultUsageThresholdPercent),
	}
	if err := t.Validate(); err != nil {
		return errors.Join(cfgErr, fmt.Errorf("NodeSLO %s: %w", st.NodeSLO.Name, err))
	}
	window := max(time.Duration(ptr.Deref(cfg.CPUEvictTimeWindowSeconds, 0))*time.Second, s.interval)

	current, err := s.sample(ctx, st, cfg.CPUEvictPolicy)
	if err != nil {
		return errors.Join(cfgErr, err)
	}
	s.record(current, window)
	logger := klog.FromContext(ctx)
	if !s.lastEvict.IsZero() && st.Now.Sub(s.lastEvict) < s.coolDown {
		logger.V(4).Info("Skipped BE CPU eviction during its cool-down", "lastEviction", s.lastEvict)
		return cfgErr
	}
	if time.Duration(len(s.samples))*s.interval*3 < window {
		logger.V(4).Info("Waited for BE CPU samples to cover a third of the window", "samples", len(s.samples), "window", window)
		return cfgErr
	}
	avg := Average(s.samples)
	release := ToRelease(avg, current, t)
	if release <= 0 {
		return cfgErr
	}
	return errors.Join(cfgErr, s.evict(ctx, st, current, t, release))
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

// evict evicts BE pods until their requests reach release cores.
func (s *Strategy) evict(ctx context.Context, st *qosmanager.State, current Sample, t Thresholds, release float64) error {
	s.reporter.Retain(st.Pods)
	var candidates []Candidate
	released := 0.0
	for _, pod := range st.Pods {
		if !qosmanager.LabelledBE(pod) {
			continue
		}
		req := batchCPURequest(pod)
		if pod.DeletionTimestamp != nil {
			released += req
			continue
		}
		ep, err := qosmanager.EvictionPriority(pod)
		if err != nil {
			s.reporter.Report(ctx, pod, extension.AnnotationPodEvictionPriority, err)
		}
		u, _ := st.Latest(qosmanager.PodKey(pod.UID, corev1.ResourceCPU))
		candidates = append(candidates, Candidate{Pod: pod, EvictionPriority: ep, Priority: ptr.Deref(pod.Spec.Priority, 0), Request: req, Usage: u})
	}
	SortCandidates(candidates)

	satisfaction := 0.0
	if current.Request > 0 {
		satisfaction = current.Limit / current.Request * 100
	}
	usage := 100.0
	if current.Limit > 0 {
		usage = current.Usage / current.Limit * 100
	}
	var errs []error
	evicted := 0
	for _, c := range candidates {
		if released >= release {
			break
		}
		msg := fmt.Sprintf("BE CPU satisfaction %s (limit %s / request %s) < %d%% while BE pods use %s of the limit >= %d%%, "+
			"releasing %s batch-cpu to reach %d%%; pod request %s",
			qosmanager.FormatPercent(satisfaction), qosmanager.FormatCores(current.Limit), qosmanager.FormatCores(current.Request), t.Lower,
			qosmanager.FormatPercent(usage), t.Usage, qosmanager.FormatCores(release-released), t.Upper, qosmanager.FormatCores(c.Request))
		ok, err := s.evictor.Evict(ctx, c.Pod, Reason, msg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			evicted++
			released += c.Request
		}
	}
	if evicted > 0 {
		s.lastEvict = st.Now
	}
	klog.FromContext(ctx).V(2).Info("Evicted BE pods for CPU satisfaction", "satisfactionPercent", satisfaction,
		"usagePercent", usage, "releaseCores", release, "releasedCores", released, "evicted", evicted, "candidates", len(candidates))
	return errors.Join(errs...)
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
