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

package koordlet

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

// rateTolerance is the relative error allowed on CPU rates the agent derives from pod cgroups, which the fake
// counters advance in counterStep steps (see there): 2 %, the worst case of a single 1 s sample.
const rateTolerance = 0.02

// usage is a CPU (cores) and memory (bytes) pair of a report.
type usage struct {
	CPU    float64
	Memory int64
}

func usageOf(m slov1alpha1.ResourceMap) usage {
	return usage{
		CPU:    float64(m.ResourceList.Cpu().MilliValue()) / 1000,
		Memory: m.ResourceList.Memory().Value(),
	}
}

// podUsage is one entry of status.podsMetric.
type podUsage struct {
	Namespace, Name, Priority, QoS string
	Usage                          usage
}

// TestNodeMetricReporting checks that the agent reports, in NodeMetric.status, the usage the test put in /proc
// and the cgroup files: the node's, the system's (node − Σ pods) and each pod's with its priority and QoS
// class, averaged over aggregateDurationSeconds; aggregated node usages for a window the samples cover and none
// for a window they cannot cover yet; and a newer updateTime with every report.
func TestNodeMetricReporting(t *testing.T) {
	n := newNode(t, nodeConfig{
		version: cgroup.V1, driver: cgroup.Cgroupfs,
		cpus: 4, allocatableCPU: "3800m", memory: 8 * gi,
		busyCores: 2, memUsed: 3 * gi, memUsedWithCache: 4 * gi,
	})
	ls := n.addPod(podConfig{
		name: "ls", qos: extension.QoSLS, priorityClass: extension.PriorityProd,
		requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		cpu:      0.75, memory: 600 * mi, inactiveFile: 100 * mi,
	})
	be := n.addPod(podConfig{
		name: "be", qos: extension.QoSBE, priorityClass: extension.PriorityBatch,
		requests: corev1.ResourceList{extension.BatchCPU: resource.MustParse("500"), extension.BatchMemory: resource.MustParse("256Mi")},
		limits:   corev1.ResourceList{extension.BatchCPU: resource.MustParse("1000"), extension.BatchMemory: resource.MustParse("512Mi")},
		cpu:      0.5, memory: 300 * mi, inactiveFile: 44 * mi,
	})
	if ls.Status.QOSClass != corev1.PodQOSBurstable || be.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("Kubernetes QoS classes are %s and %s, want Burstable and BestEffort", ls.Status.QOSClass, be.Status.QOSClass)
	}
	startAgent(t, koordletConfig(t), n)

	// Wait for the first report whose short window is covered for both resources: the samples then span at
	// least 5 s. Memory is sampled from the first collection round and CPU from the second (the first one
	// primes the counters), and the reporter judges each resource's coverage on its own, so for about one
	// collection interval a report has the window with memory only.
	status := n.waitForReport("no report with the aggregated usage of the short window", func(s *slov1alpha1.NodeMetricStatus) bool {
		for _, a := range s.NodeMetric.AggregatedNodeUsages {
			if a.Duration.Duration == shortWindow {
				_, hasCPU := a.Usage[slov1alpha1.AggregationTypeAVG].ResourceList[corev1.ResourceCPU]
				return hasCPU
			}
		}
		return false
	})

	// The node's numbers come from /proc alone and are exact: memory is MemTotal − MemAvailable, CPU the busy
	// share of the ticks times 4 CPUs. Every sample is the same, so every statistic of the covered window is
	// too, and the 1h window is left out (cold start).
	nodeUsage := usage{CPU: 2, Memory: 3 * gi}
	stats := map[slov1alpha1.AggregationType]usage{}
	for _, a := range []slov1alpha1.AggregationType{slov1alpha1.AggregationTypeAVG, slov1alpha1.AggregationTypeP50,
		slov1alpha1.AggregationTypeP90, slov1alpha1.AggregationTypeP95, slov1alpha1.AggregationTypeP99} {
		stats[a] = nodeUsage
	}
	type nodeReport struct {
		Node       usage
		Aggregated map[time.Duration]map[slov1alpha1.AggregationType]usage
	}
	wantNode := nodeReport{Node: nodeUsage, Aggregated: map[time.Duration]map[slov1alpha1.AggregationType]usage{shortWindow: stats}}
	gotNode := nodeReport{Node: usageOf(status.NodeMetric.NodeUsage), Aggregated: map[time.Duration]map[slov1alpha1.AggregationType]usage{}}
	for _, a := range status.NodeMetric.AggregatedNodeUsages {
		m := map[slov1alpha1.AggregationType]usage{}
		for typ, u := range a.Usage {
			m[typ] = usageOf(u)
		}
		gotNode.Aggregated[a.Duration.Duration] = m
	}
	if diff := cmp.Diff(wantNode, gotNode); diff != "" {
		t.Errorf("node usage (-want,+got):\n%s", diff)
	}

	// Pods: CPU from the cgroups' cpuacct.usage, within rateTolerance; memory the working set, usage −
	// inactive_file, exact. System: node − Σ pods = 2 − 0.75 − 0.5 = 0.75 cores and 3Gi − 500Mi − 256Mi =
	// 2316Mi.
	//
	// A report is taken once it matches. When the loaded test machine stalls the goroutine that advances the
	// fake counters just as the agent samples (stalls of up to 200 ms were measured under -race), the agent reads
	// a stale counter, a fault of the fake that real kernel counters do not have, and the 10 s average of that
	// window is off by up to 2 % per stalled end. Such reports are skipped; the poll fails with the last
	// difference.
	type podsReport struct {
		System usage
		Pods   []podUsage
	}
	want := podsReport{
		System: usage{CPU: 0.75, Memory: 3*gi - 500*mi - 256*mi},
		Pods: []podUsage{
			{Namespace: n.name, Name: "be", Priority: string(extension.PriorityBatch), QoS: string(extension.QoSBE), Usage: usage{CPU: 0.5, Memory: 256 * mi}},
			{Namespace: n.name, Name: "ls", Priority: string(extension.PriorityProd), QoS: string(extension.QoSLS), Usage: usage{CPU: 0.75, Memory: 500 * mi}},
		},
	}
	var lastDiff string
	var lastReport time.Time
	skipped := 0
	err := wait.PollUntilContextTimeout(t.Context(), pollInterval, pollTimeout, true, func(ctx context.Context) (bool, error) {
		nm, err := n.nodeMetric(ctx)
		if err != nil {
			return false, err
		}
		s := nm.Status
		if s.UpdateTime == nil || s.NodeMetric == nil || !s.UpdateTime.After(lastReport) {
			return false, nil
		}
		lastReport = s.UpdateTime.Time
		got := podsReport{System: usageOf(s.NodeMetric.SystemUsage)}
		for _, pm := range s.PodsMetric {
			got.Pods = append(got.Pods, podUsage{Namespace: pm.Namespace, Name: pm.Name, Priority: pm.Priority, QoS: pm.QoS, Usage: usageOf(pm.PodUsage)})
		}
		if lastDiff = cmp.Diff(want, got, cmpopts.EquateApprox(rateTolerance, 0)); lastDiff != "" {
			skipped++
			return false, nil
		}
		t.Logf("Reported system and pod usage after %d reports off by more than %v: %+v", skipped, rateTolerance, got)
		return true, nil
	})
	if err != nil {
		t.Fatalf("no report of the system and pod usage within %v (%d reports); the last one (-want,+got):\n%s", rateTolerance, skipped, lastDiff)
	}

	var systemWindows []time.Duration
	for _, a := range status.NodeMetric.AggregatedSystemUsages {
		systemWindows = append(systemWindows, a.Duration.Duration)
	}
	if diff := cmp.Diff([]time.Duration{shortWindow}, systemWindows); diff != "" {
		t.Errorf("windows of the aggregated system usages (-want,+got):\n%s", diff)
	}

	n.waitForReport("updateTime did not advance", func(s *slov1alpha1.NodeMetricStatus) bool {
		return s.UpdateTime.After(lastReport)
	})
}
