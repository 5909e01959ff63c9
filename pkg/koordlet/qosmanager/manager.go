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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/cpuset"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// Defaults of the Manager.
const (
	// DefaultInterval is how often the strategies run.
	DefaultInterval = time.Second
	// DefaultMaxSampleAge is how old the newest sample of a series may be for a strategy to act on it: a few
	// collection intervals at the default 1 s.
	DefaultMaxSampleAge = 5 * time.Second
	// errorLogInterval is how long the same error of the same strategy is not logged again.
	errorLogInterval = time.Minute
)

// Strategy is one QoS mechanism. Run decides from the snapshot in s and applies the decision; it is called
// once per round, never concurrently with itself, and must not modify s or the objects it points to.
type Strategy interface {
	// Name identifies the strategy in logs and metrics, e.g. "cpusuppress".
	Name() string
	// Run runs one round.
	Run(ctx context.Context, s *State) error
}

// Inputs is what the Manager snapshots each round. The statesinformer satisfies it. The objects returned are
// shared and read-only.
type Inputs interface {
	// Node returns the agent's node, or nil until it is known.
	Node() *corev1.Node
	// Pods returns the pods bound to the node that have not terminated.
	Pods() []*corev1.Pod
	// NodeSLO returns the node's NodeSLO, or nil until it is known; the last one seen afterwards.
	NodeSLO() *slov1alpha1.NodeSLO
}

// MetricReader is what strategies read of the metric cache. *metriccache.Cache satisfies it.
type MetricReader interface {
	// Aggregate returns the statistics of the samples of key with start < t <= end, false when there are none.
	Aggregate(key metriccache.SeriesKey, start, end time.Time) (metriccache.Aggregate, bool)
	// Latest returns the newest sample of key, false when there is none.
	Latest(key metriccache.SeriesKey) (t time.Time, v float64, ok bool)
}

// State is the snapshot one round of strategies decides from. Strategies must not modify it.
type State struct {
	// Node is the agent's node.
	Node *corev1.Node
	// Pods are the pods bound to the node that have not terminated.
	Pods []*corev1.Pod
	// NodeSLO is the node's NodeSLO.
	NodeSLO *slov1alpha1.NodeSLO
	// Metrics reads the metric cache.
	Metrics MetricReader
	// Now is the time of the round.
	Now time.Time
	// MaxSampleAge is how old the newest sample of a series may be to count as current (see Latest).
	MaxSampleAge time.Duration
	// KubeletCPUs are the CPUs kubelet's static CPU manager pinned pods to, by pod UID (nil when it pins
	// none): Koord never changes those pods' cpusets, and keeps every other pod off those CPUs.
	KubeletCPUs map[types.UID]cpuset.CPUSet
}

// KubeletExclusive returns the union of KubeletCPUs.
func (s *State) KubeletExclusive() cpuset.CPUSet {
	out := cpuset.New()
	for _, c := range s.KubeletCPUs {
		out = out.Union(c)
	}
	return out
}

// Manager runs the strategies every interval. Create it with New.
type Manager struct {
	strategies   []Strategy
	inputs       Inputs
	reader       MetricReader
	clock        clock.WithTicker
	metrics      *Metrics
	maxSampleAge time.Duration
	kubeletCPUs  func() (map[types.UID]cpuset.CPUSet, error)

	// waitLogged is set once the wait for the node and NodeSLO has been logged.
	waitLogged bool
	// waitSampleLogged is set once the wait for the first usage sample has been logged.
	waitSampleLogged bool
	// logged holds when each distinct error of each strategy was last logged.
	logged map[loggedError]time.Time
}

// loggedError is one distinct error of one strategy.
type loggedError struct {
	strategy, message string
}

type config struct {
	clock        clock.WithTicker
	metrics      *Metrics
	maxSampleAge time.Duration
	kubeletCPUs  func() (map[types.UID]cpuset.CPUSet, error)
}

// WithKubeletCPUs sets where State.KubeletCPUs come from (kubelet's CPU manager checkpoint); an error leaves
// them empty for the round and is logged like a strategy's.
func WithKubeletCPUs(f func() (map[types.UID]cpuset.CPUSet, error)) Option {
	return func(o *config) { o.kubeletCPUs = f }
}

// Option configures a Manager.
type Option func(*config)

// WithClock sets the clock of the rounds and of State.Now.
func WithClock(c clock.WithTicker) Option { return func(o *config) { o.clock = c } }

// WithMetrics sets the collectors the Manager records into.
func WithMetrics(m *Metrics) Option { return func(o *config) { o.metrics = m } }

// WithMaxSampleAge sets State.MaxSampleAge; use a few collection intervals. A value below or equal to 0 keeps
// DefaultMaxSampleAge.
func WithMaxSampleAge(d time.Duration) Option {
	return func(o *config) {
		if d > 0 {
			o.maxSampleAge = d
		}
	}
}

// New returns a Manager that runs strategies, in the order given, on snapshots of inputs and metrics.
func New(strategies []Strategy, inputs Inputs, metrics MetricReader, opts ...Option) *Manager {
	o := config{clock: clock.RealClock{}, maxSampleAge: DefaultMaxSampleAge}
	for _, opt := range opts {
		opt(&o)
	}
	if o.metrics == nil {
		o.metrics = NewMetrics()
	}
	// Each strategy's errors are exported from the start, at 0, so that dashboards see 0 rather than no data.
	for _, s := range strategies {
		o.metrics.errors.WithLabelValues(s.Name())
	}
	return &Manager{
		strategies:   strategies,
		inputs:       inputs,
		reader:       metrics,
		clock:        o.clock,
		metrics:      o.metrics,
		maxSampleAge: o.maxSampleAge,
		kubeletCPUs:  o.kubeletCPUs,
		logged:       map[loggedError]time.Time{},
	}
}

// Run runs a round at once and then every interval (DefaultInterval when interval is not positive) until ctx
// is done.
func (m *Manager) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	logger := klog.FromContext(ctx)
	names := make([]string, len(m.strategies))
	for i, s := range m.strategies {
		names[i] = s.Name()
	}
	logger.Info("Started QoS strategies", "strategies", names, "interval", interval)
	defer logger.Info("Stopped QoS strategies")

	ticker := m.clock.NewTicker(interval)
	defer ticker.Stop()
	for {
		m.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// RunOnce runs one round: a snapshot, then every strategy in order. It does nothing until the node and its
// NodeSLO are known and the metric cache holds a node CPU usage sample. It must not be called concurrently.
func (m *Manager) RunOnce(ctx context.Context) {
	logger := klog.FromContext(ctx)
	node, slo := m.inputs.Node(), m.inputs.NodeSLO()
	if node == nil || slo == nil {
		if !m.waitLogged {
			logger.V(2).Info("Waited for the node and its NodeSLO before running QoS strategies",
				"nodeKnown", node != nil, "nodeSLOKnown", slo != nil)
			m.waitLogged = true
		}
		return
	}
	if _, _, ok := m.reader.Latest(NodeKey(corev1.ResourceCPU)); !ok {
		// The collector's first round only primes the CPU counters; strategies need usage to decide anything.
		if !m.waitSampleLogged {
			logger.V(2).Info("Waited for the first node CPU usage sample before running QoS strategies")
			m.waitSampleLogged = true
		}
		return
	}
	state := &State{
		Node:         node,
		Pods:         m.inputs.Pods(),
		NodeSLO:      slo,
		Metrics:      m.reader,
		Now:          m.clock.Now(),
		MaxSampleAge: m.maxSampleAge,
	}
	if m.kubeletCPUs != nil {
		cpus, err := m.kubeletCPUs()
		if err != nil {
			m.logError(logger, "kubelet-cpu-state", err, state.Now)
		}
		state.KubeletCPUs = cpus
	}
	for _, s := range m.strategies {
		name := s.Name()
		start := m.clock.Now()
		err := runSafely(klog.NewContext(ctx, logger.WithValues("strategy", name)), s, state)
		m.metrics.duration.WithLabelValues(name).Observe(m.clock.Since(start).Seconds())
		if err != nil {
			m.metrics.errors.WithLabelValues(name).Inc()
			m.logError(logger, name, err, state.Now)
		}
	}
	m.pruneLogged(state.Now)
}

// runSafely runs one strategy, turning a panic into an error so that the other strategies still run.
func runSafely(ctx context.Context, s Strategy, state *State) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("strategy panicked: %v", r)
		}
	}()
	return s.Run(ctx, state)
}

// logError logs err unless the same message of the same strategy was logged within errorLogInterval.
func (m *Manager) logError(logger klog.Logger, strategy string, err error, now time.Time) {
	key := loggedError{strategy: strategy, message: err.Error()}
	if last, ok := m.logged[key]; ok && now.Sub(last) < errorLogInterval {
		return
	}
	m.logged[key] = now
	logger.Error(err, "QoS strategy failed; the same error is logged at most once a minute", "strategy", strategy)
}

// pruneLogged forgets errors logged more than errorLogInterval ago, so that the map stays bounded by the
// distinct errors of the last minute.
func (m *Manager) pruneLogged(now time.Time) {
	for k, t := range m.logged {
		if now.Sub(t) >= errorLogInterval {
			delete(m.logged, k)
		}
	}
}
