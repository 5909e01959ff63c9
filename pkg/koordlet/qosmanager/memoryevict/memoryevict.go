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
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "memoryevict"

// Reason is the reason of the evictions and their Events.
const Reason = "EvictPodByNodeMemoryUsage"

// DefaultCoolDown is how long after a round that evicted the next rounds do nothing, so that the evicted pods'
// memory shows in the usage before more are chosen.
const DefaultCoolDown = 4 * time.Second

// Evictor evicts pods; *evictor.Evictor satisfies it.
type Evictor interface {
	// Evict evicts pod and reports whether it did.
	Evict(ctx context.Context, pod *corev1.Pod, reason, message string) (bool, error)
}

// Strategy evicts BE pods when the node's memory usage reaches memoryEvictThresholdPercent. Create it with New.
type Strategy struct {
	evictor   Evictor
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

// WithRecorder reports malformed koordinator.sh/eviction-priority annotations as Events on their pods.
func WithRecorder(r record.EventRecorder) Option {
	return func(s *Strategy) { s.reporter = qosmanager.NewAnnotationReporter(r) }
}

// WithAnnotationReporter shares a reporter of malformed annotations with other strategies.
func WithAnnotationReporter(r *qosmanager.AnnotationReporter) Option {
	return func(s *Strategy) { s.reporter = r }
}

// New returns the strategy, evicting through evictor.
func New(evictor Evictor, opts ...Option) *Strategy {
	s := &Strategy{evictor: evictor, coolDown: DefaultCoolDown}
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

// Run implements qosmanager.Strategy: when resourceUsedThresholdWithBE is enabled and the node's newest memory
// sample is at or above memoryEvictThresholdPercent of its capacity, it evicts BE pods in SortCandidates order
// until their memory adds up to NeedRelease. BE pods already terminating count as released and are not asked
// again.
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
	capacity := qosmanager.NodeMemoryCapacity(st.Node)
	if capacity <= 0 {
		return errors.Join(cfgErr, fmt.Errorf("node %s has no memory capacity", st.Node.Name))
	}
	used, ok := st.Latest(qosmanager.NodeKey(corev1.ResourceMemory))
	if !ok {
		return errors.Join(cfgErr, fmt.Errorf("no node memory usage sample newer than %v", st.MaxSampleAge))
	}
	threshold := ptr.Deref(cfg.MemoryEvictThresholdPercent, 70)
	lower := ptr.Deref(cfg.MemoryEvictLowerPercent, threshold-LowerBufferPercent)
	need, trigger := NeedRelease(capacity, int64(used), threshold, lower)
	if !trigger {
		return cfgErr
	}
	usagePercent := used * 100 / float64(capacity)

	s.reporter.Retain(st.Pods)
	var candidates []Candidate
	released := int64(0)
	for _, pod := range st.Pods {
		if !qosmanager.LabelledBE(pod) {
			continue
		}
		mem, sampled := st.Latest(qosmanager.PodKey(pod.UID, corev1.ResourceMemory))
		if !sampled && pod.DeletionTimestamp == nil {
			// Without a fresh sample the pod's share of the usage is unknown: choosing it could evict a pod that
			// releases nothing (right after a start the node is sampled before its pods).
			continue
		}
		if pod.DeletionTimestamp != nil {
			released += int64(mem)
			continue
		}
		ep, err := qosmanager.EvictionPriority(pod)
		if err != nil {
			s.reporter.Report(ctx, pod, extension.AnnotationPodEvictionPriority, err)
		}
		candidates = append(candidates, Candidate{Pod: pod, EvictionPriority: ep, Priority: ptr.Deref(pod.Spec.Priority, 0), Memory: int64(mem)})
	}
	SortCandidates(candidates)

	errs := []error{cfgErr}
	evicted := 0
	for _, c := range candidates {
		if released >= need {
			break
		}
		msg := fmt.Sprintf("node memory usage %s >= threshold %d%%, releasing %s to reach %d%%; pod memory %s",
			qosmanager.FormatPercent(usagePercent), threshold, qosmanager.FormatBytes(need-released), lower,
			qosmanager.FormatBytes(c.Memory))
		ok, err := s.evictor.Evict(ctx, c.Pod, Reason, msg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			evicted++
			released += c.Memory
		}
	}
	if evicted > 0 {
		s.lastEvict = st.Now
	}
	logger.V(2).Info("Evicted BE pods for node memory", "usagePercent", usagePercent, "thresholdPercent", threshold,
		"lowerPercent", lower, "needBytes", need, "releasedBytes", released, "evicted", evicted, "candidates", len(candidates))
	return errors.Join(errs...)
}
