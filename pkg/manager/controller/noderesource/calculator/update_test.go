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

package calculator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

func TestNeedUpdate(t *testing.T) {
	// withResources returns the 100-core node carrying batch-cpu and batch-memory in capacity and allocatable.
	withResources := func(batchCPU, batchMemory int64) *corev1.Node {
		node := testNode("100", "120G")
		for _, list := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
			list[extension.BatchCPU] = *resource.NewQuantity(batchCPU, resource.DecimalSI)
			list[extension.BatchMemory] = *resource.NewQuantity(batchMemory, resource.BinarySI)
		}
		return node
	}
	// batchOnly is a result with batch resources and mid resources removed (a synthetic result: the calculator
	// removes both tiers together).
	batchOnly := func(batchCPU, batchMemory int64) *Result {
		return &Result{Batch: Tier{CPU: batchCPU, Memory: batchMemory}, Mid: Tier{Reset: ResetColocationDisabled}}
	}
	recent, old := now.Add(-time.Minute), now.Add(-5*time.Minute)
	tests := map[string]struct {
		node       *corev1.Node
		result     *Result
		lastUpdate time.Time
		strategy   *configuration.ColocationStrategy
		want       Decision
	}{
		"resource missing from the node is added": {
			node: testNode("100", "120G"), result: batchOnly(25000, 33e9), lastUpdate: recent,
			want: Decision{Update: true, Reason: UpdateResourceAdded, Resource: extension.BatchCPU},
		},
		"resource missing from the capacity only is added": {
			node: func() *corev1.Node {
				n := withResources(25000, 33e9)
				delete(n.Status.Capacity, extension.BatchMemory)
				return n
			}(),
			result: batchOnly(25000, 33e9), lastUpdate: recent,
			want: Decision{Update: true, Reason: UpdateResourceAdded, Resource: extension.BatchMemory},
		},
		"reset resource is removed at once": {
			node: withResources(25000, 33e9), lastUpdate: recent,
			result: &Result{Batch: Tier{Reset: ResetNodeMetricStale}, Mid: Tier{Reset: ResetNodeMetricStale}},
			want:   Decision{Update: true, Reason: UpdateResourceRemoved, Resource: extension.BatchCPU},
		},
		"nothing to add or remove without a last update writes nothing": {
			node:   testNode("100", "120G"),
			result: &Result{Batch: Tier{Reset: ResetColocationDisabled}, Mid: Tier{Reset: ResetColocationDisabled}},
			want:   Decision{},
		},
		"equal values without a recorded last update are written to record it": {
			node: withResources(25000, 33e9), result: batchOnly(25000, 33e9),
			want: Decision{Update: true, Reason: UpdateNoLastUpdate},
		},
		"equal values are never written again": {
			node: withResources(25000, 33e9), result: batchOnly(25000, 33e9), lastUpdate: now.Add(-24 * time.Hour),
			want: Decision{},
		},
		"small difference waits for updateTimeThresholdSeconds": {
			// 26000 against 25000 is 4%, below 10%: due 300 s after the last update.
			node: withResources(25000, 33e9), result: batchOnly(26000, 33e9), lastUpdate: recent,
			want: Decision{DueAt: recent.Add(300 * time.Second)},
		},
		"small difference is written once updateTimeThresholdSeconds passed": {
			node: withResources(25000, 33e9), result: batchOnly(26000, 33e9), lastUpdate: old,
			want: Decision{Update: true, Reason: UpdateExpired},
		},
		"difference above resourceDiffThreshold is written at once": {
			// 33G + 3.4G is 10.3% above 33G.
			node: withResources(25000, 33e9), result: batchOnly(25000, 36.4e9), lastUpdate: recent,
			want: Decision{Update: true, Reason: UpdateDiffExceeded, Resource: extension.BatchMemory},
		},
		"difference of exactly resourceDiffThreshold waits": {
			node: withResources(25000, 33e9), result: batchOnly(22500, 33e9), lastUpdate: recent,
			want: Decision{DueAt: recent.Add(300 * time.Second)},
		},
		"any rise from zero exceeds the threshold": {
			node: withResources(0, 33e9), result: batchOnly(1, 33e9), lastUpdate: recent,
			want: Decision{Update: true, Reason: UpdateDiffExceeded, Resource: extension.BatchCPU},
		},
		"capacity differing from allocatable is repaired": {
			node: func() *corev1.Node {
				n := withResources(25000, 33e9)
				n.Status.Capacity[extension.BatchCPU] = resource.MustParse("30000")
				return n
			}(),
			result: batchOnly(25000, 33e9), lastUpdate: recent,
			want: Decision{Update: true, Reason: UpdateCapacityMismatch, Resource: extension.BatchCPU},
		},
		"mid resources are compared too": {
			node: withResources(25000, 33e9), lastUpdate: recent,
			result: &Result{Batch: Tier{CPU: 25000, Memory: 33e9}, Mid: Tier{CPU: 1000, Memory: 1e9}},
			want:   Decision{Update: true, Reason: UpdateResourceAdded, Resource: extension.MidCPU},
		},
		"configured thresholds apply": {
			// 30% difference under a 0.5 threshold; the last update 30 s ago is due again after 60 s.
			node: withResources(25000, 33e9), result: batchOnly(32500, 33e9), lastUpdate: now.Add(-30 * time.Second),
			strategy: &configuration.ColocationStrategy{
				ResourceDiffThreshold: ptr.To(0.5), UpdateTimeThresholdSeconds: ptr.To[int64](60),
			},
			want: Decision{DueAt: now.Add(30 * time.Second)},
		},
		"configured update time threshold expires": {
			node: withResources(25000, 33e9), result: batchOnly(32500, 33e9), lastUpdate: now.Add(-60 * time.Second),
			strategy: &configuration.ColocationStrategy{
				ResourceDiffThreshold: ptr.To(0.5), UpdateTimeThresholdSeconds: ptr.To[int64](60),
			},
			want: Decision{Update: true, Reason: UpdateExpired},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := NeedUpdate(tc.node, tc.result, tc.lastUpdate, tc.strategy, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NeedUpdate() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestExcesses(t *testing.T) {
	withBatch := func(batchCPU, batchMemory int64) *corev1.Node {
		node := testNode("100", "120G")
		node.Status.Allocatable[extension.BatchCPU] = *resource.NewQuantity(batchCPU, resource.DecimalSI)
		node.Status.Allocatable[extension.BatchMemory] = *resource.NewQuantity(batchMemory, resource.BinarySI)
		return node
	}
	result := &Result{Batch: Tier{CPU: 20000, Memory: 30e9}, Mid: Tier{Reset: ResetColocationDisabled}}
	recent, old := now.Add(-time.Minute), now.Add(-5*time.Minute)
	tests := map[string]struct {
		node       *corev1.Node
		result     *Result
		lastUpdate time.Time
		want       []Excess
	}{
		"equal or below: none": {node: withBatch(20000, 25e9), result: result, lastUpdate: recent},
		// 21000 − 20000 = 1000 ≤ 10% of 21000; 32G − 30G = 2G ≤ 3.2G: left in place while the update is recent.
		"above within the diff threshold, updated recently: none": {node: withBatch(21000, 32e9), result: result, lastUpdate: recent},
		"above within the diff threshold, update older than 300s": {node: withBatch(21000, 30e9), result: result, lastUpdate: old,
			want: []Excess{{Resource: extension.BatchCPU, Offered: 21000, Result: 20000, Reason: UpdateExpired}}},
		// 25000 − 20000 = 5000 > 2500.
		"beyond the diff threshold": {node: withBatch(25000, 30e9), result: result, lastUpdate: recent,
			want: []Excess{{Resource: extension.BatchCPU, Offered: 25000, Result: 20000, Reason: UpdateDiffExceeded}}},
		"removed by the result": {node: withBatch(25000, 30e9), lastUpdate: recent,
			result: &Result{Batch: Tier{Reset: ResetNodeMetricStale}, Mid: Tier{Reset: ResetNodeMetricStale}},
			want: []Excess{{Resource: extension.BatchCPU, Offered: 25000, Reason: UpdateResourceRemoved},
				{Resource: extension.BatchMemory, Offered: 30e9, Reason: UpdateResourceRemoved}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Excesses(tc.node, tc.result, tc.lastUpdate, nil, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestExplanation(t *testing.T) {
	tests := map[string]struct {
		result    func() Result
		wantValue string
	}{
		"computed batch, no prediction: mid 0": {
			result: baseResult,
			wantValue: `{"updateTime":"2026-03-01T12:00:00Z","policy":{"cpu":"usage","memory":"usage"},` +
				`"cpu":{"capacity":"100","reclaimPercent":65,"safetyMargin":"35","nodeReserved":"0","systemUsed":"7",` +
				`"hpRequest":"40","hpUsed":"33","hpMaxUsedReq":"42","batch":"25",` +
				`"prodReclaimable":"0","nodeUnused":"50","unallocated":"53","midUnallocatedPercent":0,"midThresholdCap":"100","mid":"0"},` +
				`"memory":{"capacity":"120G","reclaimPercent":65,"safetyMargin":"42G","nodeReserved":"0","systemUsed":"12G",` +
				`"hpRequest":"60G","hpUsed":"33G","hpMaxUsedReq":"60G","batch":"33G",` +
				`"prodReclaimable":"0","nodeUnused":"65G","unallocated":"48G","midUnallocatedPercent":0,"midThresholdCap":"120G","mid":"0"}}`,
		},
		"mid predicted, threshold cap, normalization and warnings": {
			result: func() Result {
				in := baseInput()
				in.Node.Status.Capacity[corev1.ResourceMemory] = resource.MustParse("128Gi")
				in.Node.Annotations = map[string]string{extension.AnnotationCPUNormalizationRatio: "1.5", extension.AnnotationNodeReservation: "x"}
				in.Strategy.CPUCalculatePolicy = ptr.To(configuration.CalculateByPodRequest)
				in.Strategy.BatchCPUThresholdPercent = ptr.To[int64](10)
				in.NodeMetric.Status.ProdReclaimableMetric = &slov1alpha1.ReclaimableMetric{
					Resource: slov1alpha1.ResourceMap{ResourceList: rl("1", "1Gi")},
				}
				return Calculate(in)
			},
			// cpu: min(25, 10% of 100) = 10 cores × 1.5 = 15; mid min(1, 50) = 1.
			// memory: capacity 128Gi = 137438953472, allocatable 120G: reserved 17438953472 = SystemUsed
			// (above 12G); margin 35% = 48103633715; batch 137438953472 − 48103633715 − 17438953472 − 33G =
			// 38896366285; unused 137438953472 − 55G = 82438953472; unallocated 137438953472 − 17438953472 − 60G
			// = 60G; mid min(1Gi, unused) = 1Gi.
			wantValue: `{"updateTime":"2026-03-01T12:00:00Z","policy":{"cpu":"usage","memory":"usage","cpuConfigured":"request"},` +
				`"cpu":{"capacity":"100","reclaimPercent":65,"safetyMargin":"35","nodeReserved":"0","systemUsed":"7",` +
				`"hpRequest":"40","hpUsed":"33","hpMaxUsedReq":"42","thresholdCap":"10","normalizationRatio":"1.5","batch":"15",` +
				`"prodReclaimable":"1","nodeUnused":"50","unallocated":"53","midUnallocatedPercent":0,"midThresholdCap":"100","mid":"1"},` +
				`"memory":{"capacity":"128Gi","reclaimPercent":65,"safetyMargin":"48103633715","nodeReserved":"17438953472",` +
				`"systemUsed":"17438953472","hpRequest":"60G","hpUsed":"33G","hpMaxUsedReq":"60G","batch":"38896366285",` +
				`"prodReclaimable":"1Gi","nodeUnused":"82438953472","unallocated":"60G","midUnallocatedPercent":0,"midThresholdCap":"128Gi","mid":"1Gi"},` +
				`"warnings":["ignored: annotation \"node.koordinator.sh/reservation\": invalid character 'x' looking for beginning of value"]}`,
		},
		"degraded": {
			result: func() Result {
				in := baseInput()
				in.NodeMetric = nil
				return Calculate(in)
			},
			wantValue: `{"updateTime":"2026-03-01T12:00:00Z","policy":{"cpu":"usage","memory":"usage"},` +
				`"cpu":{"capacity":"100","reclaimPercent":65,"safetyMargin":"35","nodeReserved":"0"},` +
				`"memory":{"capacity":"120G","reclaimPercent":65,"safetyMargin":"42G","nodeReserved":"0"},` +
				`"degraded":"the node has no NodeMetric"}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := tc.result()
			node := &corev1.Node{}
			if err := extension.SetColocationExplanation(node, r.Explanation(now.Add(900*time.Millisecond))); err != nil {
				t.Fatalf("SetColocationExplanation() error: %v", err)
			}
			if diff := cmp.Diff(tc.wantValue, node.Annotations[extension.AnnotationColocationExplanation]); diff != "" {
				t.Errorf("explanation (-want,+got):\n%s", diff)
			}
		})
	}
}
