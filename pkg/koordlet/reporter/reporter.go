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

package reporter

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// Source answers usage statistics over a window (start, end]. *metriccache.Cache satisfies it.
type Source interface {
	Aggregate(key metriccache.SeriesKey, start, end time.Time) (metriccache.Aggregate, bool)
}

var _ Source = (*metriccache.Cache)(nil)

// Inputs is what the reporter reads from the apiserver: the node's NodeMetric (nil when there is none) and the
// pods bound to the node. The states informer satisfies it.
type Inputs interface {
	NodeMetric() *slov1alpha1.NodeMetric
	Pods() []*corev1.Pod
}

// Predictor predicts the node's prod reclaimable resources and prod peak (the NodeMetric's prodReclaimableMetric
// and prodPeakMetric) for the pods the report has usage for, at now; an error means no prediction.
// *prediction.Server satisfies it.
type Predictor interface {
	Predict(pods []*corev1.Pod, now time.Time) (reclaimable, peak corev1.ResourceList, err error)
}

// DefaultWarmUp is how long Run waits before its first report, so that the collector has rates to report.
const DefaultWarmUp = 5 * time.Second

// coldStartRatio is the share of a window the samples must span for its aggregates to be reported.
const coldStartRatio = 0.5

// Option configures a Reporter.
type Option func(*Reporter)

// WithClock makes the reporter read time and wait on c instead of the real clock.
func WithClock(c clock.Clock) Option {
	return func(r *Reporter) { r.clock = c }
}

// WithStampClock sets the clock whose time is written to status.updateTime; by default it is the reporter's
// clock. A simulated node whose usage runs on compressed time (pkg/sim) stamps its reports with the real clock,
// so that the readers judging staleness (koord-manager's degrade rule, the scheduler's expiry) compare like with
// like; the aggregation windows stay on the reporter's clock.
func WithStampClock(c clock.PassiveClock) Option {
	return func(r *Reporter) { r.stamp = c }
}

// WithPredictor fills prodReclaimableMetric and prodPeakMetric from p; without it, or while p has no
// prediction, prodReclaimableMetric is empty and prodPeakMetric left out.
func WithPredictor(p Predictor) Option {
	return func(r *Reporter) { r.predictor = p }
}

// HostApps lists the host applications of the node's NodeSLO (spec.hostApplications), nil until it is known.
// The states informer satisfies it.
type HostApps interface {
	HostApplications() []slov1alpha1.HostApplicationSpec
}

// WithHostApps fills hostApplicationMetric with the usage of the host applications apps lists, from their
// series in the source (metriccache.KindHostApp); without it the report has none.
func WithHostApps(apps HostApps) Option {
	return func(r *Reporter) { r.hostApps = apps }
}

// WithWarmUp sets how long Run waits before its first report (DefaultWarmUp by default; zero reports at once).
func WithWarmUp(d time.Duration) Option {
	return func(r *Reporter) { r.warmUp = d }
}

// Reporter writes the status of one node's NodeMetric.
type Reporter struct {
	client   versioned.Interface
	nodeName string
	src      Source
	in       Inputs
	clock    clock.Clock
	stamp    clock.PassiveClock
	warmUp   time.Duration
	// predictor is nil without WithPredictor.
	predictor Predictor
	// hostApps is nil without WithHostApps.
	hostApps HostApps

	mu    sync.Mutex
	noted sets.Set[string] // memory policies whose fallback has been logged
	// predictionErr is why the last Build had no prediction.
	predictionErr error
}

// New returns a Reporter of the node nodeName that reads usage from src and the NodeMetric and pods from in, and
// writes through client.
func New(client versioned.Interface, nodeName string, src Source, in Inputs, opts ...Option) *Reporter {
	r := &Reporter{
		client:   client,
		nodeName: nodeName,
		src:      src,
		in:       in,
		clock:    clock.RealClock{},
		warmUp:   DefaultWarmUp,
		noted:    sets.New[string](),
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Run reports after the warm-up and then every spec.metricCollectPolicy.reportIntervalSeconds of the NodeMetric
// (default 60; values below 1 take the default), re-reading the interval after each report, until ctx is done. A
// failed report is logged and retried at the next interval.
func (r *Reporter) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("node", r.nodeName)
	ctx = klog.NewContext(ctx, logger)
	wait := r.warmUp
	for {
		t := r.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if err := r.Report(ctx); err != nil {
			logger.Error(err, "Could not report the node metric")
		}
		var spec slov1alpha1.NodeMetricSpec
		if nm := r.in.NodeMetric(); nm != nil {
			spec = nm.Spec
		}
		wait = resolve(spec).reportInterval
	}
}

// Report writes one report: it builds the status from the NodeMetric known to Inputs and replaces the status on
// the apiserver, re-reading the object and retrying on a conflict. It fails, naming the node, when there is no
// NodeMetric: koord-manager creates it.
func (r *Reporter) Report(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	nm := r.in.NodeMetric()
	if nm == nil {
		return fmt.Errorf("nodemetric %q does not exist yet: koord-manager creates it", r.nodeName)
	}
	r.noteMemoryPolicy(logger, nm.Spec)
	status := r.Build(nm.Spec, r.in.Pods(), r.clock.Now())
	if r.predictor != nil && status.ProdPeakMetric == nil {
		logger.V(3).Info("Reported no prediction", "reason", r.lastPredictionError())
	}
	if r.stamp != nil {
		status.UpdateTime = &metav1.Time{Time: r.stamp.Now()}
	}

	obj := nm.DeepCopy()
	attempt := 0
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		attempt++
		if attempt > 1 {
			fresh, err := r.client.SloV1alpha1().NodeMetrics().Get(ctx, r.nodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			obj = fresh
		}
		obj.Status = status
		_, err := r.client.SloV1alpha1().NodeMetrics().UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("nodemetric %q is gone: %w", r.nodeName, err)
	}
	if err != nil {
		return fmt.Errorf("update the status of nodemetric %q: %w", r.nodeName, err)
	}
	logger.V(2).Info("Reported the node metric", "pods", len(status.PodsMetric),
		"aggregatedWindows", len(status.NodeMetric.AggregatedNodeUsages), "attempts", attempt,
		"prodReclaimable", status.ProdReclaimableMetric.Resource.ResourceList)
	return nil
}

// Build returns the NodeMetric status for the policy in spec, the given pods and the time now. It reads usage
// from the Source and nothing else.
func (r *Reporter) Build(spec slov1alpha1.NodeMetricSpec, pods []*corev1.Pod, now time.Time) slov1alpha1.NodeMetricStatus {
	p := resolve(spec)
	start := now.Add(-p.aggregate)
	info := &slov1alpha1.NodeMetricInfo{
		NodeUsage:   r.average(metriccache.KindNode, "", p.memory, start, now),
		SystemUsage: r.average(metriccache.KindSystem, "", p.memory, start, now),
	}
	for _, d := range p.durations {
		if u, ok := r.aggregated(metriccache.KindNode, p.memory, d, now); ok {
			info.AggregatedNodeUsages = append(info.AggregatedNodeUsages, u)
		}
		if u, ok := r.aggregated(metriccache.KindSystem, p.memory, d, now); ok {
			info.AggregatedSystemUsages = append(info.AggregatedSystemUsages, u)
		}
	}

	var podsMetric []slov1alpha1.PodMetricInfo
	reported := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		usage := r.average(metriccache.KindPod, string(pod.UID), p.memory, start, now)
		if len(usage.ResourceList) < 2 {
			// No CPU or no memory samples: a pod not started yet or gone for longer than the window.
			continue
		}
		reported = append(reported, pod)
		podsMetric = append(podsMetric, slov1alpha1.PodMetricInfo{
			Name:      pod.Name,
			Namespace: pod.Namespace,
			PodUsage:  usage,
			Priority:  string(extension.GetPodPriorityClassWithDefault(pod)),
			QoS:       string(extension.GetPodQoSClassWithDefault(pod)),
		})
	}
	slices.SortFunc(podsMetric, func(a, b slov1alpha1.PodMetricInfo) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})

	status := slov1alpha1.NodeMetricStatus{
		UpdateTime:            &metav1.Time{Time: now},
		NodeMetric:            info,
		PodsMetric:            podsMetric,
		HostApplicationMetric: r.hostApplications(p.memory, start, now),
		ProdReclaimableMetric: &slov1alpha1.ReclaimableMetric{},
	}
	// As in Koordinator, the prediction covers the pods reported.
	if r.predictor != nil {
		reclaimable, peak, err := r.predictor.Predict(reported, now)
		r.setPredictionError(err)
		if err == nil {
			status.ProdReclaimableMetric.Resource = slov1alpha1.ResourceMap{ResourceList: reclaimable}
			status.ProdPeakMetric = &slov1alpha1.PeakMetric{Resource: slov1alpha1.ResourceMap{ResourceList: peak}}
		}
	}
	return status
}

// hostApplications returns the average usage over (start, now] of every host application of the NodeSLO that
// has both CPU and memory samples in it, with its priority and QoS class, sorted by name.
func (r *Reporter) hostApplications(memory corev1.ResourceName, start, now time.Time) []slov1alpha1.HostApplicationMetricInfo {
	if r.hostApps == nil {
		return nil
	}
	var out []slov1alpha1.HostApplicationMetricInfo
	for _, app := range r.hostApps.HostApplications() {
		usage := r.average(metriccache.KindHostApp, app.Name, memory, start, now)
		if len(usage.ResourceList) < 2 {
			continue
		}
		out = append(out, slov1alpha1.HostApplicationMetricInfo{Name: app.Name, Usage: usage, Priority: app.Priority, QoS: app.QoS})
	}
	slices.SortFunc(out, func(a, b slov1alpha1.HostApplicationMetricInfo) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// setPredictionError keeps why the last Build had no prediction, for Report's log line.
func (r *Reporter) setPredictionError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.predictionErr = err
}

func (r *Reporter) lastPredictionError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.predictionErr
}

// average returns the mean CPU and memory of a series over (start, end], leaving out a resource without samples.
func (r *Reporter) average(kind metriccache.Kind, id string, memory corev1.ResourceName, start, end time.Time) slov1alpha1.ResourceMap {
	var m slov1alpha1.ResourceMap
	if a, ok := r.src.Aggregate(metriccache.SeriesKey{Kind: kind, ID: id, Resource: corev1.ResourceCPU}, start, end); ok {
		setCPU(&m, a.Avg)
	}
	if a, ok := r.src.Aggregate(metriccache.SeriesKey{Kind: kind, ID: id, Resource: memory}, start, end); ok {
		setMemory(&m, a.Avg)
	}
	return m
}

// aggregated returns the statistics of a node-wide series over the window d before now, leaving out a resource
// whose samples span less than half the window; ok is false when no resource is left.
func (r *Reporter) aggregated(kind metriccache.Kind, memory corev1.ResourceName, d time.Duration, now time.Time) (slov1alpha1.AggregatedUsage, bool) {
	stats := map[slov1alpha1.AggregationType]*slov1alpha1.ResourceMap{}
	for _, t := range []slov1alpha1.AggregationType{
		slov1alpha1.AggregationTypeAVG, slov1alpha1.AggregationTypeP50, slov1alpha1.AggregationTypeP90,
		slov1alpha1.AggregationTypeP95, slov1alpha1.AggregationTypeP99,
	} {
		stats[t] = &slov1alpha1.ResourceMap{}
	}
	// A window is reported with both resources or not at all: a reader takes a missing resource as zero usage,
	// and memory has samples one round before CPU (whose first round only primes the counters).
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, memory} {
		a, ok := r.src.Aggregate(metriccache.SeriesKey{Kind: kind, Resource: res}, now.Add(-d), now)
		if !ok || float64(a.Span()) < coldStartRatio*float64(d) {
			return slov1alpha1.AggregatedUsage{}, false
		}
		set := setMemory
		if res == corev1.ResourceCPU {
			set = setCPU
		}
		set(stats[slov1alpha1.AggregationTypeAVG], a.Avg)
		set(stats[slov1alpha1.AggregationTypeP50], a.P50)
		set(stats[slov1alpha1.AggregationTypeP90], a.P90)
		set(stats[slov1alpha1.AggregationTypeP95], a.P95)
		set(stats[slov1alpha1.AggregationTypeP99], a.P99)
	}
	u := slov1alpha1.AggregatedUsage{Duration: metav1.Duration{Duration: d}, Usage: make(map[slov1alpha1.AggregationType]slov1alpha1.ResourceMap, len(stats))}
	for t, m := range stats {
		u.Usage[t] = *m
	}
	return u, true
}

// setCPU records cores as milli-cores, floored at zero.
func setCPU(m *slov1alpha1.ResourceMap, cores float64) {
	if m.ResourceList == nil {
		m.ResourceList = corev1.ResourceList{}
	}
	m.ResourceList[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(math.Round(max(cores, 0)*1000)), resource.DecimalSI)
}

// setMemory records bytes, floored at zero.
func setMemory(m *slov1alpha1.ResourceMap, bytes float64) {
	if m.ResourceList == nil {
		m.ResourceList = corev1.ResourceList{}
	}
	m.ResourceList[corev1.ResourceMemory] = *resource.NewQuantity(int64(math.Round(max(bytes, 0))), resource.BinarySI)
}

// noteMemoryPolicy logs, once per value, a memory collection policy that falls back to usageWithoutPageCache.
func (r *Reporter) noteMemoryPolicy(logger klog.Logger, spec slov1alpha1.NodeMetricSpec) {
	if spec.CollectPolicy == nil || spec.CollectPolicy.NodeMemoryCollectPolicy == nil {
		return
	}
	policy := *spec.CollectPolicy.NodeMemoryCollectPolicy
	var why string
	switch policy {
	case slov1alpha1.UsageWithoutPageCache, slov1alpha1.UsageWithPageCache:
		return
	case slov1alpha1.UsageWithHotPageCache:
		why = "the agent does not collect cold pages"
	default:
		why = "the policy is unknown"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.noted.Has(string(policy)) {
		return
	}
	r.noted.Insert(string(policy))
	logger.Info("Counted memory without page cache instead of the NodeMetric's memory collection policy",
		"nodeMemoryCollectPolicy", policy, "reason", why)
}

// policy is a NodeMetric collection policy merged over the defaults.
type policy struct {
	aggregate      time.Duration
	reportInterval time.Duration
	durations      []time.Duration
	memory         corev1.ResourceName
}

// defaults is Koordinator's default collection policy: a 300 s window, reports every 60 s, 5m/10m/30m aggregates,
// memory without page cache.
var defaults = configuration.NodeMetricCollectPolicy(configuration.DefaultColocationStrategy())

// resolve merges spec over the defaults. Values the API would reject (non-positive seconds or durations) take the
// default, so a bad spec still gets reports.
func resolve(spec slov1alpha1.NodeMetricSpec) policy {
	c := spec.CollectPolicy
	if c == nil {
		c = &slov1alpha1.NodeMetricCollectPolicy{}
	}
	seconds := func(v, def *int64) time.Duration {
		if v == nil || *v < 1 {
			v = def
		}
		return time.Duration(*v) * time.Second
	}
	p := policy{
		aggregate:      seconds(c.AggregateDurationSeconds, defaults.AggregateDurationSeconds),
		reportInterval: seconds(c.ReportIntervalSeconds, defaults.ReportIntervalSeconds),
		memory:         corev1.ResourceMemory,
	}
	windows := defaults.NodeAggregatePolicy.Durations
	if c.NodeAggregatePolicy != nil && len(c.NodeAggregatePolicy.Durations) > 0 {
		windows = c.NodeAggregatePolicy.Durations
	}
	for _, d := range windows {
		if d.Duration > 0 {
			p.durations = append(p.durations, d.Duration)
		}
	}
	if c.NodeMemoryCollectPolicy != nil && *c.NodeMemoryCollectPolicy == slov1alpha1.UsageWithPageCache {
		p.memory = metriccache.ResourceMemoryWithPageCache
	}
	return p
}
