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

package sim

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/devices"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/koordlet/nodetopology"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/memoryevict"
	"github.com/koord-dev/koord/pkg/koordlet/reporter"
)

var (
	_ reporter.Inputs   = (*nodeView)(nil)
	_ qosmanager.Inputs = (*nodeView)(nil)
)

// nodeView is one node's view of the shared informers: what a states informer would hold for its agent.
type nodeView struct {
	c    *Cluster
	name string
	// slo is the last NodeSLO seen, kept when it is deleted, as the states informer keeps it.
	slo atomic.Pointer[slov1alpha1.NodeSLO]
}

// Node returns the node, nil when the cache does not have it.
func (v *nodeView) Node() *corev1.Node {
	obj, ok, err := v.c.nodeInformer.GetIndexer().GetByKey(v.name)
	if err != nil || !ok {
		return nil
	}
	return obj.(*corev1.Node)
}

// Pods returns the pods bound to the node that have not terminated, by namespace and name.
func (v *nodeView) Pods() []*corev1.Pod {
	all, err := v.c.podInformer.GetTypedIndexer().ByTypedIndex(podNodeIndex, v.name)
	if err != nil {
		return nil
	}
	pods := slices.DeleteFunc(all, func(p *corev1.Pod) bool {
		return p.Spec.NodeName != v.name || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return pods
}

// NodeSLO returns the node's NodeSLO, or the last one seen when it is gone; nil before any.
func (v *nodeView) NodeSLO() *slov1alpha1.NodeSLO {
	obj, ok, err := v.c.nodeSLOInformer.GetIndexer().GetByKey(v.name)
	if err == nil && ok {
		slo := obj.(*slov1alpha1.NodeSLO)
		v.slo.Store(slo)
		return slo
	}
	return v.slo.Load()
}

// NodeMetric returns the node's NodeMetric, nil when there is none.
func (v *nodeView) NodeMetric() *slov1alpha1.NodeMetric {
	obj, ok, err := v.c.nodeMetricInformer.GetIndexer().GetByKey(v.name)
	if err != nil || !ok {
		return nil
	}
	return obj.(*slov1alpha1.NodeMetric)
}

// podState is what a node's agent remembers of one pod.
type podState struct {
	// resourceVersion is the pod's version the model was built from.
	resourceVersion string
	// annotation is the AnnotationUsage value last parsed, to count each malformed value once.
	annotation string
	model      PodModel
}

// simNode is the simulated agent of one node. Its round runs on one worker at a time; stats are read by
// Snapshot under mu, and the scheduling fields are guarded by Cluster.mu.
type simNode struct {
	c     *Cluster
	name  string
	since time.Time

	view        *nodeView
	src         *Source
	report      *reporter.Reporter
	predict     *prediction.Server
	topology    *nodetopology.Reporter // nil when the NodeTopologyReport gate is off
	devices     *devices.Reporter      // nil when the Accelerators and RDMADevices gates are off
	evict       *memoryevict.Strategy  // nil when the memory eviction gates are off
	annotations *qosmanager.AnnotationReporter
	threshold   qosmanager.LastGood[slov1alpha1.ResourceThresholdStrategy]

	pods       map[types.UID]*podState
	ticked     bool
	counted    int64 // Unix ns of the last moment counted
	nextReport time.Time
	evicted    []types.UID       // pods evicted in the current round
	logged     map[string]string // per topic, the problem last logged, so that each is logged once

	// Guarded by Cluster.mu.
	due     time.Time
	index   int
	removed bool

	mu    sync.Mutex
	stats NodeSnapshot
}

// newNode returns the agent of node name, started at now and pretending to have run for history before it; c.mu
// must be held.
func (c *Cluster) newNode(name string, now time.Time, history time.Duration) *simNode {
	n := &simNode{
		c:          c,
		name:       name,
		since:      now.Add(-history),
		view:       &nodeView{c: c, name: name},
		src:        NewSource(c.clock, c.opts.CollectInterval, c.opts.MaxPoints),
		pods:       map[types.UID]*podState{},
		nextReport: now.Add(c.opts.WarmUp),
		index:      -1,
	}
	// Moments are counted from when the node is first seen, not over the pretended history.
	n.counted = now.UnixNano() - 1
	// The prediction trains on simulated time from the model and judges a pod's cold start from when the agent
	// saw it start (simulated), not from its creation timestamp (wall time).
	n.predict = prediction.NewServer(*c.opts.Prediction, n.src, n.view, prediction.WithClock(c.clock),
		prediction.WithPodStart(n.podStart), prediction.WithMetrics(c.predictionMetrics))
	n.report = reporter.New(c.koord, name, n.src, n.view, reporter.WithClock(c.clock), reporter.WithWarmUp(0),
		reporter.WithStampClock(skewedClock{base: c.clock.base, skew: c.skew(name)}), reporter.WithPredictor(n.predict))
	if c.opts.Features.NodeTopologyReport {
		n.topology = nodetopology.NewReporter(c.koord, name, topologySource{view: n.view}, n.view)
	}
	if c.opts.Features.Accelerators || c.opts.Features.RDMADevices {
		n.devices = devices.NewReporter(c.koord, name, n.view, deviceSource{name: name, node: n.view.Node})
	}
	recorder := c.recorder(name)
	n.annotations = qosmanager.NewAnnotationReporter(recorder)
	f := c.opts.Features
	if gates := (memoryevict.Gates{BEMemoryEvict: f.BEMemoryEvict, MemoryAllocatableEvict: f.MemoryAllocatableEvict, MemoryEvict: f.MemoryEvict}); gates != (memoryevict.Gates{}) {
		c.opts.Metrics.evictor.Declare(gates.Reasons()...)
		ev := evictor.New(c.kube, recorder, evictor.WithClock(c.clock), evictor.WithMetrics(c.opts.Metrics.evictor))
		n.evict = memoryevict.New(&countingEvictor{n: n, ev: ev}, memoryevict.WithGates(gates), memoryevict.WithRecorder(recorder))
	}
	return n
}

// countingEvictor evicts through the node's evictor and notes the pods it evicted.
type countingEvictor struct {
	n  *simNode
	ev *evictor.Evictor
}

// Evict implements memoryevict.Evictor.
func (e *countingEvictor) Evict(ctx context.Context, pod *corev1.Pod, reason, message string) (bool, error) {
	ok, err := e.ev.Evict(ctx, pod, reason, message)
	if ok {
		e.n.evicted = append(e.n.evicted, pod.UID)
	}
	return ok, err
}

// round runs one round of the node's agent at the current simulated time: it brings the model up to date with
// the node, its pods and its NodeSLO, counts the moments since the last round, applies memory eviction, and
// reports when a report is due. It returns when the next round is due.
func (n *simNode) round(ctx context.Context) time.Time {
	c := n.c
	now := c.clock.Now()
	next := now.Add(c.opts.RoundInterval)
	logger := klog.FromContext(ctx).WithValues("node", n.name)
	// Per-node messages of the reporter, the evictor and the strategy are two levels more verbose than in
	// koordlet: there are many nodes.
	nodeCtx := klog.NewContext(ctx, logger.V(2))
	defer n.src.ReleaseFrames()

	node := n.view.Node()
	if node == nil {
		return next
	}
	slo := n.view.NodeSLO()
	cfg, err := n.threshold.Update((&qosmanager.State{NodeSLO: slo}).ResourceThreshold())
	n.logProblem(logger, "nodeSLO", err, "Kept the last valid resourceUsedThresholdWithBE of the NodeSLO")
	if cfg == nil {
		cfg = configuration.DefaultResourceThresholdStrategy()
	}
	pods := n.view.Pods()
	n.syncPods(ctx, pods, now)
	model := n.model(node, cfg)
	n.src.SetModel(model)
	var delta Counters
	delta.SuppressedMoments, delta.LSThresholdBreaches = n.count(model, now)
	n.predict.TrainUntil(nodeCtx, now)
	n.predict.GC(nodeCtx, now)

	if n.evict != nil && slo != nil {
		n.evicted = n.evicted[:0]
		err := n.evict.Run(nodeCtx, &qosmanager.State{
			Node: node, Pods: pods, NodeSLO: slo, Metrics: n.src, Now: now, MaxSampleAge: 3 * c.opts.CollectInterval,
		})
		n.logProblem(logger, "memoryevict", err, "Memory eviction failed")
		if len(n.evicted) > 0 {
			delta.Evictions = int64(len(n.evicted))
			for _, uid := range n.evicted {
				if st, ok := n.pods[uid]; ok && st.model.Until.IsZero() {
					st.model.Until = now
				}
			}
			model = n.model(node, cfg)
			n.src.SetModel(model)
		}
	}

	var lastReport time.Time
	if !now.Before(n.nextReport) {
		switch nm := n.view.NodeMetric(); nm {
		case nil:
			// koord-manager creates it; the creation pokes the node, and the next round retries anyway.
			c.opts.Metrics.reports.WithLabelValues(ResultNoNodeMetric).Inc()
			n.logProblem(logger, "report", errNoNodeMetric, "Waited for koord-manager to create the NodeMetric")
		default:
			began := c.clock.base.Now()
			err := n.report.Report(nodeCtx)
			c.opts.Metrics.reportDuration.Observe(c.clock.base.Since(began).Seconds())
			if err != nil {
				delta.ReportErrors++
				c.opts.Metrics.reports.WithLabelValues(ResultError).Inc()
				n.logProblem(logger, "report", err, "Could not report the node metric")
			} else {
				delta.Reports++
				lastReport = now
				c.opts.Metrics.reports.WithLabelValues(ResultSuccess).Inc()
				n.logProblem(logger, "report", nil, "")
			}
			if n.topology != nil {
				// The NodeResourceTopology follows at the NodeMetric's pace (written only when it changed).
				n.logProblem(logger, "topology", n.topology.ReportOnce(nodeCtx), "Could not report the NodeResourceTopology")
			}
			if n.devices != nil {
				// So does the Device (written only when it changed; none without the annotation).
				n.logProblem(logger, "devices", n.devices.ReportOnce(nodeCtx), "Could not report the Device")
			}
			// The interval is wall time, as koord-scheduler reads it against the wall-clock updateTime (a
			// pod placed less than an interval before a report may be missing from it): at speed S the next
			// report is due S intervals of simulated time later.
			n.nextReport = now.Add(c.clock.Simulated(reportInterval(nm.Spec)))
		}
	}
	if n.nextReport.After(now) && n.nextReport.Before(next) {
		next = n.nextReport
	}

	c.opts.Metrics.suppressed.Add(float64(delta.SuppressedMoments))
	c.opts.Metrics.breaches.Add(float64(delta.LSThresholdBreaches))
	last, lastPods := model.AtWithPods(time.Unix(0, floorDiv(now.UnixNano(), int64(c.opts.CollectInterval))*int64(c.opts.CollectInterval)))
	lastPods = nameLastPods(lastPods, pods)
	var policy slov1alpha1.CPUSuppressPolicy
	if model.Suppression != nil {
		policy = model.Suppression.Policy
	}
	n.mu.Lock()
	n.stats.Counters.add(delta)
	n.stats.CPUCapacity, n.stats.MemoryCapacity = model.CPUCapacity, model.MemoryCapacity
	n.stats.Last, n.stats.LastPods, n.stats.SuppressionPolicy = last, lastPods, policy
	if !lastReport.IsZero() {
		n.stats.LastReport = lastReport
	}
	n.mu.Unlock()
	n.ticked = true
	return next
}

// nameLastPods fills the namespace and name of each pod usage from pods, drops the usage of pods no longer
// among them (stopped within the round), and returns the rest sorted by namespace and name.
func nameLastPods(usage []PodUsage, pods []*corev1.Pod) []PodUsage {
	byUID := make(map[types.UID]*corev1.Pod, len(pods))
	for _, p := range pods {
		byUID[p.UID] = p
	}
	named := usage[:0]
	for _, u := range usage {
		if p, ok := byUID[u.UID]; ok {
			u.Namespace, u.Name = p.Namespace, p.Name
			named = append(named, u)
		}
	}
	slices.SortFunc(named, func(a, b PodUsage) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return named
}

// podStart returns when the agent saw pod start running, in simulated time: the prediction's cold start counts
// from then. A pod the agent has not seen run yet started now. It is called within the node's round.
func (n *simNode) podStart(pod *corev1.Pod) time.Time {
	if st, ok := n.pods[pod.UID]; ok {
		return st.model.Since
	}
	return n.c.clock.Now()
}

// errNoNodeMetric is logged while a node has no NodeMetric.
var errNoNodeMetric = errors.New("the node has no NodeMetric yet")

// logProblem logs err under topic unless the same problem was the last logged for it; a nil err clears the
// topic.
func (n *simNode) logProblem(logger klog.Logger, topic string, err error, msg string) {
	if err == nil {
		delete(n.logged, topic)
		return
	}
	if n.logged == nil {
		n.logged = map[string]string{}
	}
	if n.logged[topic] == err.Error() {
		return
	}
	n.logged[topic] = err.Error()
	if errors.Is(err, errNoNodeMetric) {
		logger.V(3).Info(msg)
		return
	}
	logger.Error(err, msg)
}

// syncPods brings the pod states up to date with the pods bound to the node: a pod that runs gets a state
// (since now, or since the node's start in the first round), a changed pod is remodelled, and a pod that no
// longer runs (terminating, terminated or gone) is stopped now and forgotten after the retention.
func (n *simNode) syncPods(ctx context.Context, pods []*corev1.Pod, now time.Time) {
	running := make(map[types.UID]struct{}, len(pods))
	for _, pod := range pods {
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
			continue
		}
		running[pod.UID] = struct{}{}
		st, ok := n.pods[pod.UID]
		if ok && st.resourceVersion == pod.ResourceVersion {
			continue
		}
		since := now
		if !n.ticked {
			since = n.since
		}
		if ok {
			since = st.model.Since
		} else {
			st = &podState{}
			n.pods[pod.UID] = st
		}
		model, err := NewPodModel(pod)
		annotation := pod.Annotations[AnnotationUsage]
		if err != nil {
			n.annotations.Report(ctx, pod, AnnotationUsage, err)
			if !ok || st.annotation != annotation {
				n.c.opts.Metrics.invalid.Inc()
			}
		}
		model.Since, model.Until = since, st.model.Until
		st.model, st.resourceVersion, st.annotation = model, pod.ResourceVersion, annotation
	}
	for uid, st := range n.pods {
		if _, ok := running[uid]; ok {
			continue
		}
		if st.model.Until.IsZero() {
			st.model.Until = now
		}
		if now.Sub(st.model.Until) > n.c.opts.Retention {
			delete(n.pods, uid)
		}
	}
	n.annotations.Retain(pods)
}

// model returns the node's model from its pod states, the node's capacity and the threshold strategy.
func (n *simNode) model(node *corev1.Node, cfg *slov1alpha1.ResourceThresholdStrategy) *NodeModel {
	cpu := qosmanager.NodeCPUCapacity(node)
	m := &NodeModel{
		CPUCapacity:        cpu,
		MemoryCapacity:     float64(qosmanager.NodeMemoryCapacity(node)),
		SystemCPU:          cpu * n.c.opts.System.CPUPercent / 100,
		SystemMemory:       float64(n.c.opts.System.Memory),
		Since:              n.since,
		Pods:               make([]PodModel, 0, len(n.pods)),
		LSThresholdPercent: ptr.Deref(cfg.CPUSuppressThresholdPercent, 65),
	}
	for _, st := range n.pods {
		m.Pods = append(m.Pods, st.model)
	}
	// A fixed order keeps the sums, and so the reports, the same from round to round.
	slices.SortFunc(m.Pods, func(a, b PodModel) int { return cmp.Compare(a.UID, b.UID) })
	if n.c.opts.Features.BECPUSuppress && ptr.Deref(cfg.Enable, false) {
		// A malformed reservation annotation leaves kubelet's reservation, as in the suppression strategy.
		reserved, _ := qosmanager.NodeReservedCPU(node)
		m.Suppression = &Suppression{
			Policy:           cfg.CPUSuppressPolicy,
			ThresholdPercent: ptr.Deref(cfg.CPUSuppressThresholdPercent, 65),
			MinPercent:       cfg.CPUSuppressMinPercent,
			NodeReserved:     reserved,
		}
	}
	return m
}

// count returns how many moments (multiples of the collection interval) since the last counted one, up to
// now, had BE pods suppressed and the LS threshold breached.
func (n *simNode) count(m *NodeModel, now time.Time) (suppressed, breaches int64) {
	step := int64(n.c.opts.CollectInterval)
	last := floorDiv(now.UnixNano(), step) * step
	first := (floorDiv(n.counted, step) + 1) * step
	first = max(first, last-(maxCountedMoments-1)*step)
	cpu := make([]float64, len(m.Pods))
	mem := make([]float64, len(m.Pods))
	for t := first; t <= last; t += step {
		mo := m.eval(t, cpu, mem)
		if mo.Suppressed {
			suppressed++
		}
		if mo.LSThresholdBreached {
			breaches++
		}
	}
	if last > n.counted {
		n.counted = last
	}
	return suppressed, breaches
}

// maxReportSeconds is the longest report interval a time.Duration holds, in seconds.
const maxReportSeconds = int64(math.MaxInt64 / time.Second)

// reportInterval is the NodeMetric's reportIntervalSeconds, in wall time, or Koordinator's default of 60 s when
// it sets none (or less than 1). An interval too long for a time.Duration is capped (about 292 years).
func reportInterval(spec slov1alpha1.NodeMetricSpec) time.Duration {
	if p := spec.CollectPolicy; p != nil && p.ReportIntervalSeconds != nil && *p.ReportIntervalSeconds >= 1 {
		return time.Duration(min(*p.ReportIntervalSeconds, maxReportSeconds)) * time.Second
	}
	def := configuration.DefaultColocationStrategy().MetricReportIntervalSeconds
	return time.Duration(*def) * time.Second
}
