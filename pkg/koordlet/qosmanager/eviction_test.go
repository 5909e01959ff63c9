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

package qosmanager_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

func TestRunEvictions(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pod := func(name string) *corev1.Pod { return qostest.Pod(name) }
	a, b, c, d, gone := pod("a"), pod("b"), pod("c"), pod("d"), pod("gone")
	amounts := map[string]float64{"a": 3, "b": 2, "c": 4, "d": 0, "gone": 1}
	release := func(p *corev1.Pod) float64 { return amounts[p.Name] }
	message := func(p *corev1.Pod, left float64) string { return fmt.Sprintf("%s left %g", p.Name, left) }
	ev := &qostest.Evictor{Refuse: func(p *corev1.Pod) (bool, error) {
		if p.Name == "c" {
			return false, errors.New("apiserver unavailable")
		}
		return false, nil
	}}
	tasks := []qosmanager.EvictionTask{
		// Needs 4: "gone" (pending) counts 1, d releases nothing and is passed over, c fails, a brings 4.
		{Feature: "First", Reason: "R1", Need: 4, Candidates: []*corev1.Pod{d, c, a, b}, Pending: []*corev1.Pod{gone}, Release: release, Message: message},
		// Needs 5: a, evicted by the first task, counts 3; b brings 5. a is not evicted twice.
		{Feature: "Second", Reason: "R2", Need: 5, Candidates: []*corev1.Pod{a, b, c}, Release: release, Message: message},
		// Already covered by a and b.
		{Feature: "Third", Reason: "R3", Need: 5, Candidates: []*corev1.Pod{c}, Release: release, Message: message},
	}
	results, err := qosmanager.RunEvictions(ctx, ev, tasks)
	if err == nil || !strings.Contains(err.Error(), "apiserver unavailable") {
		t.Errorf("RunEvictions error = %v, want the eviction error", err)
	}
	wantCalls := []qostest.Eviction{
		{Pod: "default/c", Reason: "R1", Message: "c left 3"},
		{Pod: "default/a", Reason: "R1", Message: "a left 3"},
		{Pod: "default/b", Reason: "R2", Message: "b left 2"},
	}
	if diff := cmp.Diff(wantCalls, ev.Calls()); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}
	wantResults := []qosmanager.EvictionResult{
		{Feature: "First", Need: 4, Released: 4, Evicted: 1, Candidates: 4},
		{Feature: "Second", Need: 5, Released: 5, Evicted: 1, Candidates: 3},
		{Feature: "Third", Need: 5, Released: 5, Candidates: 1},
	}
	if diff := cmp.Diff(wantResults, results); diff != "" {
		t.Errorf("results (-want,+got):\n%s", diff)
	}
}

func TestEvictionPolicyAllows(t *testing.T) {
	tests := map[string]struct {
		value   *string
		feature string
		want    bool
		wantErr bool
	}{
		"no annotation: every feature":  {feature: "BEMemoryEvict", want: true},
		"listed":                        {value: ptr.To(`["BEMemoryEvict","CPUEvict"]`), feature: "CPUEvict", want: true},
		"not listed":                    {value: ptr.To(`["CPUEvict"]`), feature: "BEMemoryEvict"},
		"empty list: none":              {value: ptr.To(`[]`), feature: "MemoryEvict"},
		"not JSON: none, with an error": {value: ptr.To(`BEMemoryEvict`), feature: "BEMemoryEvict", wantErr: true},
		"names are case-sensitive":      {value: ptr.To(`["bememoryevict"]`), feature: "BEMemoryEvict"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := qostest.Pod("p")
			if tc.value != nil {
				pod.Annotations = map[string]string{extension.AnnotationPodEvictPolicy: *tc.value}
			}
			got, err := qosmanager.EvictionPolicyAllows(pod, tc.feature)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("EvictionPolicyAllows = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestPodPriority(t *testing.T) {
	tests := map[string]struct {
		pod  *corev1.Pod
		want int32
	}{
		"spec.priority":                          {pod: qostest.Pod("p", qostest.Priority(5100)), want: 5100},
		"priority 0 takes the class default":     {pod: qostest.Pod("p", qostest.Priority(0), qostest.Label(extension.LabelPodPriorityClass, "koord-mid")), want: extension.PriorityMidValueDefault},
		"no priority, BE: koord-batch's default": {pod: qostest.Pod("p", qostest.QoS(extension.QoSBE)), want: extension.PriorityBatchValueDefault},
		"no priority, Burstable: koord-prod":     {pod: qostest.Pod("p", qostest.KubeQoS(corev1.PodQOSBurstable)), want: extension.PriorityProdValueDefault},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := qosmanager.PodPriority(tc.pod); got != tc.want {
				t.Errorf("PodPriority = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestNodeLevelFilterAndSort(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	enabled := qostest.Label(extension.LabelPodEvictEnabled, "true")
	pods := []*corev1.Pod{
		qostest.Pod("not-enabled", qostest.Priority(5000)),
		qostest.Pod("too-high", qostest.Priority(7500), enabled),
		qostest.Pod("policy-excludes", qostest.Priority(5000), enabled, qostest.Annotation(extension.AnnotationPodEvictPolicy, `["CPUEvict"]`)),
		qostest.Pod("policy-malformed", qostest.Priority(5000), enabled, qostest.Annotation(extension.AnnotationPodEvictPolicy, `CPUEvict`)),
		qostest.Pod("big", qostest.Priority(5000), enabled),
		qostest.Pod("small", qostest.Priority(5000), enabled),
		qostest.Pod("sub-1", qostest.Priority(5000), enabled, qostest.Label(extension.LabelPodPriority, "1")),
		qostest.Pod("mid", qostest.Priority(7000), enabled),
		qostest.Pod("eviction-priority-minus-5", qostest.Priority(7000), enabled, qostest.Annotation(extension.AnnotationPodEvictionPriority, "-5")),
		qostest.Pod("eviction-priority-3", qostest.Priority(3000), enabled, qostest.Annotation(extension.AnnotationPodEvictionPriority, "3")),
		qostest.Pod("eviction-priority-malformed", qostest.Priority(5000), enabled, qostest.Annotation(extension.AnnotationPodEvictionPriority, "x")),
	}
	amounts := map[string]float64{"big": 8, "small": 1, "sub-1": 9, "eviction-priority-malformed": 2}
	rec := record.NewFakeRecorder(10)
	filter := qosmanager.NodeLevelFilter{Feature: "MemoryEvict", MaxPriority: 7000, Reporter: qosmanager.NewAnnotationReporter(rec)}
	var victims []qosmanager.Victim
	for _, p := range pods {
		if v, ok := filter.Victim(ctx, p, amounts[p.Name]); ok {
			victims = append(victims, v)
		}
	}
	qosmanager.SortVictims(victims)
	var got []string
	for _, p := range qosmanager.VictimPods(victims) {
		got = append(got, p.Name)
	}
	// Eviction priority first (-5, then the 0s, then 3); among the 0s priority 5000 before 7000; among those the
	// koordinator.sh/priority label (1 before the others' 5000) and then the amount, larger first.
	want := []string{"eviction-priority-minus-5", "sub-1", "big", "eviction-priority-malformed", "small", "mid", "eviction-priority-3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("victims (-want,+got):\n%s", diff)
	}
	var events []string
	for len(rec.Events) > 0 {
		events = append(events, <-rec.Events)
	}
	if len(events) != 2 || !strings.Contains(strings.Join(events, "\n"), "koordinator.sh/eviction-policy is ignored") ||
		!strings.Contains(strings.Join(events, "\n"), "koordinator.sh/eviction-priority is ignored") {
		t.Errorf("events = %q, want one for each malformed annotation", events)
	}
}

func TestNewAllocatableThresholds(t *testing.T) {
	tests := map[string]struct {
		threshold, lower *int64
		priority         *int32
		want             *qosmanager.AllocatableThresholds
		wantErr          string
	}{
		"unset: not configured": {},
		"valid": {threshold: ptr.To[int64](110), lower: ptr.To[int64](100), priority: ptr.To[int32](5999),
			want: &qosmanager.AllocatableThresholds{Feature: features.MemoryAllocatableEvict, Threshold: 110, Lower: 100, MaxPriority: 5999}},
		"no lower":           {threshold: ptr.To[int64](110), priority: ptr.To[int32](5999), wantErr: "needs resourceUsedThresholdWithBE.memoryAllocatableEvictLowerPercent"},
		"lower not below":    {threshold: ptr.To[int64](110), lower: ptr.To[int64](110), priority: ptr.To[int32](5999), wantErr: "memoryAllocatableEvictLowerPercent 110 is not below the threshold 110"},
		"no priority":        {threshold: ptr.To[int64](110), lower: ptr.To[int64](100), wantErr: "needs resourceUsedThresholdWithBE.allocatableEvictPriorityThreshold"},
		"prod priority":      {threshold: ptr.To[int64](110), lower: ptr.To[int64](100), priority: ptr.To[int32](9000), wantErr: "allocatableEvictPriorityThreshold 9000 is above 7999"},
		"negative threshold": {threshold: ptr.To[int64](-1), lower: ptr.To[int64](-2), priority: ptr.To[int32](5999), wantErr: "memoryAllocatableEvictThresholdPercent -1 is negative"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := qosmanager.NewAllocatableThresholds(features.MemoryAllocatableEvict, tc.threshold, tc.lower, tc.priority)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestAllocatableTasks(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	enabled := qostest.Label(extension.LabelPodEvictEnabled, "true")
	batch := func(name, cpu string, opts ...qostest.PodOption) *corev1.Pod {
		return qostest.Pod(name, append([]qostest.PodOption{qostest.Priority(5500), qostest.QoS(extension.QoSBE),
			qostest.Container("c", "", qostest.Resources("kubernetes.io/batch-cpu", cpu), nil)}, opts...)...)
	}
	mid := func(name, cpu string, opts ...qostest.PodOption) *corev1.Pod {
		return qostest.Pod(name, append([]qostest.PodOption{qostest.Priority(7500), qostest.QoS(extension.QoSLS),
			qostest.Container("c", "", qostest.Resources("kubernetes.io/mid-cpu", cpu), nil)}, opts...)...)
	}
	node := qostest.Node("32", "64Gi")
	node.Status.Allocatable["kubernetes.io/batch-cpu"] = resource.MustParse("10000")
	node.Status.Allocatable["kubernetes.io/mid-cpu"] = resource.MustParse("4000")
	pods := []*corev1.Pod{
		// batch-cpu requested: 6000 + 4000 + 2000 = 12000 of 10000 allocatable: 120% > 110%; release down to
		// 100%: 12000 − 10000 = 2000 milli-cores.
		batch("b-6", "6000", enabled),
		batch("b-4", "4000", enabled),
		batch("b-2-leaving", "2000", enabled, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: qostest.Now} }),
		// mid-cpu requested: 4000 of 4000: 100%, not above 110%.
		mid("m-4", "4000", enabled),
		// Not counted: a prod pod.
		qostest.Pod("prod", qostest.Priority(9500), qostest.Container("c", "", qostest.Resources("cpu", "8"), nil), enabled),
	}
	st := qostest.State(node, qostest.NodeSLO(slov1alpha1.NodeSLOSpec{}), qostest.Cache(), pods...)
	th := &qosmanager.AllocatableThresholds{Feature: features.CPUAllocatableEvict, Threshold: 110, Lower: 100, MaxPriority: 7999}
	tasks := qosmanager.AllocatableTasks(ctx, st, corev1.ResourceCPU, th, "R", nil)
	if len(tasks) != 1 {
		t.Fatalf("%d tasks, want 1 (batch only)", len(tasks))
	}
	task := tasks[0]
	var candidates, pending []string
	for _, p := range task.Candidates {
		candidates = append(candidates, p.Name)
	}
	for _, p := range task.Pending {
		pending = append(pending, p.Name)
	}
	got := []any{task.Feature, task.Need, candidates, pending, task.Message(pods[0], 2000)}
	want := []any{"CPUAllocatableEvict", 2000.0, []string{"b-6", "b-4"}, []string{"b-2-leaving"},
		"kubernetes.io/batch-cpu requests 12000m (120% of allocatable 10000m) > threshold 110%, releasing 2000m to reach 100%; pod request 6000m, priority 5500 <= 7999"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("task (-want,+got):\n%s", diff)
	}

	// A node offering no batch-cpu at all: every batch request is to be released.
	delete(node.Status.Allocatable, "kubernetes.io/batch-cpu")
	tasks = qosmanager.AllocatableTasks(ctx, st, corev1.ResourceCPU, th, "R", nil)
	if len(tasks) != 1 || tasks[0].Need != 12000 {
		t.Errorf("without batch allocatable: %d tasks, want 1 needing 12000", len(tasks))
	}
	// Not configured: nothing.
	if tasks := qosmanager.AllocatableTasks(ctx, st, corev1.ResourceCPU, nil, "R", nil); tasks != nil {
		t.Errorf("unconfigured: %d tasks", len(tasks))
	}
}

func TestPodRequest(t *testing.T) {
	pod := qostest.Pod("p",
		qostest.Container("a", "", qostest.Resources("kubernetes.io/batch-cpu", "1000", "koordinator.sh/batch-memory", "1Gi", "cpu", "250m"), nil),
		qostest.Container("b", "", qostest.Resources("kubernetes.io/batch-cpu", "500"), nil))
	got := []int64{
		qosmanager.PodRequest(pod, extension.BatchCPU),
		qosmanager.PodRequest(pod, extension.BatchMemory),
		qosmanager.PodRequest(pod, corev1.ResourceCPU),
		qosmanager.PodRequest(pod, extension.MidCPU),
	}
	if diff := cmp.Diff([]int64{1500, 1 << 30, 250, 0}, got); diff != "" {
		t.Errorf("requests (-want,+got):\n%s", diff)
	}
}
