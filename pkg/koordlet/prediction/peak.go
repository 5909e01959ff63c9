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
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/koord-dev/koord/apis/extension"
)

// Percentiles of Koordinator's prod reclaimable predictor: the peak of CPU is its p95, of memory its p98.
const (
	cpuPercentile    = 0.95
	memoryPercentile = 0.98
)

// Amounts is a CPU amount in milli-cores and a memory amount in bytes.
type Amounts struct {
	// CPU is in milli-cores.
	CPU int64
	// Memory is in bytes.
	Memory int64
}

func (a *Amounts) add(b Amounts) {
	a.CPU += b.CPU
	a.Memory += b.Memory
}

// List returns a as a resource list of cpu and memory.
func (a Amounts) List() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(a.CPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(a.Memory, resource.BinarySI),
	}
}

// Estimate is one predictor's result.
type Estimate struct {
	// Reclaimable is what the prod pods reserve and are predicted not to use.
	Reclaimable Amounts
	// Peak is the predicted peak usage of the prod pods (and, for the priority predictor, the system).
	Peak Amounts
}

// Prediction is the result of Koordinator's prod reclaimable predictor: its pod and priority predictors, and
// their combination, the smaller reclaimable and the larger peak.
type Prediction struct {
	// Pod sums over the prod pods: each pod's request minus its predicted peak (its p95 CPU and p98 memory plus
	// the safety margin). A pod in its cold start, or without a model yet, reclaims nothing, and its request
	// counts in the peak.
	Pod Estimate
	// Priority takes the prod pods' requests minus the predicted peak of the prod tier taken together plus the
	// system's (the p95 CPU and p98 memory of each, summed, plus the safety margin).
	Priority Estimate
	// Min is the smaller reclaimable and the larger peak of the two: what the NodeMetric reports.
	Min Estimate
}

// ErrNoPrediction is wrapped by the errors of Predict when the models it needs do not exist yet.
var ErrNoPrediction = errors.New("no prediction yet")

// Predict returns the node's prod reclaimable resources and prod peak (the NodeMetric's prodReclaimableMetric
// and prodPeakMetric) for pods at now: the Min of Compute. pods are those the report has usage for; the metrics
// record every predictor.
func (s *Server) Predict(pods []*corev1.Pod, now time.Time) (reclaimable, peak corev1.ResourceList, err error) {
	p, err := s.Compute(s.in.Node(), pods, now)
	if err != nil {
		s.metrics.reports.WithLabelValues(ResultUnavailable).Inc()
		return nil, nil, err
	}
	s.metrics.reports.WithLabelValues(ResultPredicted).Inc()
	for name, e := range map[string]Estimate{PredictorPod: p.Pod, PredictorPriority: p.Priority, PredictorMin: p.Min} {
		s.metrics.reclaimable.WithLabelValues(name, string(corev1.ResourceCPU)).Set(float64(e.Reclaimable.CPU) / 1000)
		s.metrics.reclaimable.WithLabelValues(name, string(corev1.ResourceMemory)).Set(float64(e.Reclaimable.Memory))
		s.metrics.peak.WithLabelValues(name, string(corev1.ResourceCPU)).Set(float64(e.Peak.CPU) / 1000)
		s.metrics.peak.WithLabelValues(name, string(corev1.ResourceMemory)).Set(float64(e.Peak.Memory))
	}
	return p.Min.Reclaimable.List(), p.Min.Peak.List(), nil
}

// Compute computes Koordinator's prod reclaimable prediction for node and pods at now from the models:
//
//	pod:      Peak = Σ peaks of the predicted prod pods + Σ requests of the others (in cold start, without a model)
//	          Reclaimable = min(max(Allocatable − Σ predicted peaks, 0), Σ max(request − peak, 0))
//	priority: Peak = (p95/p98 of the system + p95/p98 of koord-prod + of pods without a class) × (1 + margin%)
//	          Reclaimable = min(max(Allocatable − Peak, 0), max(Σ requests − Peak, 0))
//
// where a pod's peak is its p95 CPU and p98 memory × (1 + margin%), the prod pods are those of class koord-prod
// or none that are not terminating or terminated, and Allocatable is the node's raw allocatable (annotation
// node.koordinator.sh/raw-allocatable) or its status.allocatable. It fails, wrapping ErrNoPrediction, while the
// system or prod tier models do not exist yet.
func (s *Server) Compute(node *corev1.Node, pods []*corev1.Pod, now time.Time) (Prediction, error) {
	if node == nil {
		return Prediction{}, fmt.Errorf("%w: the node is unknown", ErrNoPrediction)
	}
	alloc, err := allocatable(node)
	if err != nil {
		return Prediction{}, err
	}
	ratio := float64(100+s.cfg.SafetyMarginPercent) / 100
	margin := func(a Amounts) Amounts {
		return Amounts{CPU: int64(float64(a.CPU) * ratio), Memory: int64(float64(a.Memory) * ratio)}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var p Prediction
	var reclaim, unreclaim, unpredicted, requests Amounts
	seen := sets.New[string]()
	for _, pod := range pods {
		uid := string(pod.UID)
		if !isProd(extension.GetPodPriorityClassWithDefault(pod)) || seen.Has(uid) {
			continue
		}
		seen.Insert(uid)
		req := podRequests(pod)
		done := pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		if !done {
			requests.add(req)
		}
		// As in Koordinator, the cold start comes first: a young pod counts its request even when terminating.
		if now.Sub(s.podStart(pod)) <= s.cfg.ColdStartDuration {
			unpredicted.add(req)
			continue
		}
		if done {
			continue
		}
		m := s.models[uid]
		if m == nil {
			unpredicted.add(req)
			continue
		}
		peak := margin(m.percentiles())
		unreclaim.add(peak)
		reclaim.add(Amounts{CPU: max(req.CPU-peak.CPU, 0), Memory: max(req.Memory-peak.Memory, 0)})
	}
	p.Pod.Reclaimable = minAmounts(floorSub(alloc, unreclaim), reclaim)
	p.Pod.Peak = unreclaim
	p.Pod.Peak.add(unpredicted)

	var tier Amounts
	for _, item := range []string{SystemItem, string(extension.PriorityProd), string(extension.PriorityNone)} {
		m := s.models[NodeItemUID(item)]
		if m == nil {
			return Prediction{}, fmt.Errorf("%w: no model of node item %q", ErrNoPrediction, item)
		}
		tier.add(m.percentiles())
	}
	p.Priority.Peak = margin(tier)
	p.Priority.Reclaimable = minAmounts(floorSub(alloc, p.Priority.Peak), floorSub(requests, p.Priority.Peak))

	p.Min.Reclaimable = minAmounts(p.Pod.Reclaimable, p.Priority.Reclaimable)
	p.Min.Peak = Amounts{CPU: max(p.Pod.Peak.CPU, p.Priority.Peak.CPU), Memory: max(p.Pod.Peak.Memory, p.Priority.Peak.Memory)}
	return p, nil
}

// percentiles returns the model's p95 CPU in milli-cores and p98 memory in bytes, truncated as Koordinator turns
// them into quantities.
func (m *model) percentiles() Amounts {
	return Amounts{CPU: int64(m.cpu.Percentile(cpuPercentile) * 1000), Memory: int64(m.memory.Percentile(memoryPercentile))}
}

// isProd reports whether the pods of class pc are those the mid tier reclaims from: koord-prod and none.
func isProd(pc extension.PriorityClass) bool {
	return pc == extension.PriorityProd || pc == extension.PriorityNone
}

// podRequests returns the pod's CPU and memory requests as the scheduler counts them.
func podRequests(pod *corev1.Pod) Amounts {
	r := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return Amounts{CPU: r.Cpu().MilliValue(), Memory: r.Memory().Value()}
}

// allocatable returns the node's allocatable CPU and memory: its raw allocatable annotation when it is readable
// (what the node had before Koordinator's amplification), else status.allocatable.
func allocatable(node *corev1.Node) (Amounts, error) {
	if raw, ok := node.Annotations[extension.AnnotationNodeRawAllocatable]; ok {
		var list corev1.ResourceList
		if err := json.Unmarshal([]byte(raw), &list); err == nil && list != nil {
			return Amounts{CPU: list.Cpu().MilliValue(), Memory: list.Memory().Value()}, nil
		}
	}
	if node.Status.Allocatable == nil {
		return Amounts{}, fmt.Errorf("%w: node %s has no status.allocatable", ErrNoPrediction, node.Name)
	}
	return Amounts{CPU: node.Status.Allocatable.Cpu().MilliValue(), Memory: node.Status.Allocatable.Memory().Value()}, nil
}

// floorSub returns a − b per resource, floored at 0.
func floorSub(a, b Amounts) Amounts {
	return Amounts{CPU: max(a.CPU-b.CPU, 0), Memory: max(a.Memory-b.Memory, 0)}
}

// minAmounts returns the smaller amount of each resource.
func minAmounts(a, b Amounts) Amounts {
	return Amounts{CPU: min(a.CPU, b.CPU), Memory: min(a.Memory, b.Memory)}
}
