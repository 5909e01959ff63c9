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

package loadaware

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// TestScore scores five nodes of 10 cpus and 10Gi for a pod estimated at 850m cpu and 0.7Gi memory.
// cool uses 2 cpus and 2Gi, hot 6 cpus (1 of them koord-prod) and 2Gi; bare has no NodeMetric, stale an
// expired one and empty one without usage.
func TestScore(t *testing.T) {
	fresh := 10 * time.Second
	cool := utiltesting.MakeNodeMetric("cool").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "2", "memory", "2Gi")).Obj()
	cool.Status.NodeMetric.AggregatedNodeUsages = []slov1alpha1.AggregatedUsage{{
		Duration: metav1.Duration{Duration: 30 * time.Minute},
		Usage:    map[slov1alpha1.AggregationType]slov1alpha1.ResourceMap{slov1alpha1.AggregationTypeP95: {ResourceList: utiltesting.Resources("cpu", "8")}},
	}}
	hot := utiltesting.MakeNodeMetric("hot").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(utiltesting.Resources("cpu", "6", "memory", "2Gi")).Pod("default", "web", extension.PriorityProd, utiltesting.Resources("cpu", "1")).Obj()
	stale := utiltesting.MakeNodeMetric("stale").Updated(utiltesting.Now.Add(-time.Hour)).NodeUsage(utiltesting.Resources("cpu", "0", "memory", "0")).Obj()
	empty := utiltesting.MakeNodeMetric("empty").Updated(utiltesting.Now.Add(-fresh)).NodeUsage(nil).Obj()
	empty.Status.NodeMetric = nil
	metrics := []*slov1alpha1.NodeMetric{cool, hot, stale, empty}
	// web, the koord-prod pod hot reports, runs there since long before the report.
	pods := []*corev1.Pod{utiltesting.MakePod("web").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Scheduled("hot", utiltesting.Now.Add(-10*time.Minute)).Obj()}
	nodes := []string{"cool", "hot", "bare", "stale", "empty"}
	incoming := utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj()
	incoming.Labels = map[string]string{extension.LabelPodPriorityClass: string(extension.PriorityBatch)}

	tests := map[string]struct {
		args func(*configv1.LoadAwareSchedulingArgs)
		pod  *corev1.Pod
		want map[string]int64
	}{
		// cool: cpu (10000-2850)/100 = 71, memory 72; hot: cpu 31, memory 72.
		"least used node scores highest": {
			want: map[string]int64{"cool": 71, "hot": 51, "bare": 0, "stale": 0, "empty": 0},
		},
		"resource weights": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.ResourceWeights = map[corev1.ResourceName]int64{corev1.ResourceCPU: 3, corev1.ResourceMemory: 1}
			},
			want: map[string]int64{"cool": 71, "hot": 41, "bare": 0, "stale": 0, "empty": 0},
		},
		// hot: (31 + 72 + 1 × 31) / 3.
		"dominant resource weight favours the node whose most used resource is freer": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.ResourceWeights = map[corev1.ResourceName]int64{corev1.ResourceCPU: 1, corev1.ResourceMemory: 1}
				a.DominantResourceWeight = 1
			},
			want: map[string]int64{"cool": 71, "hot": 44, "bare": 0, "stale": 0, "empty": 0},
		},
		// No weights with a dominant weight: the score is the least free resource's alone, as in Koordinator.
		"dominant resource weight alone": {
			args: func(a *configv1.LoadAwareSchedulingArgs) { a.DominantResourceWeight = 1 },
			want: map[string]int64{"cool": 71, "hot": 31, "bare": 0, "stale": 0, "empty": 0},
		},
		// The dominant resource is taken over every resource the plugin tracks, weighted or not: cpu, weighted
		// 0, is the least free: hot (72 × 1 + 31 × 1) / 2, cool (72 + 71) / 2.
		"dominant resource over unweighted resources": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.ResourceWeights = map[corev1.ResourceName]int64{corev1.ResourceCPU: 0, corev1.ResourceMemory: 1}
				a.DominantResourceWeight = 1
			},
			want: map[string]int64{"cool": 71, "hot": 51, "bare": 0, "stale": 0, "empty": 0},
		},
		// hot: prod usage 1 cpu + 850m: 81; memory 0 + 0.7Gi: 92 (rounded down).
		"prod pod on prod usage": {
			args: func(a *configv1.LoadAwareSchedulingArgs) { a.ScoreAccordingProdUsage = ptr.To(true) },
			pod:  utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Priority(extension.PriorityProdValueDefault).Obj(),
			want: map[string]int64{"cool": 91, "hot": 86, "bare": 0, "stale": 0, "empty": 0},
		},
		"non-prod pod ignores scoreAccordingProdUsage": {
			args: func(a *configv1.LoadAwareSchedulingArgs) { a.ScoreAccordingProdUsage = ptr.To(true) },
			want: map[string]int64{"cool": 71, "hot": 51, "bare": 0, "stale": 0, "empty": 0},
		},
		// cool: p95 cpu 8 + 850m: 11, memory 0 + 0.7Gi: 92; hot reports no statistic: latest usage.
		"aggregated statistic": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.Aggregated = &configv1.LoadAwareSchedulingAggregatedArgs{ScoreAggregationType: extension.P95}
			},
			want: map[string]int64{"cool": 51, "hot": 51, "bare": 0, "stale": 0, "empty": 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs](t, tc.args), metrics, pods)
			p := tc.pod
			if p == nil {
				p = incoming
			}
			got := map[string]int64{}
			for _, n := range nodes {
				got[n] = f.score(t, p, node(n).Obj())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestScoreCountsReservedPods: each reservation lowers the node's score until the node is full.
func TestScoreCountsReservedPods(t *testing.T) {
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs](t, func(a *configv1.LoadAwareSchedulingArgs) {
		a.ResourceWeights = map[corev1.ResourceName]int64{corev1.ResourceCPU: 1}
	}), []*slov1alpha1.NodeMetric{utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-10 * time.Second)).NodeUsage(utiltesting.Resources("cpu", "5")).Obj()}, nil)
	n := node("n1").Obj()
	p := utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "2")).Obj()
	var got []int64
	for i := range 4 {
		got = append(got, f.score(t, p, n))
		f.reserve(t, utiltesting.MakePod(string(rune('a'+i))).Req(utiltesting.Resources("cpu", "2")).Obj(), "n1")
	}
	// 5 cpus used, then + 1.7 per reservation, + 1.7 for the pod: 33, 16, 0 (beyond capacity), 0.
	if diff := cmp.Diff([]int64{33, 16, 0, 0}, got); diff != "" {
		t.Errorf("scores after 0..3 reservations (-want,+got):\n%s", diff)
	}
}
