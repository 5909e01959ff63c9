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

package qosmanager

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

func TestStateResourceThreshold(t *testing.T) {
	tests := map[string]struct {
		spec       *slov1alpha1.ResourceThresholdStrategy
		want       *slov1alpha1.ResourceThresholdStrategy
		wantErrSub string
	}{
		"unset takes every default": {
			want: &slov1alpha1.ResourceThresholdStrategy{
				Enable: ptr.To(false), CPUSuppressThresholdPercent: ptr.To[int64](65), CPUSuppressPolicy: slov1alpha1.CPUSetPolicy,
				MemoryEvictThresholdPercent: ptr.To[int64](70), CPUEvictPolicy: slov1alpha1.EvictByRealLimitPolicy,
			},
		},
		"set fields win, unset ones keep the defaults": {
			spec: &slov1alpha1.ResourceThresholdStrategy{
				Enable: ptr.To(true), CPUSuppressThresholdPercent: ptr.To[int64](50), CPUSuppressPolicy: slov1alpha1.CPUCfsQuotaPolicy,
				MemoryEvictLowerPercent: ptr.To[int64](60),
			},
			want: &slov1alpha1.ResourceThresholdStrategy{
				Enable: ptr.To(true), CPUSuppressThresholdPercent: ptr.To[int64](50), CPUSuppressPolicy: slov1alpha1.CPUCfsQuotaPolicy,
				MemoryEvictThresholdPercent: ptr.To[int64](70), MemoryEvictLowerPercent: ptr.To[int64](60),
				CPUEvictPolicy: slov1alpha1.EvictByRealLimitPolicy,
			},
		},
		"a lower percent above the default threshold": {
			spec:       &slov1alpha1.ResourceThresholdStrategy{MemoryEvictLowerPercent: ptr.To[int64](80)},
			wantErrSub: "spec.resourceUsedThresholdWithBE.memoryEvictLowerPercent",
		},
		"a percentage out of range": {
			spec:       &slov1alpha1.ResourceThresholdStrategy{CPUSuppressThresholdPercent: ptr.To[int64](130)},
			wantErrSub: "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &State{NodeSLO: &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
				Spec: slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: tc.spec}}}
			got, err := s.ResourceThreshold()
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) || !strings.Contains(err.Error(), "NodeSLO n1") {
					t.Fatalf("error = %v, want one naming NodeSLO n1 and %s", err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ResourceThreshold (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestStateCPUBurst(t *testing.T) {
	s := &State{NodeSLO: &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: slov1alpha1.NodeSLOSpec{
		CPUBurstStrategy: &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{Policy: slov1alpha1.CPUBurstAuto}},
	}}}
	got, err := s.CPUBurst()
	if err != nil {
		t.Fatal(err)
	}
	want := &slov1alpha1.CPUBurstStrategy{
		CPUBurstConfig: slov1alpha1.CPUBurstConfig{
			Policy: slov1alpha1.CPUBurstAuto, CPUBurstPercent: ptr.To[int64](1000),
			CFSQuotaBurstPercent: ptr.To[int64](300), CFSQuotaBurstPeriodSeconds: ptr.To[int64](-1),
		},
		SharePoolThresholdPercent: ptr.To[int64](50),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CPUBurst (-want,+got):\n%s", diff)
	}

	s.NodeSLO.Spec.CPUBurstStrategy.CFSQuotaBurstPercent = ptr.To[int64](50)
	if _, err := s.CPUBurst(); err == nil || !strings.Contains(err.Error(), "spec.cpuBurstStrategy.cfsQuotaBurstPercent") {
		t.Errorf("CPUBurst with cfsQuotaBurstPercent 50 = %v, want an error naming the field", err)
	}
}

func TestStateLatest(t *testing.T) {
	now := time.Unix(1000, 0)
	cache := metriccache.New(metriccache.Options{})
	cache.Append(NodeKey(corev1.ResourceCPU), now.Add(-2*time.Second), 3.5)
	cache.Append(PodKey("old", corev1.ResourceCPU), now.Add(-6*time.Second), 1)
	tests := map[string]struct {
		key    metriccache.SeriesKey
		maxAge time.Duration
		want   float64
		wantOK bool
	}{
		"fresh":                        {key: NodeKey(corev1.ResourceCPU), want: 3.5, wantOK: true},
		"stale under the default age":  {key: PodKey("old", corev1.ResourceCPU)},
		"fresh under a longer max age": {key: PodKey("old", corev1.ResourceCPU), maxAge: 10 * time.Second, want: 1, wantOK: true},
		"no series":                    {key: PodKey("none", corev1.ResourceCPU)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &State{Metrics: cache, Now: now, MaxSampleAge: tc.maxAge}
			got, ok := s.Latest(tc.key)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Latest = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestNodeReservedCPU(t *testing.T) {
	node := func(capacity, allocatable string, annotation string) *corev1.Node {
		n := &corev1.Node{Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(capacity)},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(allocatable)},
		}}
		if annotation != "" {
			n.Annotations = map[string]string{extension.AnnotationNodeReservation: annotation}
		}
		return n
	}
	tests := map[string]struct {
		node    *corev1.Node
		want    float64
		wantErr bool
	}{
		"kubelet reservation only":           {node: node("16", "15500m", ""), want: 0.5},
		"annotation cpu amount is larger":    {node: node("16", "15500m", `{"resources":{"cpu":"2"}}`), want: 2},
		"annotation reserved CPUs count":     {node: node("16", "15", `{"reservedCPUs":"0-2"}`), want: 3},
		"kubelet reservation is larger":      {node: node("16", "12", `{"resources":{"cpu":"1"}}`), want: 4},
		"malformed annotation keeps kubelet": {node: node("16", "15", `{"reservedCPUs":"x"}`), want: 1, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := NodeReservedCPU(tc.node)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("NodeReservedCPU = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestContainers(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init"}, {Name: "sidecar", RestartPolicy: &always}},
			Containers:     []corev1.Container{{Name: "app"}, {Name: "starting"}, {Name: "done"}},
		},
		Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "init", ContainerID: "containerd://i", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "sidecar", ContainerID: "containerd://s", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", ContainerID: "containerd://a", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "starting"},
				{Name: "done", ContainerID: "containerd://d", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}},
			},
		},
	}
	var got []string
	for _, c := range Containers(pod) {
		got = append(got, c.Spec.Name+"="+c.Status.ContainerID)
	}
	if diff := cmp.Diff([]string{"sidecar=containerd://s", "app=containerd://a"}, got); diff != "" {
		t.Errorf("Containers (-want,+got):\n%s", diff)
	}
}

func TestLastGood(t *testing.T) {
	var l LastGood[int]
	if v, err := l.Update(nil, errors.New("bad")); v != nil || err == nil {
		t.Errorf("Update with nothing kept = %v, %v; want nil and the error", v, err)
	}
	if v, err := l.Update(ptr.To(1), nil); *v != 1 || err != nil {
		t.Errorf("Update(1) = %v, %v", *v, err)
	}
	if v, err := l.Update(ptr.To(2), errors.New("bad")); *v != 1 || err == nil {
		t.Errorf("Update(2, error) = %v, %v; want the last good 1 and the error", *v, err)
	}
}

func TestAnnotationReporter(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	rec := record.NewFakeRecorder(10)
	r := NewAnnotationReporter(rec)
	a := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "ua"}}
	b := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "ub"}}
	key := extension.AnnotationPodCPUBurst
	r.Report(ctx, a, key, errors.New("not JSON"))
	r.Report(ctx, a, key, errors.New("not JSON"))
	r.Report(ctx, b, key, errors.New("not JSON"))
	r.Report(ctx, a, key, errors.New("unknown policy"))
	r.Retain([]*corev1.Pod{b})
	r.Report(ctx, a, key, errors.New("unknown policy"))
	r.Report(ctx, b, key, errors.New("not JSON"))
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	want := []string{
		"Warning InvalidAnnotation annotation koordinator.sh/cpuBurst is ignored: not JSON",
		"Warning InvalidAnnotation annotation koordinator.sh/cpuBurst is ignored: not JSON",
		"Warning InvalidAnnotation annotation koordinator.sh/cpuBurst is ignored: unknown policy",
		"Warning InvalidAnnotation annotation koordinator.sh/cpuBurst is ignored: unknown policy",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
}

func TestFormat(t *testing.T) {
	tests := map[string]struct {
		got, want string
	}{
		"bytes":           {FormatBytes(512), "512B"},
		"mebibytes":       {FormatBytes(800 << 20), "800Mi"},
		"gibibytes":       {FormatBytes(1288490189), "1.2Gi"},
		"negative":        {FormatBytes(-3 << 30), "-3Gi"},
		"percent":         {FormatPercent(82), "82%"},
		"percent decimal": {FormatPercent(82.46), "82.5%"},
		"cores":           {FormatCores(1.5), "1500m"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestEvictionPriority(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    int32
		wantErr bool
	}{
		"absent counts as 0": {},
		"positive":           {value: ptr.To("5"), want: 5},
		"negative":           {value: ptr.To(" -3 "), want: -3},
		"not a number":       {value: ptr.To("low"), wantErr: true},
		"too large":          {value: ptr.To("99999999999"), wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{}
			if tc.value != nil {
				pod.Annotations = map[string]string{extension.AnnotationPodEvictionPriority: *tc.value}
			}
			got, err := EvictionPriority(pod)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}
