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
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const (
	mi = 1 << 20
	gi = 1 << 30
)

// query is one question to the fake source: a series and a window.
type query struct {
	key        metriccache.SeriesKey
	start, end int64
}

// fakeSource answers only the windows it was given, so a query of the wrong window finds nothing.
type fakeSource map[query]metriccache.Aggregate

func (f fakeSource) Aggregate(key metriccache.SeriesKey, start, end time.Time) (metriccache.Aggregate, bool) {
	a, ok := f[query{key, start.UnixNano(), end.UnixNano()}]
	return a, ok
}

// stats are the five statistics of a window.
type stats struct{ avg, p50, p90, p95, p99 float64 }

// put makes the series answer s for the window of length window ending at now, with samples spanning span.
func (f fakeSource) put(kind metriccache.Kind, id string, res corev1.ResourceName, window, span time.Duration, s stats) {
	f[query{metriccache.SeriesKey{Kind: kind, ID: id, Resource: res}, now.Add(-window).UnixNano(), now.UnixNano()}] = metriccache.Aggregate{
		Avg: s.avg, P50: s.p50, P90: s.p90, P95: s.p95, P99: s.p99, Count: 10, First: now.Add(-span), Last: now,
	}
}

// Standard figures: node CPU in cores and memory in bytes per window, system and pod averages.
var (
	nodeCPU5m  = stats{1.5, 1.4, 2, 2.5, 3}
	nodeCPU10m = stats{1, 0.9, 1.8, 2.2, 2.9}
	nodeCPU30m = stats{0.8, 0.7, 1.6, 2.1, 2.75}
	nodeMem    = stats{2 * gi, 2 * gi, 3 * gi, 3 * gi, 4 * gi}
	nodeMemPC  = stats{5 * gi, 5 * gi, 6 * gi, 6 * gi, 7 * gi}
	sysCPU     = stats{0.25, 0.25, 0.5, 0.5, 0.5}
	sysMem     = stats{512 * mi, 512 * mi, 512 * mi, 512 * mi, 512 * mi}
	sysMemPC   = stats{768 * mi, 768 * mi, 768 * mi, 768 * mi, 768 * mi}
)

// standardSource holds 30 minutes of node samples, 5 minutes of system samples and the samples of pods uid-a
// and uid-b.
func standardSource() fakeSource {
	f := fakeSource{}
	for _, w := range []struct {
		d   time.Duration
		cpu stats
	}{{5 * time.Minute, nodeCPU5m}, {10 * time.Minute, nodeCPU10m}, {30 * time.Minute, nodeCPU30m}} {
		span := w.d - time.Second
		f.put(metriccache.KindNode, "", corev1.ResourceCPU, w.d, span, w.cpu)
		f.put(metriccache.KindNode, "", corev1.ResourceMemory, w.d, span, nodeMem)
		f.put(metriccache.KindNode, "", metriccache.ResourceMemoryWithPageCache, w.d, span, nodeMemPC)
	}
	f.put(metriccache.KindSystem, "", corev1.ResourceCPU, 5*time.Minute, 5*time.Minute-time.Second, sysCPU)
	f.put(metriccache.KindSystem, "", corev1.ResourceMemory, 5*time.Minute, 5*time.Minute-time.Second, sysMem)
	f.put(metriccache.KindSystem, "", metriccache.ResourceMemoryWithPageCache, 5*time.Minute, 5*time.Minute-time.Second, sysMemPC)
	for _, p := range []struct {
		uid      string
		cpu, mem float64
	}{{"uid-a", 0.1, 100 * mi}, {"uid-b", 0.2, 200 * mi}} {
		f.put(metriccache.KindPod, p.uid, corev1.ResourceCPU, 5*time.Minute, 4*time.Minute, stats{avg: p.cpu})
		f.put(metriccache.KindPod, p.uid, corev1.ResourceMemory, 5*time.Minute, 4*time.Minute, stats{avg: p.mem})
		f.put(metriccache.KindPod, p.uid, metriccache.ResourceMemoryWithPageCache, 5*time.Minute, 4*time.Minute, stats{avg: 2 * p.mem})
	}
	return f
}

// rm returns a resource map of milli-CPU and memory bytes; a negative value leaves the resource out.
func rm(milliCPU, memBytes int64) slov1alpha1.ResourceMap {
	m := slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{}}
	if milliCPU >= 0 {
		m.ResourceList[corev1.ResourceCPU] = *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)
	}
	if memBytes >= 0 {
		m.ResourceList[corev1.ResourceMemory] = *resource.NewQuantity(memBytes, resource.BinarySI)
	}
	return m
}

// agg returns the expected aggregated usage of window d from CPU statistics in milli-cores and memory statistics
// in bytes; a nil side is left out.
func agg(d time.Duration, cpu, mem *[5]int64) slov1alpha1.AggregatedUsage {
	u := slov1alpha1.AggregatedUsage{Duration: metav1.Duration{Duration: d}, Usage: map[slov1alpha1.AggregationType]slov1alpha1.ResourceMap{}}
	for i, t := range []slov1alpha1.AggregationType{"avg", "p50", "p90", "p95", "p99"} {
		c, m := int64(-1), int64(-1)
		if cpu != nil {
			c = cpu[i]
		}
		if mem != nil {
			m = mem[i]
		}
		u.Usage[t] = rm(c, m)
	}
	return u
}

var (
	wantCPU5m  = &[5]int64{1500, 1400, 2000, 2500, 3000}
	wantCPU10m = &[5]int64{1000, 900, 1800, 2200, 2900}
	wantCPU30m = &[5]int64{800, 700, 1600, 2100, 2750}
	wantMem    = &[5]int64{2 * gi, 2 * gi, 3 * gi, 3 * gi, 4 * gi}
	wantMemPC  = &[5]int64{5 * gi, 5 * gi, 6 * gi, 6 * gi, 7 * gi}
	wantSysCPU = &[5]int64{250, 250, 500, 500, 500}
	wantSysMem = &[5]int64{512 * mi, 512 * mi, 512 * mi, 512 * mi, 512 * mi}
)

func pod(ns, name, uid string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), Labels: labels}}
}

// lsPodB and bePodA carry explicit Koordinator classes.
var (
	lsPodB = pod("default", "b", "uid-b", map[string]string{extension.LabelPodQoS: "LS", extension.LabelPodPriorityClass: "koord-prod"})
	bePodA = pod("batch", "a", "uid-a", map[string]string{extension.LabelPodQoS: "BE", extension.LabelPodPriorityClass: "koord-batch"})
)

// defaultStatus is the status of the standard source with pods bePodA and lsPodB under the default policy.
func defaultStatus() slov1alpha1.NodeMetricStatus {
	return slov1alpha1.NodeMetricStatus{
		UpdateTime: &metav1.Time{Time: now},
		NodeMetric: &slov1alpha1.NodeMetricInfo{
			NodeUsage:   rm(1500, 2*gi),
			SystemUsage: rm(250, 512*mi),
			AggregatedNodeUsages: []slov1alpha1.AggregatedUsage{
				agg(5*time.Minute, wantCPU5m, wantMem),
				agg(10*time.Minute, wantCPU10m, wantMem),
				agg(30*time.Minute, wantCPU30m, wantMem),
			},
			AggregatedSystemUsages: []slov1alpha1.AggregatedUsage{agg(5*time.Minute, wantSysCPU, wantSysMem)},
		},
		PodsMetric: []slov1alpha1.PodMetricInfo{
			{Namespace: "batch", Name: "a", PodUsage: rm(100, 100*mi), Priority: "koord-batch", QoS: "BE"},
			{Namespace: "default", Name: "b", PodUsage: rm(200, 200*mi), Priority: "koord-prod", QoS: "LS"},
		},
		ProdReclaimableMetric: &slov1alpha1.ReclaimableMetric{},
	}
}

func collectPolicy(mutate func(*slov1alpha1.NodeMetricCollectPolicy)) slov1alpha1.NodeMetricSpec {
	p := &slov1alpha1.NodeMetricCollectPolicy{}
	mutate(p)
	return slov1alpha1.NodeMetricSpec{CollectPolicy: p}
}

func durations(ds ...time.Duration) *slov1alpha1.AggregatePolicy {
	p := &slov1alpha1.AggregatePolicy{}
	for _, d := range ds {
		p.Durations = append(p.Durations, metav1.Duration{Duration: d})
	}
	return p
}

func TestBuild(t *testing.T) {
	guaranteed := pod("default", "g", "uid-g", nil)
	guaranteed.Spec.Containers = []corev1.Container{{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}}}
	bestEffort := pod("default", "e", "uid-e", nil)
	midLS := pod("default", "m", "uid-m", map[string]string{extension.LabelPodQoS: "LS"})
	midLS.Spec.Priority = ptr.To[int32](7100)

	tests := map[string]struct {
		spec   slov1alpha1.NodeMetricSpec
		pods   []*corev1.Pod
		source func() fakeSource
		want   func() slov1alpha1.NodeMetricStatus
	}{
		"default-spec": {
			pods:   []*corev1.Pod{lsPodB, bePodA},
			source: standardSource,
			want:   defaultStatus,
		},
		"custom-aggregate-duration": {
			spec: collectPolicy(func(p *slov1alpha1.NodeMetricCollectPolicy) { p.AggregateDurationSeconds = ptr.To[int64](60) }),
			pods: []*corev1.Pod{bePodA},
			source: func() fakeSource {
				f := standardSource()
				f.put(metriccache.KindNode, "", corev1.ResourceCPU, time.Minute, time.Minute, stats{avg: 0.5})
				f.put(metriccache.KindNode, "", corev1.ResourceMemory, time.Minute, time.Minute, stats{avg: gi})
				f.put(metriccache.KindSystem, "", corev1.ResourceCPU, time.Minute, time.Minute, stats{avg: 0.125})
				f.put(metriccache.KindPod, "uid-a", corev1.ResourceCPU, time.Minute, time.Minute, stats{avg: 0.05})
				f.put(metriccache.KindPod, "uid-a", corev1.ResourceMemory, time.Minute, time.Minute, stats{avg: 50 * mi})
				return f
			},
			want: func() slov1alpha1.NodeMetricStatus {
				s := defaultStatus()
				s.NodeMetric.NodeUsage = rm(500, gi)
				s.NodeMetric.SystemUsage = rm(125, -1) // no system memory sample in the last minute
				s.PodsMetric = []slov1alpha1.PodMetricInfo{
					{Namespace: "batch", Name: "a", PodUsage: rm(50, 50*mi), Priority: "koord-batch", QoS: "BE"},
				}
				return s
			},
		},
		"memory-usageWithoutPageCache": {
			spec: collectPolicy(func(p *slov1alpha1.NodeMetricCollectPolicy) {
				p.NodeMemoryCollectPolicy = ptr.To(slov1alpha1.UsageWithoutPageCache)
			}),
			pods:   []*corev1.Pod{lsPodB, bePodA},
			source: standardSource,
			want:   defaultStatus,
		},
		"memory-usageWithPageCache": {
			spec: collectPolicy(func(p *slov1alpha1.NodeMetricCollectPolicy) {
				p.NodeMemoryCollectPolicy = ptr.To(slov1alpha1.UsageWithPageCache)
			}),
			pods:   []*corev1.Pod{lsPodB, bePodA},
			source: standardSource,
			want: func() slov1alpha1.NodeMetricStatus {
				s := defaultStatus()
				s.NodeMetric.NodeUsage = rm(1500, 5*gi)
				s.NodeMetric.SystemUsage = rm(250, 768*mi)
				s.NodeMetric.AggregatedNodeUsages = []slov1alpha1.AggregatedUsage{
					agg(5*time.Minute, wantCPU5m, wantMemPC),
					agg(10*time.Minute, wantCPU10m, wantMemPC),
					agg(30*time.Minute, wantCPU30m, wantMemPC),
				}
				s.NodeMetric.AggregatedSystemUsages = []slov1alpha1.AggregatedUsage{
					agg(5*time.Minute, wantSysCPU, &[5]int64{768 * mi, 768 * mi, 768 * mi, 768 * mi, 768 * mi}),
				}
				s.PodsMetric[0].PodUsage = rm(100, 200*mi)
				s.PodsMetric[1].PodUsage = rm(200, 400*mi)
				return s
			},
		},
		"memory-usageWithHotPageCache-falls-back": {
			spec: collectPolicy(func(p *slov1alpha1.NodeMetricCollectPolicy) {
				p.NodeMemoryCollectPolicy = ptr.To(slov1alpha1.UsageWithHotPageCache)
			}),
			pods:   []*corev1.Pod{lsPodB, bePodA},
			source: standardSource,
			want:   defaultStatus,
		},
		"cold-start-omits-short-windows": {
			spec: collectPolicy(func(p *slov1alpha1.NodeMetricCollectPolicy) {
				p.NodeAggregatePolicy = durations(2*time.Minute, 10*time.Minute, 30*time.Minute, time.Hour)
			}),
			source: func() fakeSource {
				f := fakeSource{}
				// 2m: exactly half the window is enough.
				f.put(metriccache.KindNode, "", corev1.ResourceCPU, 2*time.Minute, time.Minute, nodeCPU5m)
				f.put(metriccache.KindNode, "", corev1.ResourceMemory, 2*time.Minute, time.Minute, nodeMem)
				// 10m: just under half is not.
				f.put(metriccache.KindNode, "", corev1.ResourceCPU, 10*time.Minute, 5*time.Minute-time.Second, nodeCPU10m)
				f.put(metriccache.KindNode, "", corev1.ResourceMemory, 10*time.Minute, 5*time.Minute-time.Second, nodeMem)
				// 30m: CPU spans 20m, memory only 10m: left out, a window carries both resources or none.
				f.put(metriccache.KindNode, "", corev1.ResourceCPU, 30*time.Minute, 20*time.Minute, nodeCPU30m)
				f.put(metriccache.KindNode, "", corev1.ResourceMemory, 30*time.Minute, 10*time.Minute, nodeMem)
				// 1h: nothing at all.
				return f
			},
			want: func() slov1alpha1.NodeMetricStatus {
				return slov1alpha1.NodeMetricStatus{
					UpdateTime: &metav1.Time{Time: now},
					NodeMetric: &slov1alpha1.NodeMetricInfo{
						AggregatedNodeUsages: []slov1alpha1.AggregatedUsage{
							agg(2*time.Minute, wantCPU5m, wantMem),
						},
					},
					ProdReclaimableMetric: &slov1alpha1.ReclaimableMetric{},
				}
			},
		},
		"pods-without-samples-omitted": {
			pods: []*corev1.Pod{
				bePodA,
				pod("default", "cpu-only", "uid-c", nil),
				pod("default", "no-samples", "uid-none", nil),
				lsPodB,
			},
			source: func() fakeSource {
				f := standardSource()
				f.put(metriccache.KindPod, "uid-c", corev1.ResourceCPU, 5*time.Minute, time.Minute, stats{avg: 1})
				return f
			},
			want: defaultStatus,
		},
		"priority-and-qos": {
			pods: []*corev1.Pod{guaranteed, bestEffort, midLS, bePodA},
			source: func() fakeSource {
				f := standardSource()
				for _, uid := range []string{"uid-g", "uid-e", "uid-m"} {
					f.put(metriccache.KindPod, uid, corev1.ResourceCPU, 5*time.Minute, time.Minute, stats{avg: 1})
					f.put(metriccache.KindPod, uid, corev1.ResourceMemory, 5*time.Minute, time.Minute, stats{avg: gi})
				}
				return f
			},
			want: func() slov1alpha1.NodeMetricStatus {
				s := defaultStatus()
				s.PodsMetric = []slov1alpha1.PodMetricInfo{
					{Namespace: "batch", Name: "a", PodUsage: rm(100, 100*mi), Priority: "koord-batch", QoS: "BE"},
					{Namespace: "default", Name: "e", PodUsage: rm(1000, gi), Priority: "koord-batch", QoS: "BE"},
					{Namespace: "default", Name: "g", PodUsage: rm(1000, gi), Priority: "koord-prod", QoS: "LSR"},
					{Namespace: "default", Name: "m", PodUsage: rm(1000, gi), Priority: "koord-mid", QoS: "LS"},
				}
				return s
			},
		},
		"no-samples": {
			pods:   []*corev1.Pod{bePodA},
			source: func() fakeSource { return fakeSource{} },
			want: func() slov1alpha1.NodeMetricStatus {
				return slov1alpha1.NodeMetricStatus{
					UpdateTime:            &metav1.Time{Time: now},
					NodeMetric:            &slov1alpha1.NodeMetricInfo{},
					ProdReclaimableMetric: &slov1alpha1.ReclaimableMetric{},
				}
			},
		},
		"invalid-values-take-defaults": {
			spec: collectPolicy(func(p *slov1alpha1.NodeMetricCollectPolicy) {
				p.AggregateDurationSeconds = ptr.To[int64](0)
				p.NodeAggregatePolicy = durations(-time.Minute, 0, 10*time.Minute)
			}),
			pods:   []*corev1.Pod{lsPodB, bePodA},
			source: standardSource,
			want: func() slov1alpha1.NodeMetricStatus {
				s := defaultStatus()
				s.NodeMetric.AggregatedNodeUsages = []slov1alpha1.AggregatedUsage{agg(10*time.Minute, wantCPU10m, wantMem)}
				s.NodeMetric.AggregatedSystemUsages = nil
				return s
			},
		},
		"negative-usage-floored": {
			source: func() fakeSource {
				f := fakeSource{}
				f.put(metriccache.KindSystem, "", corev1.ResourceCPU, 5*time.Minute, time.Minute, stats{avg: -0.2})
				f.put(metriccache.KindSystem, "", corev1.ResourceMemory, 5*time.Minute, time.Minute, stats{avg: -mi})
				return f
			},
			want: func() slov1alpha1.NodeMetricStatus {
				return slov1alpha1.NodeMetricStatus{
					UpdateTime:            &metav1.Time{Time: now},
					NodeMetric:            &slov1alpha1.NodeMetricInfo{SystemUsage: rm(0, 0)},
					ProdReclaimableMetric: &slov1alpha1.ReclaimableMetric{},
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := New(nil, "n1", tc.source(), nil)
			got := r.Build(tc.spec, tc.pods, now)
			if diff := cmp.Diff(tc.want(), got); diff != "" {
				t.Errorf("Build (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestBuildQuantityFormat(t *testing.T) {
	r := New(nil, "n1", standardSource(), nil)
	s := r.Build(slov1alpha1.NodeMetricSpec{}, []*corev1.Pod{bePodA}, now)
	u := s.NodeMetric.NodeUsage
	got := []string{u.Cpu().String(), u.Memory().String(), s.PodsMetric[0].PodUsage.Memory().String()}
	if diff := cmp.Diff([]string{"1500m", "2Gi", "100Mi"}, got); diff != "" {
		t.Errorf("quantities (-want,+got):\n%s", diff)
	}
}

// fakePredictor returns its values, or its error, and records the pods it was asked about.
type fakePredictor struct {
	reclaimable, peak corev1.ResourceList
	err               error
	gotPods           []string
	gotNow            time.Time
}

func (f *fakePredictor) Predict(pods []*corev1.Pod, now time.Time) (corev1.ResourceList, corev1.ResourceList, error) {
	for _, p := range pods {
		f.gotPods = append(f.gotPods, p.Name)
	}
	f.gotNow = now
	return f.reclaimable, f.peak, f.err
}

func TestBuildWithPredictor(t *testing.T) {
	// Pod c has no samples: it is not reported, and the prediction does not cover it.
	noSamples := pod("default", "c", "uid-c", map[string]string{extension.LabelPodPriorityClass: "koord-prod"})
	tests := map[string]struct {
		predictor       *fakePredictor
		wantReclaimable *slov1alpha1.ReclaimableMetric
		wantPeak        *slov1alpha1.PeakMetric
	}{
		"a prediction": {
			predictor:       &fakePredictor{reclaimable: rm(3449, 9*gi).ResourceList, peak: rm(4551, 7*gi).ResourceList},
			wantReclaimable: &slov1alpha1.ReclaimableMetric{Resource: rm(3449, 9*gi)},
			wantPeak:        &slov1alpha1.PeakMetric{Resource: rm(4551, 7*gi)},
		},
		// As Koordinator reports a failed prediction: an empty prodReclaimableMetric, no prodPeakMetric.
		"no prediction yet": {
			predictor:       &fakePredictor{err: errors.New("no model of node item \"sys\"")},
			wantReclaimable: &slov1alpha1.ReclaimableMetric{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := New(nil, nodeName, standardSource(), nil, WithPredictor(tc.predictor))
			s := r.Build(slov1alpha1.NodeMetricSpec{}, []*corev1.Pod{lsPodB, bePodA, noSamples}, now)
			if diff := cmp.Diff(tc.wantReclaimable, s.ProdReclaimableMetric); diff != "" {
				t.Errorf("prodReclaimableMetric (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPeak, s.ProdPeakMetric); diff != "" {
				t.Errorf("prodPeakMetric (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"b", "a"}, tc.predictor.gotPods); diff != "" {
				t.Errorf("pods predicted for (-want,+got):\n%s", diff)
			}
			if !tc.predictor.gotNow.Equal(now) {
				t.Errorf("predicted at %v, want %v", tc.predictor.gotNow, now)
			}
		})
	}
}

// hostApps is a fixed reporter.HostApps.
type hostApps []slov1alpha1.HostApplicationSpec

func (h hostApps) HostApplications() []slov1alpha1.HostApplicationSpec { return h }

func TestBuildHostApplications(t *testing.T) {
	src := standardSource()
	for _, a := range []struct {
		name     string
		cpu, mem float64
	}{{"nginx", 0.3, 300 * mi}, {"agent", 0.05, 50 * mi}} {
		src.put(metriccache.KindHostApp, a.name, corev1.ResourceCPU, 5*time.Minute, 4*time.Minute, stats{avg: a.cpu})
		src.put(metriccache.KindHostApp, a.name, corev1.ResourceMemory, 5*time.Minute, 4*time.Minute, stats{avg: a.mem})
	}
	// "yarn" is in the NodeSLO but has no samples (not running): left out.
	apps := hostApps{
		{Name: "nginx", Priority: "koord-prod", QoS: "LS"},
		{Name: "yarn", Priority: "koord-batch", QoS: "BE"},
		{Name: "agent"},
	}
	r := New(nil, nodeName, src, nil, WithHostApps(apps))
	got := r.Build(slov1alpha1.NodeMetricSpec{}, []*corev1.Pod{lsPodB, bePodA}, now)
	want := []slov1alpha1.HostApplicationMetricInfo{
		{Name: "agent", Usage: rm(50, 50*mi)},
		{Name: "nginx", Usage: rm(300, 300*mi), Priority: "koord-prod", QoS: "LS"},
	}
	if diff := cmp.Diff(want, got.HostApplicationMetric); diff != "" {
		t.Errorf("hostApplicationMetric (-want,+got):\n%s", diff)
	}
	if r := New(nil, nodeName, src, nil); r.Build(slov1alpha1.NodeMetricSpec{}, nil, now).HostApplicationMetric != nil {
		t.Errorf("hostApplicationMetric without WithHostApps is not nil")
	}
}
