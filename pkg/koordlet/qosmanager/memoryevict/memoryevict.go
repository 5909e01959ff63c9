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

package memoryevict

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

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "memoryevict"

// Reasons of the evictions, by feature: the metric label and the reason in the Event's message.
const (
	// Reason is the reason of BEMemoryEvict's evictions, Koordinator's.
	Reason = "EvictPodByNodeMemoryUsage"
	// ReasonNodeUsage is the reason of MemoryEvict's evictions.
	ReasonNodeUsage = "EvictPodByNodeMemoryUsageAndPriority"
	// ReasonAllocatable is the reason of MemoryAllocatableEvict's evictions.
	ReasonAllocatable = "EvictPodByNodeMemoryAllocatable"
)

// DefaultCoolDown is how long after a round that evicted the next rounds do nothing, so that the evicted pods'
// memory shows in the usage before more are chosen.
const DefaultCoolDown = 4 * time.Second

// Evictor evicts pods; *evictor.Evictor satisfies it.
type Evictor = qosmanager.Evictor

// Gates are the koordlet feature gates of the memory evictions: which of them the strategy runs.
type Gates struct {
	// BEMemoryEvict evicts BE pods when node memory usage reaches memoryEvictThresholdPercent.
	BEMemoryEvict bool
	// MemoryAllocatableEvict evicts pods up to allocatableEvictPriorityThreshold when their mid or batch memory
	// requests pass memoryAllocatableEvictThresholdPercent of the node's allocatable.
	MemoryAllocatableEvict bool
	// MemoryEvict evicts pods up to evictEnabledPriorityThreshold when node memory usage reaches
	// memoryEvictThresholdPercent.
	MemoryEvict bool
}

// Reasons returns the eviction reasons of the gates that are on: Reason (BEMemoryEvict), ReasonNodeUsage
// (MemoryEvict) and ReasonAllocatable (MemoryAllocatableEvict).
func (g Gates) Reasons() []string {
	var out []string
	for _, r := range []struct {
		on     bool
		reason string
	}{{g.BEMemoryEvict, Reason}, {g.MemoryEvict, ReasonNodeUsage}, {g.MemoryAllocatableEvict, ReasonAllocatable}} {
		if r.on {
			out = append(out, r.reason)
		}
	}
	return out
}

// Strategy evicts pods for node memory, as Koordinator's memoryEvict: BE pods on usage (BEMemoryEvict), pods
// over the mid or batch allocatable (MemoryAllocatableEvict), and pods up to a priority on usage
// (MemoryEvict), in that order within a round. Create it with New.
type Strategy struct {
	evictor   Evictor
	gates     Gates
	reporter  *qosmanager.AnnotationReporter
	coolDown  time.Duration
	config    qosmanager.LastGood[slov1alpha1.ResourceThresholdStrategy]
	lastEvict time.Time
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithCoolDown sets how long after a round that evicted nothing is done. A value below or equal to 0 keeps
// DefaultCoolDown.
func WithCoolDown(d time.Duration) Option {
	return func(s *Strategy) {
		if d > 0 {
			s.coolDown = d
		}
	}
}

// WithGates sets which evictions run; without it only BEMemoryEvict does.
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

// New returns the strategy, evicting through evictor.
func New(evictor Evictor, opts ...Option) *Strategy {
	s := &Strategy{evictor: evictor, coolDown: DefaultCoolDown, gates: Gates{BEMemoryEvict: true}}
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

// Run implements qosmanager.Strategy: when resourceUsedThresholdWithBE is enabled and the strategy is not
// cooling down from a round that evicted, it builds the task of each gate on (see the package doc) and runs
// them with qosmanager.RunEvictions. A task whose configuration is incomplete is skipped with an error.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	cfg, cfgErr := s.config.Update(st.ResourceThreshold())
	if cfg == nil {
		return cfgErr
	}
	if !ptr.Deref(cfg.Enable, false) {
		return cfgErr
	}
	logger := klog.FromContext(ctx)
	if !s.lastEvict.IsZero() && st.Now.Sub(s.lastEvict) < s.coolDown {
		logger.V(4).Info("Skipped memory eviction during its cool-down", "lastEviction", s.lastEvict)
		return cfgErr
	}
	s.reporter.Retain(st.Pods)
	errs := []error{cfgErr}
	var tasks []qosmanager.EvictionTask
	add := func(t []qosmanager.EvictionTask, err error) {
		tasks = append(tasks, t...)
		errs = append(errs, err)
	}
	if s.gates.BEMemoryEvict {
		add(s.beTask(ctx, st, cfg))
	}
	if s.gates.MemoryAllocatableEvict {
		add(s.allocatableTasks(ctx, st, cfg))
	}
	if s.gates.MemoryEvict {
		add(s.usageTask(ctx, st, cfg))
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

// usage is the node's memory usage against the threshold of memoryEvictThresholdPercent.
type usage struct {
	capacity, used, need int64
	threshold, lower     int64
	percent              float64
}

// nodeUsage reads the node's newest memory sample and returns it with what must be released, or nil when
// usage is below the threshold.
func nodeUsage(st *qosmanager.State, cfg *slov1alpha1.ResourceThresholdStrategy) (*usage, error) {
	capacity := qosmanager.NodeMemoryCapacity(st.Node)
	if capacity <= 0 {
		return nil, fmt.Errorf("node %s has no memory capacity", st.Node.Name)
	}
	used, ok := st.Latest(qosmanager.NodeKey(corev1.ResourceMemory))
	if !ok {
		return nil, fmt.Errorf("no node memory usage sample newer than %v", st.MaxSampleAge)
	}
	u := &usage{capacity: capacity, used: int64(used), threshold: ptr.Deref(cfg.MemoryEvictThresholdPercent, 70)}
	u.lower = ptr.Deref(cfg.MemoryEvictLowerPercent, u.threshold-LowerBufferPercent)
	need, trigger := NeedRelease(capacity, u.used, u.threshold, u.lower)
	if !trigger {
		return nil, nil
	}
	u.need, u.percent = need, used*100/float64(capacity)
	return u, nil
}

// message is the Event message of an eviction for node memory usage.
func (u *usage) message(podMemory, left float64) string {
	return fmt.Sprintf("node memory usage %s >= threshold %d%%, releasing %s to reach %d%%; pod memory %s",
		qosmanager.FormatPercent(u.percent), u.threshold, qosmanager.FormatBytes(int64(left)), u.lower,
		qosmanager.FormatBytes(int64(podMemory)))
}

// memoryOf returns the newest memory samples of pods: a pod without a fresh sample has none.
func memoryOf(st *qosmanager.State) map[types.UID]float64 {
	out := make(map[types.UID]float64, len(st.Pods))
	for _, pod := range st.Pods {
		if mem, ok := st.Latest(qosmanager.PodKey(pod.UID, corev1.ResourceMemory)); ok {
			out[pod.UID] = mem
		}
	}
	return out
}

// beTask is BEMemoryEvict's task: BE pods (by their qosClass label) in SortCandidates order, each releasing
// its memory usage. A pod without a fresh sample is passed over: evicting it could release nothing (right
// after a start the node is sampled before its pods).
func (s *Strategy) beTask(ctx context.Context, st *qosmanager.State, cfg *slov1alpha1.ResourceThresholdStrategy) ([]qosmanager.EvictionTask, error) {
	u, err := nodeUsage(st, cfg)
	if u == nil {
		return nil, err
	}
	feature := string(features.BEMemoryEvict)
	mem := memoryOf(st)
	var candidates []Candidate
	var pending []*corev1.Pod
	for _, pod := range st.Pods {
		if !qosmanager.LabelledBE(pod) || !qosmanager.PolicyAllows(ctx, s.reporter, pod, feature) {
			continue
		}
		if pod.DeletionTimestamp != nil {
			pending = append(pending, pod)
			continue
		}
		m, sampled := mem[pod.UID]
		if !sampled {
			continue
		}
		candidates = append(candidates, Candidate{Pod: pod, EvictionPriority: qosmanager.EvictionPriorityOf(ctx, s.reporter, pod),
			Priority: ptr.Deref(pod.Spec.Priority, 0), Memory: int64(m)})
	}
	SortCandidates(candidates)
	pods := make([]*corev1.Pod, len(candidates))
	for i := range candidates {
		pods[i] = candidates[i].Pod
	}
	release := func(p *corev1.Pod) float64 { return mem[p.UID] }
	return []qosmanager.EvictionTask{{
		Feature: feature, Reason: Reason, Need: float64(u.need), Candidates: pods, Pending: pending, Release: release,
		Message: func(p *corev1.Pod, left float64) string { return u.message(release(p), left) },
	}}, nil
}

// usageTask is MemoryEvict's task: pods labelled koordinator.sh/eviction-enabled=true with a priority up to
// evictEnabledPriorityThreshold, in qosmanager.SortVictims order by memory usage, each releasing its usage.
func (s *Strategy) usageTask(ctx context.Context, st *qosmanager.State, cfg *slov1alpha1.ResourceThresholdStrategy) ([]qosmanager.EvictionTask, error) {
	if cfg.EvictEnabledPriorityThreshold == nil {
		klog.FromContext(ctx).V(4).Info("Skipped MemoryEvict: resourceUsedThresholdWithBE.evictEnabledPriorityThreshold is unset")
		return nil, nil
	}
	u, err := nodeUsage(st, cfg)
	if u == nil {
		return nil, err
	}
	filter := qosmanager.NodeLevelFilter{Feature: string(features.MemoryEvict), MaxPriority: *cfg.EvictEnabledPriorityThreshold, Reporter: s.reporter}
	mem := memoryOf(st)
	var victims []qosmanager.Victim
	var pending []*corev1.Pod
	for _, pod := range st.Pods {
		m, sampled := mem[pod.UID]
		if pod.DeletionTimestamp == nil && !sampled {
			continue
		}
		v, ok := filter.Victim(ctx, pod, m)
		switch {
		case !ok:
		case pod.DeletionTimestamp != nil:
			pending = append(pending, pod)
		default:
			victims = append(victims, v)
		}
	}
	qosmanager.SortVictims(victims)
	release := func(p *corev1.Pod) float64 { return mem[p.UID] }
	return []qosmanager.EvictionTask{{
		Feature: filter.Feature, Reason: ReasonNodeUsage, Need: float64(u.need), Candidates: qosmanager.VictimPods(victims),
		Pending: pending, Release: release,
		Message: func(p *corev1.Pod, left float64) string {
			return u.message(release(p), left) + fmt.Sprintf(", priority %d <= %d", qosmanager.PodPriority(p), *cfg.EvictEnabledPriorityThreshold)
		},
	}}, nil
}

// allocatableTasks are MemoryAllocatableEvict's tasks, one for each of mid-memory and batch-memory whose
// requests (of pods with a priority up to allocatableEvictPriorityThreshold) pass
// memoryAllocatableEvictThresholdPercent of the node's allocatable: each releases the requests above
// memoryAllocatableEvictLowerPercent of it, from pods of that tier labelled koordinator.sh/eviction-enabled=true.
func (s *Strategy) allocatableTasks(ctx context.Context, st *qosmanager.State, cfg *slov1alpha1.ResourceThresholdStrategy) ([]qosmanager.EvictionTask, error) {
	t, err := qosmanager.NewAllocatableThresholds(features.MemoryAllocatableEvict, cfg.MemoryAllocatableEvictThresholdPercent,
		cfg.MemoryAllocatableEvictLowerPercent, cfg.AllocatableEvictPriorityThreshold)
	if err != nil {
		return nil, err
	}
	return qosmanager.AllocatableTasks(ctx, st, corev1.ResourceMemory, t, ReasonAllocatable, s.reporter), nil
}
