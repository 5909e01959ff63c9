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
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// agentStart is when the source tests' node agent started.
var agentStart = day.Add(time.Hour)

// sourceModel is an 8-CPU node with suppression by CFS quota at 65 %: a diurnal web pod with bursty memory, a BE
// pod that starts 20 minutes after the agent and is suppressed when the web pod is busy, and a pod that stopped
// 50 minutes after the agent started.
func sourceModel() *NodeModel {
	inf := math.Inf(1)
	pod := func(uid string, be bool, cpu, mem Profile) PodModel {
		return PodModel{
			UID: types.UID(uid), BE: be, CPU: cpu, Memory: mem, CPULimit: inf, MemoryLimit: inf, Since: agentStart,
			cpuSeed: Seed(types.UID(uid), corev1.ResourceCPU), memorySeed: Seed(types.UID(uid), corev1.ResourceMemory),
		}
	}
	web := pod("web", false,
		Profile{Type: ProfileDiurnal, Base: 2, Amplitude: 1.5, Period: time.Hour, Peak: 10 * time.Minute},
		Profile{Type: ProfileBursty, Base: gi, Burst: 3 * gi, Probability: 0.3, Duration: 30 * time.Second})
	batch := pod("batch", true, Constant(3), Constant(2*gi))
	batch.Since = agentStart.Add(20 * time.Minute)
	batch.CPULimit = 2.5
	gone := pod("gone", false, Constant(1), Constant(gi))
	gone.Until = agentStart.Add(50 * time.Minute)
	return &NodeModel{
		CPUCapacity: 8, MemoryCapacity: 32 * gi, SystemCPU: 0.4, SystemMemory: gi, Since: agentStart,
		Pods:               []PodModel{batch, gone, web},
		Suppression:        &Suppression{Policy: slov1alpha1.CPUCfsQuotaPolicy, ThresholdPercent: 65},
		LSThresholdPercent: 65,
	}
}

// cacheOf returns a metric cache holding the samples a collector sampling m every step from the agent's start
// to end would have taken.
func cacheOf(m *NodeModel, step time.Duration, end time.Time) *metriccache.Cache {
	c := metriccache.New(metriccache.Options{NodeSamples: 10000, PodSamples: 10000})
	for t := m.Since; !t.After(end); t = t.Add(step) {
		mo := m.At(t)
		c.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU}, t, mo.NodeCPU)
		c.Append(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceMemory}, t, mo.NodeMemory)
		c.Append(metriccache.SeriesKey{Kind: metriccache.KindSystem, Resource: corev1.ResourceCPU}, t, m.SystemCPU)
		c.Append(metriccache.SeriesKey{Kind: metriccache.KindSystem, Resource: corev1.ResourceMemory}, t, m.SystemMemory)
		for _, p := range m.Pods {
			if cpu, mem, ok := m.PodAt(p.UID, t); ok {
				c.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(p.UID), Resource: corev1.ResourceCPU}, t, cpu)
				c.Append(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(p.UID), Resource: corev1.ResourceMemory}, t, mem)
			}
		}
	}
	return c
}

func TestSourceAggregateMatchesMetricCache(t *testing.T) {
	m := sourceModel()
	end := agentStart.Add(time.Hour + 500*time.Millisecond)
	src := NewSource(clocktesting.NewFakeClock(end), time.Second, 300)
	src.SetModel(m)
	caches := map[time.Duration]*metriccache.Cache{}

	keys := map[string]metriccache.SeriesKey{
		"node-cpu":          {Kind: metriccache.KindNode, Resource: corev1.ResourceCPU},
		"node-memory":       {Kind: metriccache.KindNode, Resource: corev1.ResourceMemory},
		"system-cpu":        {Kind: metriccache.KindSystem, Resource: corev1.ResourceCPU},
		"system-memory":     {Kind: metriccache.KindSystem, Resource: corev1.ResourceMemory},
		"web-cpu":           {Kind: metriccache.KindPod, ID: "web", Resource: corev1.ResourceCPU},
		"web-memory":        {Kind: metriccache.KindPod, ID: "web", Resource: corev1.ResourceMemory},
		"batch-cpu":         {Kind: metriccache.KindPod, ID: "batch", Resource: corev1.ResourceCPU},
		"batch-memory":      {Kind: metriccache.KindPod, ID: "batch", Resource: corev1.ResourceMemory},
		"gone-cpu":          {Kind: metriccache.KindPod, ID: "gone", Resource: corev1.ResourceCPU},
		"gone-memory":       {Kind: metriccache.KindPod, ID: "gone", Resource: corev1.ResourceMemory},
		"node-memory-cache": {Kind: metriccache.KindNode, Resource: metriccache.ResourceMemoryWithPageCache},
	}
	windows := map[string]struct {
		window   time.Duration
		end      time.Time
		wantStep time.Duration // the step the source samples the window at
		wantNode int           // node samples in the window
	}{
		"aggregate-300s": {window: 300 * time.Second, end: end, wantStep: time.Second, wantNode: 300},
		"5m-at-grid":     {window: 5 * time.Minute, end: agentStart.Add(30 * time.Minute), wantStep: time.Second, wantNode: 300},
		"10m":            {window: 10 * time.Minute, end: end, wantStep: 2 * time.Second, wantNode: 300},
		"30m":            {window: 30 * time.Minute, end: end, wantStep: 6 * time.Second, wantNode: 300},
		"just-over-300":  {window: 301 * time.Second, end: end, wantStep: 2 * time.Second, wantNode: 151},
		"1h":             {window: time.Hour, end: end, wantStep: 12 * time.Second, wantNode: 300},
		"cold-start-2h":  {window: 2 * time.Hour, end: end, wantStep: 24 * time.Second, wantNode: 151},
		"while-gone-ran": {window: 10 * time.Minute, end: agentStart.Add(55 * time.Minute), wantStep: 2 * time.Second, wantNode: 300},
		"short":          {window: 3 * time.Second, end: end, wantStep: time.Second, wantNode: 3},
	}
	for name, w := range windows {
		c, ok := caches[w.wantStep]
		if !ok {
			c = cacheOf(m, w.wantStep, end)
			caches[w.wantStep] = c
		}
		for keyName, key := range keys {
			t.Run(name+"/"+keyName, func(t *testing.T) {
				cacheKey := key
				if key.Resource == metriccache.ResourceMemoryWithPageCache {
					cacheKey.Resource = corev1.ResourceMemory
				}
				want, wantOK := c.Aggregate(cacheKey, w.end.Add(-w.window), w.end)
				got, gotOK := src.Aggregate(key, w.end.Add(-w.window), w.end)
				if diff := cmp.Diff([]any{wantOK, want}, []any{gotOK, got}); diff != "" {
					t.Errorf("aggregate (-want metriccache,+got source):\n%s", diff)
				}
				if key.Kind == metriccache.KindNode && got.Count != w.wantNode {
					t.Errorf("source took %d node samples, want %d", got.Count, w.wantNode)
				}
			})
		}
	}
	src.ReleaseFrames()
}

func TestSourceSuppressionShowsInSeries(t *testing.T) {
	// At the web pod's peak (3.5 cores) the BE pod, which asks 2.5 (its limit), gets what BEAllowed leaves:
	// 8 × 65% − 3.5 − 0.4 = 1.3 cores.
	m := sourceModel()
	peak := day.Add(3*time.Hour + 10*time.Minute)
	src := NewSource(clocktesting.NewFakeClock(peak), time.Second, 300)
	src.SetModel(m)
	got, ok := src.Aggregate(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: "batch", Resource: corev1.ResourceCPU}, peak.Add(-time.Second), peak)
	if !ok || got.Count != 1 || math.Abs(got.Avg-1.3) > 1e-6 {
		t.Errorf("batch CPU at the web peak = %+v, %v; want one sample of 1.3", got, ok)
	}
}

func TestSourceLatest(t *testing.T) {
	m := sourceModel()
	now := agentStart.Add(time.Hour + 1500*time.Millisecond)
	clk := clocktesting.NewFakeClock(now)
	src := NewSource(clk, time.Second, 300)
	grid := agentStart.Add(time.Hour + time.Second)
	webCPU, _, _ := m.PodAt("web", grid)
	goneLast := agentStart.Add(50*time.Minute - time.Second)
	tests := map[string]struct {
		key      metriccache.SeriesKey
		wantTime time.Time
		want     float64
		wantOK   bool
	}{
		"node-memory": {
			key: metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceMemory}, wantTime: grid,
			want: single(m.At(grid).NodeMemory), wantOK: true,
		},
		"system-cpu": {
			key: metriccache.SeriesKey{Kind: metriccache.KindSystem, Resource: corev1.ResourceCPU}, wantTime: grid,
			want: single(0.4), wantOK: true,
		},
		"running-pod": {
			key: metriccache.SeriesKey{Kind: metriccache.KindPod, ID: "web", Resource: corev1.ResourceCPU}, wantTime: grid,
			want: single(webCPU), wantOK: true,
		},
		"stopped-pod-last-sample": {
			key:      metriccache.SeriesKey{Kind: metriccache.KindPod, ID: "gone", Resource: corev1.ResourceMemory},
			wantTime: goneLast, want: gi, wantOK: true,
		},
		"unknown-pod":      {key: metriccache.SeriesKey{Kind: metriccache.KindPod, ID: "nope", Resource: corev1.ResourceCPU}},
		"container":        {key: metriccache.SeriesKey{Kind: metriccache.KindContainer, ID: "containerd://a", Resource: corev1.ResourceCPU}},
		"other-resource":   {key: metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: "ephemeral-storage"}},
		"node-id-mismatch": {key: metriccache.SeriesKey{Kind: metriccache.KindNode, ID: "x", Resource: corev1.ResourceCPU}},
	}
	if _, _, ok := src.Latest(keysNodeCPU); ok {
		t.Error("Latest answered before SetModel")
	}
	src.SetModel(m)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			at, v, ok := src.Latest(tc.key)
			if diff := cmp.Diff([]any{tc.wantOK, tc.wantTime, tc.want}, []any{ok, at, v}); diff != "" {
				t.Errorf("Latest (-want,+got):\n%s", diff)
			}
		})
	}

	// Before the agent started there is no sample; a new model is read at once.
	clk.SetTime(agentStart.Add(-time.Minute))
	if _, _, ok := src.Latest(keysNodeCPU); ok {
		t.Error("Latest answered before the agent started")
	}
	clk.SetTime(now)
	busier := sourceModel()
	busier.SystemCPU = 1
	src.SetModel(busier)
	if _, v, ok := src.Latest(metriccache.SeriesKey{Kind: metriccache.KindSystem, Resource: corev1.ResourceCPU}); !ok || v != 1 {
		t.Errorf("system CPU after SetModel = %v, %v; want 1", v, ok)
	}
}

var keysNodeCPU = metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU}

func TestSourceKeepsFewFrames(t *testing.T) {
	m := sourceModel()
	end := agentStart.Add(time.Hour)
	src := NewSource(clocktesting.NewFakeClock(end), time.Second, 300)
	src.SetModel(m)
	key := metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU}
	want, _ := src.Aggregate(key, end.Add(-5*time.Minute), end)
	for i := range 3 * maxFrames {
		at := end.Add(-time.Duration(i) * time.Second)
		if _, ok := src.Aggregate(key, at.Add(-5*time.Minute), at); !ok {
			t.Fatalf("no aggregate ending at %s", at)
		}
	}
	if got := len(src.frames); got != maxFrames {
		t.Errorf("source keeps %d frames, want at most %d", got, maxFrames)
	}
	// A frame dropped and computed again gives the same statistics.
	if got, _ := src.Aggregate(key, end.Add(-5*time.Minute), end); !cmp.Equal(want, got) {
		t.Errorf("aggregate after frames were dropped = %+v, want %+v", got, want)
	}
	src.ReleaseFrames()
	if got := len(src.frames); got != 0 {
		t.Errorf("source keeps %d frames after ReleaseFrames, want 0", got)
	}
}
