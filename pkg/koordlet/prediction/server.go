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

package prediction

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// Source answers usage statistics over a window (start, end]. *metriccache.Cache satisfies it, and so does a
// simulated node's source.
type Source interface {
	Aggregate(key metriccache.SeriesKey, start, end time.Time) (metriccache.Aggregate, bool)
}

var _ Source = (*metriccache.Cache)(nil)

// Inputs are the node and its pods, as the states informer holds them.
type Inputs interface {
	Node() *corev1.Node
	Pods() []*corev1.Pod
}

// Model IDs of the node-wide models, as Koordinator names them (and its checkpoint files).
const (
	// NodeUID is the model of the node's whole usage.
	NodeUID = "__node__"
	// SystemItem is the node item of the usage outside pods: the node's usage minus every pod's.
	SystemItem = "sys"
)

// NodeItemUID returns the model ID of a node item: a priority class's pods taken together, or SystemItem.
func NodeItemUID(item string) string { return "__node-" + item + "__" }

// priorityClasses are the classes whose pods are summed into a node item each round, Koordinator's known
// classes; PriorityNone's item is "__node-__".
var priorityClasses = [...]extension.PriorityClass{
	extension.PriorityProd, extension.PriorityMid, extension.PriorityBatch, extension.PriorityFree, extension.PriorityNone,
}

// maxCatchUp bounds the training rounds one TrainUntil runs, should the clock jump far ahead.
const maxCatchUp = 60

// housekeeping is how often Run collects expired models and checkpoints, as Koordinator does.
const housekeeping = time.Minute

// model is the CPU and memory histograms of one pod or node item.
type model struct {
	cpu, memory *Histogram
	// lastUpdated is when the model last took a sample.
	lastUpdated time.Time
	// lastCheckpointed is when the model was last written (or read back); zero if never.
	lastCheckpointed time.Time
	// dirty tells that the model took a sample since it was last written.
	dirty bool
}

// Option configures a Server.
type Option func(*Server)

// WithClock makes the server read time and wait on c instead of the real clock; the simulated nodes run it on
// simulated time.
func WithClock(c clock.Clock) Option { return func(s *Server) { s.clock = c } }

// WithStore checkpoints the models to st and restores them from it; without it they live in memory only.
func WithStore(st *Store) Option { return func(s *Server) { s.store = st } }

// WithMetrics makes the server record into m.
func WithMetrics(m *Metrics) Option { return func(s *Server) { s.metrics = m } }

// WithPodStart sets when a pod started, for its cold start; by default its creation timestamp. A simulated node
// gives the simulated time it saw the pod start.
func WithPodStart(f func(*corev1.Pod) time.Time) Option { return func(s *Server) { s.podStart = f } }

// Server trains the node's models from the usage Source and predicts from them (Koordinator's peak predict
// server and its prod reclaimable predictor). Its methods are safe for concurrent use.
type Server struct {
	cfg   Config
	src   Source
	in    Inputs
	clock clock.Clock
	// wall times the training rounds for the metric; it is the real clock even when clock is simulated.
	wall     clock.PassiveClock
	store    *Store
	metrics  *Metrics
	podStart func(*corev1.Pod) time.Time

	mu     sync.Mutex
	models map[string]*model
	// trainedUntil is the end of the last window trained; zero before the first round.
	trainedUntil time.Time
	// saveFailing tells that the last checkpoint write failed, so that a failing directory is logged once.
	saveFailing bool
}

// NewServer returns a server with no models that trains from src for the node and pods of in. cfg must be
// valid (Config.Validate).
func NewServer(cfg Config, src Source, in Inputs, opts ...Option) *Server {
	s := &Server{
		cfg:      cfg,
		src:      src,
		in:       in,
		clock:    clock.RealClock{},
		wall:     clock.RealClock{},
		podStart: func(p *corev1.Pod) time.Time { return p.CreationTimestamp.Time },
		models:   map[string]*model{},
	}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	return s
}

// Run restores the checkpoints, then trains every training interval and, every minute, drops expired models and
// writes the checkpoints due, until ctx ends; it then writes every model changed since its last checkpoint. The
// node's informer must have synced.
func (s *Server) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	s.Restore(ctx)
	tick := min(s.cfg.TrainingInterval, housekeeping)
	var lastHousekeeping time.Time
	for {
		now := s.clock.Now()
		s.TrainUntil(ctx, now)
		if now.Sub(lastHousekeeping) >= housekeeping {
			s.GC(ctx, now)
			s.Checkpoint(ctx, now, false)
			lastHousekeeping = now
		}
		t := s.clock.NewTimer(tick)
		select {
		case <-ctx.Done():
			t.Stop()
			s.Checkpoint(context.WithoutCancel(ctx), s.clock.Now(), true)
			logger.V(2).Info("Stopped the prediction")
			return
		case <-t.C():
		}
	}
}

// Restore reads the models of the checkpoint directory: those of the node and of the pods the node has now are
// kept; the others, and files that are not valid checkpoints, are removed, each corrupt one with a log line. An
// unusable directory turns checkpoints off with a log line, and the models start afresh in memory.
func (s *Server) Restore(ctx context.Context) {
	if s.store == nil {
		return
	}
	logger := klog.FromContext(ctx).WithValues("directory", s.store.Dir())
	if err := s.store.Prepare(); err != nil {
		logger.Error(err, "Prediction checkpoints are off: the models start afresh and live in memory only")
		s.mu.Lock()
		s.store = nil
		s.mu.Unlock()
		return
	}
	loaded, err := s.store.Load()
	if err != nil {
		logger.Error(err, "Could not read the prediction checkpoints: the models start afresh")
		return
	}
	known := sets.New(NodeUID, NodeItemUID(SystemItem))
	for _, pc := range priorityClasses {
		known.Insert(NodeItemUID(string(pc)))
	}
	for _, pod := range s.in.Pods() {
		known.Insert(string(pod.UID))
	}
	now := s.clock.Now()
	restored, discarded := 0, 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range loaded {
		err := l.Err
		var m *model
		if err == nil && known.Has(l.UID) {
			m = s.newModel()
			if err = m.cpu.Restore(l.Checkpoint.CPU); err == nil {
				err = m.memory.Restore(l.Checkpoint.Memory)
			}
		}
		switch {
		case err != nil:
			logger.Error(err, "Discarded a corrupt prediction checkpoint; its model starts afresh", "model", l.UID)
		case m == nil:
			logger.V(2).Info("Discarded the prediction checkpoint of a pod no longer on the node", "model", l.UID)
		default:
			m.lastUpdated = l.Checkpoint.LastUpdated.Time
			m.lastCheckpointed = now
			s.models[l.UID] = m
			restored++
			continue
		}
		discarded++
		if err := s.store.Remove(l.UID); err != nil {
			logger.Error(err, "Could not remove a prediction checkpoint", "model", l.UID)
		}
	}
	s.metrics.checkpoints.WithLabelValues(CheckpointRestored).Add(float64(restored))
	s.metrics.checkpoints.WithLabelValues(CheckpointDiscarded).Add(float64(discarded))
	s.metrics.models.Set(float64(len(s.models)))
	logger.Info("Restored the prediction models", "restored", restored, "discarded", discarded)
}

// newModel returns an empty model with the configured half-lives.
func (s *Server) newModel() *model {
	return &model{cpu: NewHistogram(CPUBuckets, s.cfg.CPUHalfLife), memory: NewHistogram(MemoryBuckets, s.cfg.MemoryHalfLife)}
}

// sample is one training sample: a model's CPU (cores) and memory (bytes).
type sample struct {
	uid         string
	cpu, memory float64
}

// TrainUntil runs a training round for every training interval that ended since the last round, up to now (at
// most 60): the interval ends are the multiples of the training interval, so every interval is trained once,
// whatever the pace of the calls. The first call trains the last interval only.
func (s *Server) TrainUntil(ctx context.Context, now time.Time) {
	step := s.cfg.TrainingInterval
	last := now.Truncate(step)
	s.mu.Lock()
	first := last
	if !s.trainedUntil.IsZero() {
		first = s.trainedUntil.Add(step)
	}
	s.mu.Unlock()
	if first.After(last) {
		return
	}
	if n := last.Sub(first) / step; n >= maxCatchUp {
		first = last.Add(-(maxCatchUp - 1) * step)
	}
	pods := s.in.Pods()
	for end := first; !end.After(last); end = end.Add(step) {
		s.train(ctx, pods, end)
	}
}

// train adds to the models the samples of the window (end − training interval, end], taken at end: for each
// pod with CPU and memory samples there, the P90 of each; for each priority class, the sum over its pods (0
// when it has none); for the node, its own P90; for the system, the node's minus every pod's, floored at 0. A
// window in which the node has no samples (the agent just started) trains nothing.
func (s *Server) train(ctx context.Context, pods []*corev1.Pod, end time.Time) {
	began := s.wall.Now()
	start := end.Add(-s.cfg.TrainingInterval)
	p90 := func(kind metriccache.Kind, id string, res corev1.ResourceName) (float64, bool) {
		a, ok := s.src.Aggregate(metriccache.SeriesKey{Kind: kind, ID: id, Resource: res}, start, end)
		return a.P90, ok
	}
	nodeCPU, okCPU := p90(metriccache.KindNode, "", corev1.ResourceCPU)
	nodeMemory, okMemory := p90(metriccache.KindNode, "", corev1.ResourceMemory)
	s.mu.Lock()
	s.trainedUntil = end
	s.mu.Unlock()
	if !okCPU || !okMemory {
		klog.FromContext(ctx).V(4).Info("Skipped a prediction training round: no node usage in its window", "windowEnd", end)
		return
	}
	samples := make([]sample, 0, len(pods)+len(priorityClasses)+2)
	var classes [len(priorityClasses)]sample
	var all sample
	for _, pod := range pods {
		uid := string(pod.UID)
		if validUID(uid) != nil {
			continue
		}
		cpu, ok := p90(metriccache.KindPod, uid, corev1.ResourceCPU)
		if !ok {
			continue
		}
		memory, ok := p90(metriccache.KindPod, uid, corev1.ResourceMemory)
		if !ok {
			continue
		}
		samples = append(samples, sample{uid: uid, cpu: cpu, memory: memory})
		i := slices.Index(priorityClasses[:], extension.GetPodPriorityClassWithDefault(pod))
		if i < 0 {
			i = len(priorityClasses) - 1
		}
		classes[i].cpu += cpu
		classes[i].memory += memory
		all.cpu += cpu
		all.memory += memory
	}
	samples = append(samples, sample{uid: NodeUID, cpu: nodeCPU, memory: nodeMemory})
	for i, pc := range priorityClasses {
		samples = append(samples, sample{uid: NodeItemUID(string(pc)), cpu: classes[i].cpu, memory: classes[i].memory})
	}
	samples = append(samples, sample{uid: NodeItemUID(SystemItem), cpu: max(nodeCPU-all.cpu, 0), memory: max(nodeMemory-all.memory, 0)})

	s.mu.Lock()
	for _, sm := range samples {
		m := s.models[sm.uid]
		if m == nil {
			m = s.newModel()
			s.models[sm.uid] = m
		}
		m.cpu.Add(sm.cpu, end)
		m.memory.Add(sm.memory, end)
		m.lastUpdated = end
		m.dirty = true
	}
	n := len(s.models)
	s.mu.Unlock()
	s.metrics.models.Set(float64(n))
	s.metrics.trainings.Inc()
	s.metrics.training.Observe(s.wall.Since(began).Seconds())
}

// GC drops the models of pods that are no longer on the node and took no sample for the model expiration, and
// their checkpoints. The models of the node and of the pods it has keep their history however long they go
// without a sample (as after a restart).
func (s *Server) GC(ctx context.Context, now time.Time) {
	listed := sets.New[string]()
	for _, pod := range s.in.Pods() {
		listed.Insert(string(pod.UID))
	}
	var gone []string
	s.mu.Lock()
	for uid, m := range s.models {
		if listed.Has(uid) || isNodeModel(uid) || now.Sub(m.lastUpdated) <= s.cfg.ModelExpiration {
			continue
		}
		delete(s.models, uid)
		gone = append(gone, uid)
	}
	n, store := len(s.models), s.store
	s.mu.Unlock()
	s.metrics.models.Set(float64(n))
	if len(gone) == 0 {
		return
	}
	logger := klog.FromContext(ctx)
	logger.V(3).Info("Dropped the prediction models of pods gone from the node", "models", len(gone))
	if store == nil {
		return
	}
	for _, uid := range gone {
		if err := store.Remove(uid); err != nil {
			logger.Error(err, "Could not remove a prediction checkpoint", "model", uid)
		}
	}
}

// isNodeModel reports whether uid is the node's model or a node item's.
func isNodeModel(uid string) bool {
	return uid == NodeUID || (len(uid) > 9 && uid[:7] == "__node-" && uid[len(uid)-2:] == "__")
}

// Checkpoint writes the models that changed since they were last written: with all, every one of them (at
// shutdown); otherwise those last written at least the checkpoint interval ago, the longest ago first, at most
// the configured number per call. A failed write is logged (once until a write succeeds again) and retried
// after the interval.
func (s *Server) Checkpoint(ctx context.Context, now time.Time, all bool) {
	s.mu.Lock()
	store := s.store
	if store == nil {
		s.mu.Unlock()
		return
	}
	type due struct {
		uid  string
		last time.Time
	}
	var candidates []due
	for uid, m := range s.models {
		if m.dirty && (all || now.Sub(m.lastCheckpointed) >= s.cfg.CheckpointInterval) {
			candidates = append(candidates, due{uid, m.lastCheckpointed})
		}
	}
	slices.SortFunc(candidates, func(a, b due) int { return cmp.Or(a.last.Compare(b.last), cmp.Compare(a.uid, b.uid)) })
	if !all && len(candidates) > s.cfg.CheckpointMaxPerStep {
		candidates = candidates[:s.cfg.CheckpointMaxPerStep]
	}
	checkpoints := make([]*ModelCheckpoint, 0, len(candidates))
	for _, c := range candidates {
		m := s.models[c.uid]
		checkpoints = append(checkpoints, &ModelCheckpoint{
			UID: c.uid, CPU: m.cpu.Checkpoint(), Memory: m.memory.Checkpoint(), LastUpdated: metav1.NewTime(m.lastUpdated),
		})
		m.lastCheckpointed, m.dirty = now, false
	}
	s.mu.Unlock()

	logger := klog.FromContext(ctx)
	var failed error
	saved := 0
	for _, c := range checkpoints {
		if err := store.Save(c); err != nil {
			failed = err
			s.metrics.checkpoints.WithLabelValues(CheckpointSaveFailed).Inc()
			s.mu.Lock()
			if m := s.models[c.UID]; m != nil {
				m.dirty = true
			}
			s.mu.Unlock()
			continue
		}
		saved++
		s.metrics.checkpoints.WithLabelValues(CheckpointSaved).Inc()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case failed != nil && !s.saveFailing:
		s.saveFailing = true
		logger.Error(failed, "Could not write prediction checkpoints; the models are kept in memory and written again later",
			"directory", store.Dir(), "failed", len(checkpoints)-saved)
	case failed == nil && saved > 0:
		if s.saveFailing {
			logger.Info("Wrote prediction checkpoints again", "directory", store.Dir())
		}
		s.saveFailing = false
		logger.V(4).Info("Wrote prediction checkpoints", "models", saved)
	}
}

// Models returns the number of models held.
func (s *Server) Models() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.models)
}
