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

package cpuevict

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

var thresholds = Thresholds{Lower: 60, Upper: 80, Usage: 90}

func TestRelease(t *testing.T) {
	tests := map[string]struct {
		s    Sample
		want float64
	}{
		// satisfaction 3/10 = 30% < 60%, usage 2.9/3 = 96.7% ≥ 90%: 10 × (80% − 30%).
		"starved and busy":  {s: Sample{Usage: 2.9, Request: 10, Limit: 3}, want: 5},
		"starved but idle":  {s: Sample{Usage: 2.5, Request: 10, Limit: 3}},
		"satisfied enough":  {s: Sample{Usage: 7, Request: 10, Limit: 6}},
		"just below lower":  {s: Sample{Usage: 5.9, Request: 10, Limit: 5.9}, want: 2.1},
		"nothing requested": {s: Sample{Usage: 1, Limit: 1}},
		// No CPU at all: satisfaction 0, counts as fully used.
		"zero limit": {s: Sample{Request: 10}, want: 8},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Release(tc.s, thresholds); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Release = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestToReleaseAndAverage(t *testing.T) {
	a := Average([]Sample{{Usage: 2.8, Request: 10, Limit: 3}, {Usage: 3, Request: 10, Limit: 3}, {Usage: 3.8, Request: 10, Limit: 4}})
	if math.Abs(a.Usage-3.2) > 1e-9 || a.Request != 10 || math.Abs(a.Limit-10.0/3) > 1e-9 {
		t.Errorf("Average = %+v", a)
	}
	tests := map[string]struct {
		avg, cur Sample
		want     float64
	}{
		"the smaller":          {avg: Sample{Usage: 2.9, Request: 10, Limit: 3}, cur: Sample{Usage: 3.9, Request: 10, Limit: 4}, want: 4},
		"a dip does nothing":   {avg: Sample{Usage: 2.9, Request: 10, Limit: 3}, cur: Sample{Usage: 1, Request: 10, Limit: 3}},
		"a spike does nothing": {avg: Sample{Usage: 6, Request: 10, Limit: 6}, cur: Sample{Usage: 2.9, Request: 10, Limit: 3}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ToRelease(tc.avg, tc.cur, thresholds); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("ToRelease = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestThresholdsValidate(t *testing.T) {
	for _, tc := range []struct {
		t       Thresholds
		wantErr bool
	}{
		{t: thresholds},
		{t: Thresholds{Lower: 70, Upper: 80}, wantErr: true},
		{t: Thresholds{Lower: 50, Upper: 50}, wantErr: true},
	} {
		if err := tc.t.Validate(); (err != nil) != tc.wantErr {
			t.Errorf("%+v.Validate() = %v, wantErr %v", tc.t, err, tc.wantErr)
		}
	}
}

func TestSortCandidates(t *testing.T) {
	c := func(name string, ep int32, priority int32, req, usage float64) Candidate {
		return Candidate{Pod: qostest.Pod(name), EvictionPriority: ep, Priority: priority, Request: req, Usage: usage}
	}
	in := []Candidate{
		c("calm", 0, 5000, 4, 1),
		c("high", 0, 5500, 1, 1),
		c("hungry", 0, 5000, 4, 3),
		c("first", -1, 5999, 1, 0),
		c("last", 1, 5000, 4, 4),
		c("no-request", 0, 5000, 0, 1),
	}
	SortCandidates(in)
	var got []string
	for _, x := range in {
		got = append(got, x.Pod.Name)
	}
	// Eviction priority -1 goes before the unannotated pods (0), 1 after them; among the 0s priority 5000 before
	// 5500, and usage / request 0.75 (hungry) before 0.25 (calm) before no request.
	if diff := cmp.Diff([]string{"first", "hungry", "calm", "no-request", "high", "last"}, got); diff != "" {
		t.Errorf("order (-want,+got):\n%s", diff)
	}
}

// env is a node whose besteffort cgroup has CPUs 0-2 and BE pods a, b (4 cores requested each, priority 5000)
// and c (2 cores, priority 5500) using 2.9 cores in all.
type env struct {
	fs    *cgrouptest.FS
	cg    *cgroup.Manager
	cache *metriccache.Cache
	node  *corev1.Node
	pods  []*corev1.Pod
	ev    *qostest.Evictor
	s     *Strategy
	now   time.Time
}

func newEnv(t *testing.T, v cgroup.Version) *env {
	t.Helper()
	fs := cgrouptest.NewFS(t, v, cgroup.Cgroupfs)
	fs.WriteFile(fs.Layout().QoSDir(corev1.PodQOSBestEffort), "cpuset.cpus", "0-2")
	e := &env{fs: fs, cg: cgroup.NewManager(fs.Layout()), cache: qostest.Cache(), node: qostest.Node("8", "16Gi"), ev: &qostest.Evictor{}, now: qostest.Now}
	be := func(name, request string, priority int32) *corev1.Pod {
		return qostest.Pod(name, qostest.QoS(extension.QoSBE), qostest.Priority(priority),
			qostest.Container("c", "containerd://"+name, qostest.Resources("kubernetes.io/batch-cpu", request), nil))
	}
	e.pods = []*corev1.Pod{be("a", "4000", 5000), be("b", "4000", 5000), be("c", "2000", 5500), qostest.Pod("ls", qostest.QoS(extension.QoSLS))}
	e.s = New(e.cg, e.ev)
	return e
}

func (e *env) round(t *testing.T, cfg *slov1alpha1.ResourceThresholdStrategy) error {
	t.Helper()
	for name, u := range map[string]float64{"a": 1, "b": 1.5, "c": 0.4, "ls": 3} {
		e.cache.Append(qosmanager.PodKey(qostest.UID(name), corev1.ResourceCPU), e.now, u)
	}
	_, ctx := ktesting.NewTestContext(t)
	st := qostest.State(e.node, qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: cfg}), e.cache, e.pods...)
	st.Now = e.now
	err := e.s.Run(ctx, st)
	e.now = e.now.Add(time.Second)
	return err
}

func satisfaction(window int64) *slov1alpha1.ResourceThresholdStrategy {
	return &slov1alpha1.ResourceThresholdStrategy{
		Enable:                             ptr.To(true),
		CPUEvictBESatisfactionLowerPercent: ptr.To[int64](60),
		CPUEvictBESatisfactionUpperPercent: ptr.To[int64](80),
		CPUEvictTimeWindowSeconds:          ptr.To(window),
	}
}

func TestEvictsForSatisfaction(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			e := newEnv(t, v)
			// A 5 s window needs 2 rounds (a third of it) before anything happens.
			if err := e.round(t, satisfaction(5)); err != nil {
				t.Fatal(err)
			}
			if got := e.ev.Calls(); len(got) != 0 {
				t.Fatalf("evictions after one sample: %v", got)
			}
			if err := e.round(t, satisfaction(5)); err != nil {
				t.Fatal(err)
			}
			// limit 3 / request 10 = 30%, usage 2.9 / 3: release 10 × (80% − 30%) = 5 cores; b (ratio 0.375)
			// then a (0.25) at priority 5000.
			msg := "BE CPU satisfaction 30%% (limit 3000m / request 10000m) < 60%% while BE pods use 96.7%% of the limit >= 90%%, " +
				"releasing %s batch-cpu to reach 80%%; pod request 4000m"
			want := []qostest.Eviction{
				{Pod: "default/b", Reason: Reason, Message: fmt.Sprintf(msg, "5000m")},
				{Pod: "default/a", Reason: Reason, Message: fmt.Sprintf(msg, "1000m")},
			}
			if diff := cmp.Diff(want, e.ev.Calls()); diff != "" {
				t.Errorf("evictions (-want,+got):\n%s", diff)
			}
			// 20 s of cool-down.
			for range 19 {
				if err := e.round(t, satisfaction(5)); err != nil {
					t.Fatal(err)
				}
			}
			if got := e.ev.Calls(); len(got) != 0 {
				t.Errorf("evictions during the cool-down: %v", got)
			}
			if err := e.round(t, satisfaction(5)); err != nil {
				t.Fatal(err)
			}
			if got := e.ev.Calls(); len(got) != 2 {
				t.Errorf("evictions after the cool-down = %v, want 2 (the pods were not deleted from the fixture)", got)
			}
		})
	}
}

func TestLimitFromQuotaAndAllocatable(t *testing.T) {
	e := newEnv(t, cgroup.V1)
	// cpusuppress set the quota to 2 cores, fewer than the 3 CPUs: satisfaction 20%, usage 2.9/2 ≥ 90%.
	e.fs.WriteFile(e.fs.Layout().QoSDir(corev1.PodQOSBestEffort), "cpu.cfs_quota_us", "200000")
	if err := e.round(t, satisfaction(1)); err != nil {
		t.Fatal(err)
	}
	calls := e.ev.Calls()
	if len(calls) == 0 || !strings.Contains(calls[0].Message, "satisfaction 20% (limit 2000m / request 10000m)") ||
		!strings.Contains(calls[0].Message, "releasing 6000m") {
		t.Errorf("evictions with a 2-core quota = %v", calls)
	}

	e = newEnv(t, cgroup.V1)
	e.node.Status.Allocatable[extension.BatchCPU] = resource.MustParse("5000")
	byAllocatable := satisfaction(1)
	byAllocatable.CPUEvictPolicy = slov1alpha1.EvictByAllocatablePolicy
	// 5 / 10 = 50% < 60%, but usage 2.9 / 5 = 58% < 90%: nothing.
	if err := e.round(t, byAllocatable); err != nil {
		t.Fatal(err)
	}
	if got := e.ev.Calls(); len(got) != 0 {
		t.Errorf("evictions by allocatable with low usage: %v", got)
	}
}

func TestNotConfiguredOrInvalid(t *testing.T) {
	e := newEnv(t, cgroup.V1)
	if err := e.round(t, &slov1alpha1.ResourceThresholdStrategy{Enable: ptr.To(true)}); err != nil {
		t.Fatal(err)
	}
	if got := e.ev.Calls(); len(got) != 0 {
		t.Errorf("evictions without satisfaction percents: %v", got)
	}
	bad := satisfaction(1)
	bad.CPUEvictBESatisfactionLowerPercent = ptr.To[int64](70)
	bad.CPUEvictBESatisfactionUpperPercent = ptr.To[int64](90)
	err := e.round(t, bad)
	if err == nil || !strings.Contains(err.Error(), "cpuEvictBESatisfactionLowerPercent 70 is above 60") {
		t.Errorf("Run with lower 70 = %v, want an error", err)
	}
	if got := e.ev.Calls(); len(got) != 0 {
		t.Errorf("evictions with an invalid lower percent: %v", got)
	}
}

func TestSamplesStayBounded(t *testing.T) {
	e := newEnv(t, cgroup.V1)
	cfg := satisfaction(10)
	cfg.CPUEvictBEUsageThresholdPercent = ptr.To[int64](100) // never evict
	for range 50 {
		if err := e.round(t, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(e.s.samples); got != 10 {
		t.Errorf("samples kept for a 10 s window at 1 s = %d, want 10", got)
	}
}

// TestCPUEvictByPriority: CPUEvict evicts pods labelled eviction-enabled up to evictEnabledPriorityThreshold,
// largest CPU users first, when the node's CPU usage averaged over the window reaches the threshold.
func TestCPUEvictByPriority(t *testing.T) {
	e := newEnv(t, cgroup.V1)
	enabled := qostest.Label(extension.LabelPodEvictEnabled, "true")
	e.pods = []*corev1.Pod{
		qostest.Pod("web", qostest.QoS(extension.QoSLS), qostest.Priority(9500), enabled),
		qostest.Pod("mid", qostest.QoS(extension.QoSLS), qostest.Priority(7000), enabled),
		qostest.Pod("a", qostest.QoS(extension.QoSBE), qostest.Priority(5000), enabled),
		qostest.Pod("b", qostest.QoS(extension.QoSBE), qostest.Priority(5000), enabled),
	}
	e.s = New(e.cg, e.ev, WithGates(Gates{CPUEvict: true}))
	cfg := &slov1alpha1.ResourceThresholdStrategy{
		Enable: ptr.To(true), CPUEvictThresholdPercent: ptr.To[int64](80), EvictEnabledPriorityThreshold: ptr.To[int32](7999),
		CPUEvictTimeWindowSeconds: ptr.To[int64](3),
	}
	// The node (8 cores) used 6, 7 and 8 cores in the last 3 s: 7 on average, 87.5% >= 80%. Release down to 78%:
	// 7 − 8 × 0.78 = 0.76 cores. Pod usage (newest samples): web 3, mid 2, a 0.5, b 0.4.
	for i, u := range []float64{6, 7, 8} {
		e.cache.Append(qosmanager.NodeKey(corev1.ResourceCPU), e.now.Add(time.Duration(i-2)*time.Second), u)
	}
	for name, u := range map[string]float64{"web": 3, "mid": 2, "a": 0.5, "b": 0.4} {
		e.cache.Append(qosmanager.PodKey(qostest.UID(name), corev1.ResourceCPU), e.now, u)
	}
	_, ctx := ktesting.NewTestContext(t)
	st := qostest.State(e.node, qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: cfg}), e.cache, e.pods...)
	st.Now = e.now
	if err := e.s.Run(ctx, st); err != nil {
		t.Fatal(err)
	}
	// a (priority 5000, 0.5 cores) then b (0.4): 0.9 >= 0.76. mid and web are not needed (web is above the
	// priority threshold anyway).
	want := []qostest.Eviction{
		{Pod: "default/a", Reason: ReasonNodeUsage,
			Message: "node CPU usage 87.5% (average over 3s) >= threshold 80%, releasing 760m to reach 78%; pod CPU usage 500m, priority 5000 <= 7999"},
		{Pod: "default/b", Reason: ReasonNodeUsage,
			Message: "node CPU usage 87.5% (average over 3s) >= threshold 80%, releasing 260m to reach 78%; pod CPU usage 400m, priority 5000 <= 7999"},
	}
	if diff := cmp.Diff(want, e.ev.Calls()); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}

	// A threshold without evictEnabledPriorityThreshold is an error naming the field.
	cfg.EvictEnabledPriorityThreshold = nil
	e.s = New(e.cg, e.ev, WithGates(Gates{CPUEvict: true}))
	if err := e.s.Run(ctx, st); err == nil || !strings.Contains(err.Error(), "evictEnabledPriorityThreshold") {
		t.Errorf("Run = %v, want an error naming evictEnabledPriorityThreshold", err)
	}
}

// TestCPUAllocatableEvict: mid pods requesting more mid-cpu than the node offers are evicted down to the lower
// percent, largest request first.
func TestCPUAllocatableEvict(t *testing.T) {
	e := newEnv(t, cgroup.V1)
	enabled := qostest.Label(extension.LabelPodEvictEnabled, "true")
	mid := func(name, request string) *corev1.Pod {
		return qostest.Pod(name, qostest.QoS(extension.QoSLS), qostest.Priority(7100), enabled,
			qostest.Container("c", "", qostest.Resources("kubernetes.io/mid-cpu", request), nil))
	}
	e.pods = []*corev1.Pod{mid("m1", "1000"), mid("m3", "3000"), mid("m2", "2000")}
	e.node.Status.Allocatable[extension.MidCPU] = resource.MustParse("4000")
	e.s = New(e.cg, e.ev, WithGates(Gates{CPUAllocatableEvict: true}))
	cfg := &slov1alpha1.ResourceThresholdStrategy{
		Enable: ptr.To(true), CPUAllocatableEvictThresholdPercent: ptr.To[int64](120), CPUAllocatableEvictLowerPercent: ptr.To[int64](90),
		AllocatableEvictPriorityThreshold: ptr.To[int32](7999),
	}
	if err := e.round(t, cfg); err != nil {
		t.Fatal(err)
	}
	// 6000 of 4000 = 150% > 120%: release 6000 − 4000 × 0.9 = 2400: m3 (3000) alone.
	want := []qostest.Eviction{{Pod: "default/m3", Reason: ReasonAllocatable,
		Message: "kubernetes.io/mid-cpu requests 6000m (150% of allocatable 4000m) > threshold 120%, releasing 2400m to reach 90%; pod request 3000m, priority 7100 <= 7999"}}
	if diff := cmp.Diff(want, e.ev.Calls()); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}
}

func TestGatesReasons(t *testing.T) {
	tests := map[string]struct {
		gates Gates
		want  []string
	}{
		"none":    {},
		"BE only": {gates: Gates{BECPUEvict: true}, want: []string{Reason}},
		"all":     {gates: Gates{BECPUEvict: true, CPUEvict: true, CPUAllocatableEvict: true}, want: []string{Reason, ReasonNodeUsage, ReasonAllocatable}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.gates.Reasons()); diff != "" {
				t.Errorf("Reasons (-want,+got):\n%s", diff)
			}
		})
	}
}
