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
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// maxUsageRequest sets reclaim 70/80 and the maxUsageRequest policy for cpu and memory; maxUsageRequestResult
// sets the terms that follow from it (safety margins of 30 cores and 24G).
func maxUsageRequest(in *Input) {
	in.Strategy.CPUReclaimThresholdPercent = ptr.To[int64](70)
	in.Strategy.MemoryReclaimThresholdPercent = ptr.To[int64](80)
	in.Strategy.CPUCalculatePolicy = ptr.To(configuration.CalculateByPodMaxUsageRequest)
	in.Strategy.MemoryCalculatePolicy = ptr.To(configuration.CalculateByPodMaxUsageRequest)
}

func maxUsageRequestResult(r *Result) {
	r.CPU.ReclaimPercent, r.CPU.SafetyMargin = 70, 30000
	r.Memory.ReclaimPercent, r.Memory.SafetyMargin = 80, 24e9
	r.CPUPolicy, r.MemoryPolicy = configuration.CalculateByPodMaxUsageRequest, configuration.CalculateByPodMaxUsageRequest
}

// TestCalculateBatch covers the batch formulas. Every case starts from baseInput and baseResult (see
// helpers_test.go) and states the numbers it changes, computed by hand.
func TestCalculateBatch(t *testing.T) {
	tests := map[string]struct {
		input func(in *Input)
		want  func(r *Result)
	}{
		"usage policy counts running and pending high-priority pods by usage": {
			input: func(*Input) {},
			want:  func(*Result) {},
		},
		"memory request policy subtracts node reserved and requests": {
			// reclaim 70/80: margins 30 cores and 24G.
			// cpu (usage): 100 − 30 − 7 − 33 = 30 cores; memory (request): 120G − 24G − 0 − 60G = 36G.
			input: func(in *Input) {
				in.Strategy.CPUReclaimThresholdPercent = ptr.To[int64](70)
				in.Strategy.MemoryReclaimThresholdPercent = ptr.To[int64](80)
				in.Strategy.MemoryCalculatePolicy = ptr.To(configuration.CalculateByPodRequest)
			},
			want: func(r *Result) {
				r.CPU.ReclaimPercent, r.CPU.SafetyMargin = 70, 30000
				r.Memory.ReclaimPercent, r.Memory.SafetyMargin = 80, 24e9
				r.MemoryPolicy = configuration.CalculateByPodRequest
				r.Batch = Tier{CPU: 30000, Memory: 36e9}
			},
		},
		"maxUsageRequest policy subtracts the larger of request and usage": {
			// cpu: 100 − 30 − 7 − (max(20,11) + max(20,22) = 42) = 21 cores;
			// memory: 120G − 24G − 12G − (max(20G,11G) + max(40G,22G) = 60G) = 24G.
			input: func(in *Input) {
				maxUsageRequest(in)
			},
			want: func(r *Result) {
				maxUsageRequestResult(r)
				r.Batch = Tier{CPU: 21000, Memory: 24e9}
			},
		},
		"cpu request policy falls back to usage and says so": {
			input: func(in *Input) {
				in.Strategy.CPUCalculatePolicy = ptr.To(configuration.CalculateByPodRequest)
			},
			want: func(r *Result) {
				r.CPUPolicyConfigured = configuration.CalculateByPodRequest
			},
		},
		"mid pods count as high priority even when pending": {
			// podE, koord-mid, pending, requests 5/5G, no metric yet: used = request.
			// HPUsed 38 cores / 38G → batch 100 − 35 − 7 − 38 = 20 cores, 120G − 42G − 12G − 38G = 28G.
			input: func(in *Input) {
				pod := testPod("podE", extension.QoSLS, corev1.PodPending, rl("5", "5G"))
				pod.Labels[extension.LabelPodPriorityClass] = string(extension.PriorityMid)
				in.Pods = append(in.Pods, pod)
			},
			want: func(r *Result) {
				r.CPU.HPRequest, r.CPU.HPUsed, r.CPU.HPMaxUsedReq = 45000, 38000, 47000
				r.Memory.HPRequest, r.Memory.HPUsed, r.Memory.HPMaxUsedReq = 65e9, 38e9, 65e9
				r.Batch = Tier{CPU: 20000, Memory: 28e9}
			},
		},
		"high-priority pod without a metric counts its request": {
			// podA is not reported: used = request 20/20G. HPUsed 42 cores / 42G →
			// batch 100 − 35 − 7 − 42 = 16 cores, 120G − 42G − 12G − 42G = 24G.
			// HPMaxUsedReq = 20 + max(20,22) = 42 cores, 20G + max(40G,22G) = 60G.
			input: func(in *Input) {
				in.NodeMetric.Status.PodsMetric = in.NodeMetric.Status.PodsMetric[1:]
			},
			want: func(r *Result) {
				r.CPU.HPUsed, r.Memory.HPUsed = 42000, 42e9
				r.Batch = Tier{CPU: 16000, Memory: 24e9}
			},
		},
		"maxUsageRequest policy counts an unreported pod's request": {
			// podA is not reported: HPUsed 42 cores / 42G; HPMaxUsedReq = 20 (its request) + max(20,22) = 42 cores,
			// 20G + max(40G,22G) = 60G: batch as with its metric, 21 cores and 24G.
			input: func(in *Input) {
				in.NodeMetric.Status.PodsMetric = in.NodeMetric.Status.PodsMetric[1:]
				maxUsageRequest(in)
			},
			want: func(r *Result) {
				maxUsageRequestResult(r)
				r.CPU.HPUsed, r.Memory.HPUsed = 42000, 42e9
				r.Batch = Tier{CPU: 21000, Memory: 24e9}
			},
		},
		"maxUsageRequest policy leaves an unreported pod out, as Koordinator, when asked": {
			// HPMaxUsedReq = max(20,22) = 22 cores, max(40G,22G) = 40G (podA left out):
			// cpu 100 − 30 − 7 − 22 = 41 cores; memory 120G − 24G − 12G − 40G = 44G.
			input: func(in *Input) {
				in.UnreportedPodsUsageOnly = true
				in.NodeMetric.Status.PodsMetric = in.NodeMetric.Status.PodsMetric[1:]
				maxUsageRequest(in)
			},
			want: func(r *Result) {
				maxUsageRequestResult(r)
				r.CPU.HPUsed, r.Memory.HPUsed = 42000, 42e9
				r.CPU.HPMaxUsedReq, r.Memory.HPMaxUsedReq = 22000, 40e9
				r.Batch = Tier{CPU: 41000, Memory: 44e9}
			},
		},
		"dangling metrics count unless reported as batch or free": {
			// Reported but not listed: podX koord-prod 4/4G and podZ without priority 1/1G count; podY
			// koord-batch 8/8G and podW koord-free 2/2G do not. HPUsed 38 cores / 38G →
			// batch 100 − 35 − 7 − 38 = 20 cores, 120G − 42G − 12G − 38G = 28G.
			input: func(in *Input) {
				in.NodeMetric.Status.PodsMetric = append(in.NodeMetric.Status.PodsMetric,
					podMetric("podX", extension.PriorityProd, "4", "4G"),
					podMetric("podY", extension.PriorityBatch, "8", "8G"),
					podMetric("podZ", extension.PriorityNone, "1", "1G"),
					podMetric("podW", extension.PriorityFree, "2", "2G"),
				)
			},
			want: func(r *Result) {
				r.CPU.HPUsed, r.CPU.HPMaxUsedReq = 38000, 47000
				r.Memory.HPUsed, r.Memory.HPMaxUsedReq = 38e9, 65e9
				r.Batch = Tier{CPU: 20000, Memory: 28e9}
			},
		},
		"finished pod still reported counts as dangling": {
			// podF, LS, succeeded, reported as koord-prod 3/3G: the phase filter drops the pod, so its metric
			// is dangling and counts. podD, reported as koord-batch, does not. HPUsed 36 cores / 36G →
			// batch 100 − 35 − 7 − 36 = 22 cores, 120G − 42G − 12G − 36G = 30G.
			input: func(in *Input) {
				in.Pods = append(in.Pods, testPod("podF", extension.QoSLS, corev1.PodSucceeded, rl("5", "5G")))
				in.NodeMetric.Status.PodsMetric = append(in.NodeMetric.Status.PodsMetric,
					podMetric("podF", extension.PriorityProd, "3", "3G"),
					podMetric("podD", extension.PriorityBatch, "9", "9G"),
				)
			},
			want: func(r *Result) {
				r.CPU.HPUsed, r.CPU.HPMaxUsedReq = 36000, 45000
				r.Memory.HPUsed, r.Memory.HPMaxUsedReq = 36e9, 63e9
				r.Batch = Tier{CPU: 22000, Memory: 30e9}
			},
		},
		"LSE pod counts its CPU request and its memory usage": {
			// podA becomes LSE: cpu used = request 20 (not usage 11), memory used = usage 11G.
			// HPUsed 42 cores / 33G → batch 100 − 35 − 7 − 42 = 16 cores; memory unchanged 33G.
			input: func(in *Input) {
				in.Pods[0].Labels[extension.LabelPodQoS] = string(extension.QoSLSE)
			},
			want: func(r *Result) {
				r.CPU.HPUsed = 42000
				r.Batch.CPU = 16000
			},
		},
		"reservation annotation reservedCPUs overrides resources cpu": {
			// reservedCPUs 0-19 = 20 cores (not resources.cpu 5), memory 20G. SystemUsed = max(7, 20) = 20
			// cores, max(12G, 20G) = 20G → batch 100 − 35 − 20 − 33 = 12 cores, 120G − 42G − 20G − 33G = 25G.
			input: func(in *Input) {
				in.Node.Annotations = map[string]string{
					extension.AnnotationNodeReservation: `{"resources":{"cpu":"5","memory":"20G"},"reservedCPUs":"0-19"}`,
				}
			},
			want: func(r *Result) {
				r.CPU.NodeReserved, r.CPU.SystemUsed = 20000, 20000
				r.Memory.NodeReserved, r.Memory.SystemUsed = 20e9, 20e9
				r.Batch = Tier{CPU: 12000, Memory: 25e9}
			},
		},
		"node reserved is the larger of kubelet reserved and the annotation": {
			// allocatable 90/110G: kubelet reserved 10 cores / 10G; annotation cpu 5 → reserved 10 cores, 10G.
			// SystemUsed = max(7, 10) = 10 cores, max(12G, 10G) = 12G →
			// batch 100 − 35 − 10 − 33 = 22 cores, 120G − 42G − 12G − 33G = 33G.
			input: func(in *Input) {
				in.Node.Status.Allocatable = rl("90", "110G")
				in.Node.Annotations = map[string]string{extension.AnnotationNodeReservation: `{"resources":{"cpu":"5"}}`}
			},
			want: func(r *Result) {
				r.CPU.NodeReserved, r.CPU.SystemUsed = 10000, 10000
				r.Memory.NodeReserved = 10e9
				r.Batch.CPU = 22000
			},
		},
		"memory request policy subtracts node reserved rather than system usage": {
			// kubelet reserved 10G: 120G − 42G − 10G − 60G = 8G.
			input: func(in *Input) {
				in.Node.Status.Allocatable = rl("100", "110G")
				in.Strategy.MemoryCalculatePolicy = ptr.To(configuration.CalculateByPodRequest)
			},
			want: func(r *Result) {
				r.Memory.NodeReserved = 10e9
				r.MemoryPolicy = configuration.CalculateByPodRequest
				r.Batch.Memory = 8e9
			},
		},
		"unreadable reservation annotation is ignored with a warning": {
			input: func(in *Input) {
				in.Node.Annotations = map[string]string{extension.AnnotationNodeReservation: `{"reservedCPUs":"0-"}`}
			},
			want: func(r *Result) {
				r.Warnings = []string{`ignored: annotation "node.koordinator.sh/reservation": reservedCPUs: cpuset "0-": element "0-": missing CPU number`}
			},
		},
		"prod and mid host applications add to system usage, batch ones do not": {
			// prod 2/3G, mid 1/1G, no priority 1/1G count; batch 4/6G and free 1/1G do not.
			// SystemUsed = 7 + 4 = 11 cores, 12G + 5G = 17G →
			// batch 100 − 35 − 11 − 33 = 21 cores, 120G − 42G − 17G − 33G = 28G.
			input: func(in *Input) {
				in.NodeMetric.Status.HostApplicationMetric = []slov1alpha1.HostApplicationMetricInfo{
					{Name: "prod", Priority: string(extension.PriorityProd), Usage: slov1alpha1.ResourceMap{ResourceList: rl("2", "3G")}},
					{Name: "mid", Priority: string(extension.PriorityMid), Usage: slov1alpha1.ResourceMap{ResourceList: rl("1", "1G")}},
					{Name: "none", Usage: slov1alpha1.ResourceMap{ResourceList: rl("1", "1G")}},
					{Name: "yarn", Priority: string(extension.PriorityBatch), Usage: slov1alpha1.ResourceMap{ResourceList: rl("4", "6G")}},
					{Name: "free", Priority: string(extension.PriorityFree), Usage: slov1alpha1.ResourceMap{ResourceList: rl("1", "1G")}},
				}
			},
			want: func(r *Result) {
				r.CPU.SystemUsed, r.Memory.SystemUsed = 11000, 17e9
				r.Batch = Tier{CPU: 21000, Memory: 28e9}
			},
		},
		"reclaim above 100 percent gives a negative safety margin": {
			// cpu reclaim 150: margin −50 cores → 100 + 50 − 7 − 33 = 110 cores.
			input: func(in *Input) {
				in.Strategy.CPUReclaimThresholdPercent = ptr.To[int64](150)
			},
			want: func(r *Result) {
				r.CPU.ReclaimPercent, r.CPU.SafetyMargin = 150, -50000
				r.Batch.CPU = 110000
			},
		},
		"batch threshold percent caps the result at capacity times percent": {
			// cpu: min(110, 100 × 80% = 80) = 80 cores; memory: min(33G, 120G × 20% = 24G) = 24G.
			input: func(in *Input) {
				in.Strategy.CPUReclaimThresholdPercent = ptr.To[int64](150)
				in.Strategy.BatchCPUThresholdPercent = ptr.To[int64](80)
				in.Strategy.BatchMemoryThresholdPercent = ptr.To[int64](20)
			},
			want: func(r *Result) {
				r.CPU.ReclaimPercent, r.CPU.SafetyMargin = 150, -50000
				r.CPU.ThresholdCap, r.CPU.HasThresholdCap = 80000, true
				r.Memory.ThresholdCap, r.Memory.HasThresholdCap = 24e9, true
				r.Batch = Tier{CPU: 80000, Memory: 24e9}
			},
		},
		"results never go below zero": {
			// system usage 90/110G: 100 − 35 − 90 − 33 < 0 and 120G − 42G − 110G − 33G < 0.
			input: func(in *Input) {
				in.NodeMetric.Status.NodeMetric.SystemUsage.ResourceList = rl("90", "110G")
			},
			want: func(r *Result) {
				r.CPU.SystemUsed, r.Memory.SystemUsed = 90000, 110e9
				r.Batch = Tier{}
			},
		},
		"cpu normalization ratio multiplies batch-cpu": {
			// 25000 × 1.2 = 30000.
			input: func(in *Input) {
				in.Node.Annotations = map[string]string{extension.AnnotationCPUNormalizationRatio: "1.2"}
			},
			want: func(r *Result) {
				r.CPUNormalizationRatio = 1.2
				r.Batch.CPU = 30000
			},
		},
		"normalized batch-cpu is rounded up to a whole milli-core": {
			// 25000 × 1.00001 = 25000.25 → 25001.
			input: func(in *Input) {
				in.Node.Annotations = map[string]string{extension.AnnotationCPUNormalizationRatio: "1.00001"}
			},
			want: func(r *Result) {
				r.CPUNormalizationRatio = 1.00001
				r.Batch.CPU = 25001
			},
		},
		"cpu normalization ratio not above 1 is not applied": {
			input: func(in *Input) {
				in.Node.Annotations = map[string]string{extension.AnnotationCPUNormalizationRatio: "0.8"}
			},
			want: func(*Result) {},
		},
		"unreadable cpu normalization ratio is ignored with a warning": {
			input: func(in *Input) {
				in.Node.Annotations = map[string]string{extension.AnnotationCPUNormalizationRatio: "fast"}
			},
			want: func(r *Result) {
				r.Warnings = []string{`ignored: annotation "node.koordinator.sh/cpu-normalization-ratio": "fast" is not a usable ratio`}
			},
		},
		"memory usage below a byte is rounded up": {
			// system usage 12G + 0.5 byte rounds up to 12G + 1: 120G − 42G − (12G + 1) − 33G = 33G − 1.
			input: func(in *Input) {
				in.NodeMetric.Status.NodeMetric.SystemUsage.ResourceList[corev1.ResourceMemory] = resource.MustParse("12000000000500m")
			},
			want: func(r *Result) {
				r.Memory.SystemUsed = 12e9 + 1
				r.Batch.Memory = 33e9 - 1
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := baseInput()
			tc.input(&in)
			want := baseResult()
			tc.want(&want)
			got := Calculate(in)
			// The mid tier's own terms, which these inputs move too, are TestCalculateMid's business; mid stays 0
			// here (no prediction, no unallocated share).
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Terms{}, "NodeUnused", "Unallocated")); diff != "" {
				t.Errorf("Calculate() (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestCalculateDegrade covers when the batch and mid resources are removed.
func TestCalculateDegrade(t *testing.T) {
	// reset is the result when both tiers are removed: only the inputs that need no metric are known.
	reset := func(reason ResetReason, message string, degradeAt time.Time) Result {
		r := baseResult()
		r.Batch = Tier{Reset: reason, Message: message}
		r.Mid = Tier{Reset: reason, Message: message}
		r.UsageKnown, r.MidPredicted = false, false
		r.CPU.SystemUsed, r.CPU.HPRequest, r.CPU.HPUsed, r.CPU.HPMaxUsedReq = 0, 0, 0, 0
		r.Memory.SystemUsed, r.Memory.HPRequest, r.Memory.HPUsed, r.Memory.HPMaxUsedReq = 0, 0, 0, 0
		r.CPU.NodeUnused, r.CPU.Unallocated, r.Memory.NodeUnused, r.Memory.Unallocated = 0, 0, 0, 0
		r.DegradeAt = degradeAt
		return r
	}
	tests := map[string]struct {
		input func(in *Input)
		want  Result
	}{
		"colocation disabled removes the resources": {
			input: func(in *Input) { in.Strategy.Enable = ptr.To(false) },
			want: reset(ResetColocationDisabled, "colocation is disabled (colocation-config enable is false for this node)",
				now.Add(15*time.Minute)),
		},
		"colocation is disabled by default": {
			input: func(in *Input) { in.Strategy.Enable = nil },
			want: reset(ResetColocationDisabled, "colocation is disabled (colocation-config enable is false for this node)",
				now.Add(15*time.Minute)),
		},
		"missing NodeMetric removes the resources": {
			input: func(in *Input) { in.NodeMetric = nil },
			want:  reset(ResetNodeMetricMissing, "the node has no NodeMetric", time.Time{}),
		},
		"NodeMetric without update time removes the resources": {
			input: func(in *Input) { in.NodeMetric.Status.UpdateTime = nil },
			want:  reset(ResetNodeMetricNoUpdateTime, "the NodeMetric has no status.updateTime", time.Time{}),
		},
		"NodeMetric older than degradeTimeMinutes removes the resources": {
			input: func(in *Input) {
				in.NodeMetric.Status.UpdateTime = &metav1.Time{Time: now.Add(-15*time.Minute - time.Second)}
			},
			want: reset(ResetNodeMetricStale,
				"the NodeMetric was last updated at 2026-03-01T11:44:59Z, more than degradeTimeMinutes (15m0s) ago",
				now.Add(-time.Second)),
		},
		"NodeMetric exactly degradeTimeMinutes old is still used": {
			input: func(in *Input) { in.NodeMetric.Status.UpdateTime = &metav1.Time{Time: now.Add(-15 * time.Minute)} },
			want: func() Result {
				r := baseResult()
				r.DegradeAt = now
				return r
			}(),
		},
		"degradeTimeMinutes is configurable": {
			input: func(in *Input) {
				in.Strategy.DegradeTimeMinutes = ptr.To[int64](5)
				in.NodeMetric.Status.UpdateTime = &metav1.Time{Time: now.Add(-6 * time.Minute)}
			},
			want: reset(ResetNodeMetricStale,
				"the NodeMetric was last updated at 2026-03-01T11:54:00Z, more than degradeTimeMinutes (5m0s) ago",
				now.Add(-time.Minute)),
		},
		"NodeMetric without node usage removes the resources": {
			input: func(in *Input) { in.NodeMetric.Status.NodeMetric = nil },
			want:  reset(ResetNodeUsageMissing, "the NodeMetric has no status.nodeMetric", now.Add(15*time.Minute)),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := baseInput()
			tc.input(&in)
			got := Calculate(in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Calculate() (-want,+got):\n%s", diff)
			}
		})
	}
}

// staticResult is baseResult in static mid mode, which needs no prediction: the default-mode terms are not
// computed.
func staticResult() Result {
	r := baseResult()
	r.MidPredicted, r.MidStatic = false, true
	r.CPU.NodeUnused, r.CPU.Unallocated = 0, 0
	r.Memory.NodeUnused, r.Memory.Unallocated = 0, 0
	return r
}

// TestCalculateMid covers the mid formulas. The base adds a prodReclaimableMetric of 30 cores / 40G to
// baseInput; the node usage is 50/55G, so NodeUnused = 50 cores / 65G. Prod requests are podA + podC =
// 40 cores / 60G, so Unallocated = 100 − max(0, 7) − 40 = 53 cores and 120G − max(0, 12G) − 60G = 48G.
func TestCalculateMid(t *testing.T) {
	midInput := func() Input {
		in := baseInput()
		in.NodeMetric.Status.ProdReclaimableMetric = &slov1alpha1.ReclaimableMetric{
			Resource: slov1alpha1.ResourceMap{ResourceList: rl("30", "40G")},
		}
		return in
	}
	midResult := func() Result {
		r := baseResult()
		r.MidPredicted = true
		r.CPU.ProdReclaimable, r.CPU.NodeUnused, r.CPU.Unallocated = 30000, 50000, 53000
		r.Memory.ProdReclaimable, r.Memory.NodeUnused, r.Memory.Unallocated = 40e9, 65e9, 48e9
		r.Mid = Tier{CPU: 30000, Memory: 40e9}
		return r
	}
	tests := map[string]struct {
		input func(in *Input)
		want  func(r *Result)
	}{
		"mid is the prod reclaimable when below the unused": {
			input: func(*Input) {},
			want:  func(*Result) {},
		},
		"mid is the unused when below the prod reclaimable": {
			// reclaimable 80/100G against unused 50/65G.
			input: func(in *Input) {
				in.NodeMetric.Status.ProdReclaimableMetric.Resource.ResourceList = rl("80", "100G")
			},
			want: func(r *Result) {
				r.CPU.ProdReclaimable, r.Memory.ProdReclaimable = 80000, 100e9
				r.Mid = Tier{CPU: 50000, Memory: 65e9}
			},
		},
		"unallocated percent adds a share of the unallocated resources": {
			// 50%: 30 + 53 × 50% = 56.5 cores; 40G + 48G × 50% = 64G.
			input: func(in *Input) { in.Strategy.MidUnallocatedPercent = ptr.To[int64](50) },
			want: func(r *Result) {
				r.CPU.MidUnallocatedPercent, r.Memory.MidUnallocatedPercent = 50, 50
				r.Mid = Tier{CPU: 56500, Memory: 64e9}
			},
		},
		"mid threshold percent caps the total": {
			// caps 100 × 40% = 40 cores and 120G × 50% = 60G: min(56.5, 40) = 40, min(64G, 60G) = 60G.
			input: func(in *Input) {
				in.Strategy.MidUnallocatedPercent = ptr.To[int64](50)
				in.Strategy.MidCPUThresholdPercent = ptr.To[int64](40)
				in.Strategy.MidMemoryThresholdPercent = ptr.To[int64](50)
			},
			want: func(r *Result) {
				r.CPU.MidThresholdCap, r.Memory.MidThresholdCap = 40000, 60e9
				r.CPU.MidUnallocatedPercent, r.Memory.MidUnallocatedPercent = 50, 50
				r.Mid = Tier{CPU: 40000, Memory: 60e9}
			},
		},
		"invalid node usage means nothing is unused": {
			// node usage without memory: NodeUnused = 0 → mid = 0 (unallocated percent 0).
			input: func(in *Input) {
				in.NodeMetric.Status.NodeMetric.NodeUsage.ResourceList = rl("50", "")
			},
			want: func(r *Result) {
				r.CPU.NodeUnused, r.Memory.NodeUnused = 0, 0
				r.Mid = Tier{}
			},
		},
		"mid and batch pods are not prod requests": {
			// podE koord-mid requests 5/5G: counts as HP for batch but not in Unallocated.
			// batch: HPUsed 38 / 38G → 20 cores, 28G.
			input: func(in *Input) {
				pod := testPod("podE", extension.QoSLS, corev1.PodRunning, rl("5", "5G"))
				pod.Labels[extension.LabelPodPriorityClass] = string(extension.PriorityMid)
				in.Pods = append(in.Pods, pod)
			},
			want: func(r *Result) {
				r.CPU.HPRequest, r.CPU.HPUsed, r.CPU.HPMaxUsedReq = 45000, 38000, 47000
				r.Memory.HPRequest, r.Memory.HPUsed, r.Memory.HPMaxUsedReq = 65e9, 38e9, 65e9
				r.Batch = Tier{CPU: 20000, Memory: 28e9}
			},
		},
		"prod host applications reduce the unallocated resources": {
			// prod 10/10G, mid 5/5G. Mid: system 7 + 10 = 17 cores, 12G + 10G = 22G →
			// Unallocated 100 − 17 − 40 = 43 cores, 120G − 22G − 60G = 38G; at 100%: 30 + 43 = 73, 40G + 38G = 78G.
			// Batch: system 7 + 15 = 22 cores, 12G + 15G = 27G → 100 − 35 − 22 − 33 = 10, 120G − 42G − 27G − 33G = 18G.
			input: func(in *Input) {
				in.Strategy.MidUnallocatedPercent = ptr.To[int64](100)
				in.NodeMetric.Status.HostApplicationMetric = []slov1alpha1.HostApplicationMetricInfo{
					{Name: "prod", Priority: string(extension.PriorityProd), Usage: slov1alpha1.ResourceMap{ResourceList: rl("10", "10G")}},
					{Name: "mid", Priority: string(extension.PriorityMid), Usage: slov1alpha1.ResourceMap{ResourceList: rl("5", "5G")}},
				}
			},
			want: func(r *Result) {
				r.CPU.SystemUsed, r.Memory.SystemUsed = 22000, 27e9
				r.Batch = Tier{CPU: 10000, Memory: 18e9}
				r.CPU.Unallocated, r.Memory.Unallocated = 43000, 38e9
				r.CPU.MidUnallocatedPercent, r.Memory.MidUnallocatedPercent = 100, 100
				r.Mid = Tier{CPU: 73000, Memory: 78e9}
			},
		},
		"an empty prod reclaimable counts as none reclaimable; the unallocated share is still offered": {
			// koordlet reports an empty prodReclaimableMetric until it has a prediction. 50%: 0 + 53 × 50% =
			// 26.5 cores; 0 + 48G × 50% = 24G.
			input: func(in *Input) {
				in.NodeMetric.Status.ProdReclaimableMetric = &slov1alpha1.ReclaimableMetric{}
				in.Strategy.MidUnallocatedPercent = ptr.To[int64](50)
			},
			want: func(r *Result) {
				r.CPU.ProdReclaimable, r.Memory.ProdReclaimable = 0, 0
				r.CPU.MidUnallocatedPercent, r.Memory.MidUnallocatedPercent = 50, 50
				r.Mid = Tier{CPU: 26500, Memory: 24e9}
			},
		},
		"a missing prod reclaimable counts as none reclaimable too, as in Koordinator": {
			// Koordinator's midresource plugin does not degrade on it. 50%: 26.5 cores and 24G, as above.
			input: func(in *Input) {
				in.NodeMetric.Status.ProdReclaimableMetric = nil
				in.Strategy.MidUnallocatedPercent = ptr.To[int64](50)
			},
			want: func(r *Result) {
				r.CPU.ProdReclaimable, r.Memory.ProdReclaimable = 0, 0
				r.CPU.MidUnallocatedPercent, r.Memory.MidUnallocatedPercent = 50, 50
				r.Mid = Tier{CPU: 26500, Memory: 24e9}
			},
		},
		"static mode reserves a share of the capacity": {
			// 20% of 100 = 20 cores; 30% of 120G = 36G. No prediction needed.
			input: func(in *Input) {
				in.NodeMetric.Status.ProdReclaimableMetric = nil
				in.Strategy.MidReclaimMode = ptr.To(configuration.MidReclaimModeStatic)
				in.Strategy.MidStaticCPUReservedPercent = ptr.To[int64](20)
				in.Strategy.MidStaticMemoryReservedPercent = ptr.To[int64](30)
			},
			want: func(r *Result) {
				*r = staticResult()
				r.CPU.MidStaticPercent, r.Memory.MidStaticPercent = 20, 30
				r.Mid = Tier{CPU: 20000, Memory: 36e9}
			},
		},
		"static mode is capped by the mid threshold percent": {
			// min(20% of 100, 10% of 100) = 10 cores; min(30% of 120G, 10% of 120G) = 12G.
			input: func(in *Input) {
				in.Strategy.MidReclaimMode = ptr.To(configuration.MidReclaimModeStatic)
				in.Strategy.MidStaticCPUReservedPercent = ptr.To[int64](20)
				in.Strategy.MidStaticMemoryReservedPercent = ptr.To[int64](30)
				in.Strategy.MidCPUThresholdPercent = ptr.To[int64](10)
				in.Strategy.MidMemoryThresholdPercent = ptr.To[int64](10)
			},
			want: func(r *Result) {
				*r = staticResult()
				r.CPU.MidStaticPercent, r.Memory.MidStaticPercent = 20, 30
				r.CPU.MidThresholdCap, r.Memory.MidThresholdCap = 10000, 12e9
				r.Mid = Tier{CPU: 10000, Memory: 12e9}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := midInput()
			tc.input(&in)
			want := midResult()
			tc.want(&want)
			got := Calculate(in)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Calculate() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	container := func(cpu, memory string) corev1.Container {
		return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl(cpu, memory)}}
	}
	sidecar := func(cpu, memory string) corev1.Container {
		c := container(cpu, memory)
		c.RestartPolicy = always
		return c
	}
	tests := map[string]struct {
		spec       corev1.PodSpec
		wantCPU    int64
		wantMemory int64
	}{
		"containers are summed": {
			spec:    corev1.PodSpec{Containers: []corev1.Container{container("1", "1Gi"), container("500m", "1Gi")}},
			wantCPU: 1500, wantMemory: 2 << 30,
		},
		"a larger init container wins": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("4", "1Gi")},
				Containers:     []corev1.Container{container("1", "2Gi")},
			},
			wantCPU: 4000, wantMemory: 2 << 30,
		},
		"sidecars add to the containers and to later init containers": {
			// sum = 1 + 1 = 2 cores; init after the sidecar: 3 + 1 = 4 cores. memory: 1 + 1 = 2Gi vs 1 + 1 = 2Gi.
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{sidecar("1", "1Gi"), container("3", "1Gi")},
				Containers:     []corev1.Container{container("1", "1Gi")},
			},
			wantCPU: 4000, wantMemory: 2 << 30,
		},
		"overhead is added": {
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container("1", "1Gi")},
				Overhead:   rl("250m", "128Mi"),
			},
			wantCPU: 1250, wantMemory: 1<<30 + 128<<20,
		},
		"pod-level requests replace the containers": {
			spec: corev1.PodSpec{
				Resources:  &corev1.ResourceRequirements{Requests: rl("2", "")},
				Containers: []corev1.Container{container("1", "1Gi")},
				Overhead:   rl("100m", ""),
			},
			wantCPU: 2100, wantMemory: 1 << 30,
		},
		"fractional milli-cores are rounded up": {
			spec:    corev1.PodSpec{Containers: []corev1.Container{container("0.0001", "")}},
			wantCPU: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cpu, memory := podRequests(&corev1.Pod{Spec: tc.spec})
			if diff := cmp.Diff([2]int64{tc.wantCPU, tc.wantMemory}, [2]int64{cpu, memory}); diff != "" {
				t.Errorf("podRequests() [cpu, memory] (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestCalculateToleratesEmptyInput(t *testing.T) {
	tests := map[string]struct {
		input Input
		want  Result
	}{
		"nothing at all": {
			input: Input{},
			want: Result{
				Batch:        Tier{Reset: ResetColocationDisabled, Message: "colocation is disabled (colocation-config enable is false for this node)"},
				Mid:          Tier{Reset: ResetColocationDisabled, Message: "colocation is disabled (colocation-config enable is false for this node)"},
				CPU:          Terms{ReclaimPercent: 60},
				Memory:       Terms{ReclaimPercent: 65},
				CPUPolicy:    configuration.CalculateByPodUsage,
				MemoryPolicy: configuration.CalculateByPodUsage,
			},
		},
		"enabled with an empty NodeMetric and nil pods": {
			input: Input{
				Node:       &corev1.Node{},
				NodeMetric: &slov1alpha1.NodeMetric{Status: slov1alpha1.NodeMetricStatus{UpdateTime: &metav1.Time{Time: now}, NodeMetric: &slov1alpha1.NodeMetricInfo{}}},
				Pods:       []*corev1.Pod{nil},
				Strategy:   &configuration.ColocationStrategy{Enable: ptr.To(true)},
				Now:        now,
			},
			want: Result{
				MidPredicted: true,
				CPU:          Terms{ReclaimPercent: 60},
				Memory:       Terms{ReclaimPercent: 65},
				CPUPolicy:    configuration.CalculateByPodUsage,
				MemoryPolicy: configuration.CalculateByPodUsage,
				UsageKnown:   true,
				DegradeAt:    now.Add(15 * time.Minute),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Calculate(tc.input)); diff != "" {
				t.Errorf("Calculate() (-want,+got):\n%s", diff)
			}
		})
	}
}
