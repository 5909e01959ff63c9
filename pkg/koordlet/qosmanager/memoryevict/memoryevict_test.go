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

package memoryevict

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
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

const gi = int64(1) << 30

func TestNeedRelease(t *testing.T) {
	tests := map[string]struct {
		used, threshold, lower int64
		want                   int64
		wantTrigger            bool
	}{
		"82% of 10000, threshold 70, lower 68": {used: 8200, threshold: 70, lower: 68, want: 1400, wantTrigger: true},
		"exactly at the threshold":             {used: 7000, threshold: 70, lower: 68, want: 200, wantTrigger: true},
		"just below the threshold":             {used: 6999, threshold: 70, lower: 68},
		"a lower bound further down":           {used: 8200, threshold: 70, lower: 60, want: 2200, wantTrigger: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, trigger := NeedRelease(10000, tc.used, tc.threshold, tc.lower)
			if got != tc.want || trigger != tc.wantTrigger {
				t.Errorf("NeedRelease = %d, %v; want %d, %v", got, trigger, tc.want, tc.wantTrigger)
			}
		})
	}
	if _, trigger := NeedRelease(0, 10, 70, 68); trigger {
		t.Errorf("NeedRelease with no capacity triggered")
	}
}

func TestSortCandidates(t *testing.T) {
	c := func(name string, ep int32, priority int32, mem int64) Candidate {
		return Candidate{Pod: qostest.Pod(name), EvictionPriority: ep, Priority: priority, Memory: mem}
	}
	in := []Candidate{
		c("big-low", 0, 5000, 3*gi),
		c("high", 0, 5900, 8*gi),
		c("small-low", 0, 5000, gi),
		c("annotated-2", 2, 5000, 8*gi),
		c("unknown-low", 0, 5000, 0),
		c("annotated-minus-1", -1, 5999, 0),
		c("twin-b", 0, 5000, gi),
	}
	SortCandidates(in)
	var got []string
	for _, x := range in {
		got = append(got, x.Pod.Name)
	}
	// -1 first, then the unannotated pods (eviction priority 0) by priority and memory, then 2 last.
	want := []string{"annotated-minus-1", "big-low", "small-low", "twin-b", "unknown-low", "high", "annotated-2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want,+got):\n%s", diff)
	}
}

// fixture is a 16Gi node using 13Gi (81.25%) with BE pods a, b, c, d (eviction priority -1), e (terminating) and
// LS pod f.
type fixture struct {
	pods  []*corev1.Pod
	cache *metriccache.Cache
}

// be returns a BE pod with the given priority.
func be(name string, priority int32, opts ...qostest.PodOption) *corev1.Pod {
	return qostest.Pod(name, append([]qostest.PodOption{qostest.QoS(extension.QoSBE), qostest.Priority(priority)}, opts...)...)
}

func newFixture() *fixture {
	f := &fixture{cache: qostest.Cache()}
	f.pods = []*corev1.Pod{
		be("a", 5000),
		be("b", 5000),
		be("c", 5500),
		be("d", 5900, qostest.Annotation(extension.AnnotationPodEvictionPriority, "-1")),
		be("e", 5000, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: qostest.Now} }),
		qostest.Pod("f", qostest.QoS(extension.QoSLS)),
	}
	f.usage(qostest.Now, 13*gi)
	for name, mem := range map[string]int64{"a": gi, "b": 2 * gi, "c": 3 * gi, "d": gi / 2, "e": gi / 4, "f": 5 * gi} {
		f.cache.Append(qosmanager.PodKey(qostest.UID(name), corev1.ResourceMemory), qostest.Now, float64(mem))
	}
	return f
}

func (f *fixture) usage(t time.Time, node int64) {
	f.cache.Append(qosmanager.NodeKey(corev1.ResourceMemory), t, float64(node))
}

func (f *fixture) state(enable bool, at time.Time) *qosmanager.State {
	st := qostest.State(qostest.Node("8", "16Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{
		ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{Enable: ptr.To(enable)},
	}), f.cache, f.pods...)
	st.Now = at
	return st
}

func TestEvictsInOrderUntilReleased(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	ev := &qostest.Evictor{}
	s := New(ev)
	if err := s.Run(ctx, f.state(true, qostest.Now)); err != nil {
		t.Fatal(err)
	}
	// need = 13Gi − 16Gi × 68 / 100 = 2276332667 B; e (terminating) counts 0.25Gi, d 0.5Gi, b 2Gi: enough.
	want := []qostest.Eviction{
		{Pod: "default/d", Reason: Reason, Message: "node memory usage 81.3% >= threshold 70%, releasing 1.9Gi to reach 68%; pod memory 512Mi"},
		{Pod: "default/b", Reason: Reason, Message: "node memory usage 81.3% >= threshold 70%, releasing 1.4Gi to reach 68%; pod memory 2Gi"},
	}
	if diff := cmp.Diff(want, ev.Calls()); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}

	// Within the 4 s cool-down nothing happens, even though usage is still high.
	f.usage(qostest.Now.Add(3*time.Second), 13*gi)
	if err := s.Run(ctx, f.state(true, qostest.Now.Add(3*time.Second))); err != nil {
		t.Fatal(err)
	}
	if got := ev.Calls(); len(got) != 0 {
		t.Errorf("evictions during the cool-down: %v", got)
	}
	// After it, usage has come down below the threshold: nothing either.
	f.usage(qostest.Now.Add(5*time.Second), 11*gi)
	if err := s.Run(ctx, f.state(true, qostest.Now.Add(5*time.Second))); err != nil {
		t.Fatal(err)
	}
	if got := ev.Calls(); len(got) != 0 {
		t.Errorf("evictions below the threshold: %v", got)
	}
}

func TestRefusedAndFailedEvictionsMoveOn(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	ev := &qostest.Evictor{Refuse: func(p *corev1.Pod) (bool, error) {
		switch p.Name {
		case "d":
			return true, nil // e.g. rate-limited
		case "b":
			return false, errors.New("apiserver unavailable")
		}
		return false, nil
	}}
	err := New(ev).Run(ctx, f.state(true, qostest.Now))
	if err == nil || !strings.Contains(err.Error(), "apiserver unavailable") {
		t.Errorf("Run = %v, want the eviction error", err)
	}
	var got []string
	for _, c := range ev.Calls() {
		got = append(got, c.Pod)
	}
	// 0.25Gi (e) + a 1Gi + c 3Gi: enough after c.
	if diff := cmp.Diff([]string{"default/d", "default/b", "default/a", "default/c"}, got); diff != "" {
		t.Errorf("eviction attempts (-want,+got):\n%s", diff)
	}
}

func TestDisabledOrUnknownDoesNothing(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	ev := &qostest.Evictor{}
	if err := New(ev).Run(ctx, f.state(false, qostest.Now)); err != nil {
		t.Fatal(err)
	}
	if got := ev.Calls(); len(got) != 0 {
		t.Errorf("evictions while disabled: %v", got)
	}
	f.cache = qostest.Cache()
	err := New(ev).Run(ctx, f.state(true, qostest.Now))
	if err == nil || !strings.Contains(err.Error(), "no node memory usage sample") {
		t.Errorf("Run without a node sample = %v, want an error", err)
	}
	if got := ev.Calls(); len(got) != 0 {
		t.Errorf("evictions without a node sample: %v", got)
	}
}

func TestMalformedEvictionPriorityIsReportedAndIgnored(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	f.pods[3].Annotations[extension.AnnotationPodEvictionPriority] = "first"
	rec := record.NewFakeRecorder(10)
	ev := &qostest.Evictor{}
	if err := New(ev, WithRecorder(rec)).Run(ctx, f.state(true, qostest.Now)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range ev.Calls() {
		got = append(got, c.Pod)
	}
	// d's eviction priority counts as 0, so d (priority 5900) is no longer first: b (2Gi, priority 5000) with e's
	// 0.25Gi covers the 2.12Gi alone.
	if diff := cmp.Diff([]string{"default/b"}, got); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}
	select {
	case e := <-rec.Events:
		if !strings.Contains(e, "InvalidAnnotation annotation koordinator.sh/eviction-priority is ignored") {
			t.Errorf("event = %q", e)
		}
	default:
		t.Errorf("no event for the malformed annotation")
	}
}

func TestPodsWithoutSamplesAreNotChosen(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	// "n" is the first in order (eviction priority -2) but has no memory sample yet: what it would release is
	// unknown, so it is passed over and the order goes on as without it.
	f.pods = append(f.pods, be("n", 5000, qostest.Annotation(extension.AnnotationPodEvictionPriority, "-2")))
	ev := &qostest.Evictor{}
	if err := New(ev).Run(ctx, f.state(true, qostest.Now)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range ev.Calls() {
		got = append(got, c.Pod)
	}
	if diff := cmp.Diff([]string{"default/d", "default/b"}, got); diff != "" {
		t.Errorf("evicted pods (-want,+got):\n%s", diff)
	}
}

// TestUnlabelledBestEffortPodsAreNotChosen: a Kubernetes BestEffort pod without the koordinator.sh/qosClass label
// is BE for suppression but never evicted for memory pressure, as in Koordinator, even when it uses the most
// memory at the lowest priority.
func TestUnlabelledBestEffortPodsAreNotChosen(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	f.pods = append(f.pods, qostest.Pod("g", qostest.KubeQoS(corev1.PodQOSBestEffort)))
	f.cache.Append(qosmanager.PodKey(qostest.UID("g"), corev1.ResourceMemory), qostest.Now, float64(4*gi))
	ev := &qostest.Evictor{}
	if err := New(ev).Run(ctx, f.state(true, qostest.Now)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ev.Calls() {
		got = append(got, e.Pod)
	}
	// As without pod g: d, then b.
	if diff := cmp.Diff([]string{"default/d", "default/b"}, got); diff != "" {
		t.Errorf("evicted pods (-want,+got):\n%s", diff)
	}
}

// evictedPods returns the namespace/name of the pods ev was asked to evict, and their reasons.
func evictedPods(ev *qostest.Evictor) []string {
	var out []string
	for _, c := range ev.Calls() {
		out = append(out, c.Pod+" "+c.Reason)
	}
	return out
}

func TestEvictionPolicyKeepsAPodFromBEEviction(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	// d would go first; its policy names only MemoryEvict, so BEMemoryEvict passes it over: b (2Gi) with e's
	// 0.25Gi covers the 2.12Gi.
	f.pods[3].Annotations[extension.AnnotationPodEvictPolicy] = `["MemoryEvict"]`
	ev := &qostest.Evictor{}
	if err := New(ev).Run(ctx, f.state(true, qostest.Now)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"default/b " + Reason}, evictedPods(ev)); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}
}

// nodeLevel is a 16Gi node using 13Gi (81.25%, 2.12Gi above 68%) with pods of every priority, some labelled
// koordinator.sh/eviction-enabled=true.
func nodeLevel() *fixture {
	f := &fixture{cache: qostest.Cache()}
	enabled := qostest.Label(extension.LabelPodEvictEnabled, "true")
	f.pods = []*corev1.Pod{
		qostest.Pod("prod", qostest.Priority(9500), enabled),
		qostest.Pod("mid", qostest.Priority(7000), enabled),
		qostest.Pod("batch-x", qostest.Priority(5000), enabled),
		qostest.Pod("batch-not-enabled", qostest.Priority(5000)),
		qostest.Pod("batch-z", qostest.Priority(5000), enabled, qostest.Annotation(extension.AnnotationPodEvictionPriority, "-1")),
	}
	f.usage(qostest.Now, 13*gi)
	for name, mem := range map[string]int64{"prod": 4 * gi, "mid": gi, "batch-x": 3 * gi / 2, "batch-not-enabled": 5 * gi, "batch-z": gi / 2} {
		f.cache.Append(qosmanager.PodKey(qostest.UID(name), corev1.ResourceMemory), qostest.Now, float64(mem))
	}
	return f
}

func (f *fixture) stateWith(cfg slov1alpha1.ResourceThresholdStrategy, node *corev1.Node) *qosmanager.State {
	cfg.Enable = ptr.To(true)
	return qostest.State(node, qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: &cfg}), f.cache, f.pods...)
}

func TestMemoryEvictByPriority(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := nodeLevel()
	ev := &qostest.Evictor{}
	s := New(ev, WithGates(Gates{MemoryEvict: true}))
	st := f.stateWith(slov1alpha1.ResourceThresholdStrategy{EvictEnabledPriorityThreshold: ptr.To[int32](7999)}, qostest.Node("8", "16Gi"))
	if err := s.Run(ctx, st); err != nil {
		t.Fatal(err)
	}
	// need 2.12Gi: batch-z (eviction priority -1, 0.5Gi), then batch-x (priority 5000, 1.5Gi): 2Gi, then mid
	// (7000, 1Gi): 3Gi. prod is above the threshold, batch-not-enabled lacks the label.
	calls := ev.Calls()
	var got []string
	for _, c := range calls {
		got = append(got, c.Pod)
	}
	if diff := cmp.Diff([]string{"default/batch-z", "default/batch-x", "default/mid"}, got); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}
	want := qostest.Eviction{Pod: "default/batch-z", Reason: ReasonNodeUsage,
		Message: "node memory usage 81.3% >= threshold 70%, releasing 2.1Gi to reach 68%; pod memory 512Mi, priority 5000 <= 7999"}
	if diff := cmp.Diff(want, calls[0]); diff != "" {
		t.Errorf("first eviction (-want,+got):\n%s", diff)
	}

	// Without evictEnabledPriorityThreshold MemoryEvict is not configured: it does nothing, without error.
	s = New(ev, WithGates(Gates{MemoryEvict: true}))
	if err := s.Run(ctx, f.stateWith(slov1alpha1.ResourceThresholdStrategy{}, qostest.Node("8", "16Gi"))); err != nil {
		t.Fatal(err)
	}
	if got := ev.Calls(); len(got) != 0 {
		t.Errorf("evictions without a priority threshold: %v", got)
	}
}

// TestBEThenNodeLevel: with both gates on, the BE eviction runs first and what it released counts for
// MemoryEvict, which then has nothing left to do.
func TestBEThenNodeLevel(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	f.pods = append(f.pods, qostest.Pod("ls-enabled", qostest.QoS(extension.QoSLS), qostest.Priority(5900),
		qostest.Label(extension.LabelPodEvictEnabled, "true")))
	f.cache.Append(qosmanager.PodKey(qostest.UID("ls-enabled"), corev1.ResourceMemory), qostest.Now, float64(4*gi))
	ev := &qostest.Evictor{}
	s := New(ev, WithGates(Gates{BEMemoryEvict: true, MemoryEvict: true}))
	st := f.stateWith(slov1alpha1.ResourceThresholdStrategy{EvictEnabledPriorityThreshold: ptr.To[int32](5999)}, qostest.Node("8", "16Gi"))
	if err := s.Run(ctx, st); err != nil {
		t.Fatal(err)
	}
	// BE: e (terminating) 0.25Gi, d 0.5Gi, b 2Gi cover the 2.12Gi; MemoryEvict counts d and b (2.5Gi) and evicts
	// nothing more, ls-enabled (4Gi) included.
	if diff := cmp.Diff([]string{"default/d " + Reason, "default/b " + Reason}, evictedPods(ev)); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}
}

func TestMemoryAllocatableEvict(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	enabled := qostest.Label(extension.LabelPodEvictEnabled, "true")
	batch := func(name, memory string) *corev1.Pod {
		return qostest.Pod(name, qostest.QoS(extension.QoSBE), qostest.Priority(5500), enabled,
			qostest.Container("c", "", qostest.Resources("kubernetes.io/batch-memory", memory), nil))
	}
	f := &fixture{cache: qostest.Cache(), pods: []*corev1.Pod{batch("small", "4Gi"), batch("big", "8Gi")}}
	f.usage(qostest.Now, 4*gi)
	node := qostest.Node("8", "64Gi")
	node.Status.Allocatable["kubernetes.io/batch-memory"] = resource.MustParse("10Gi")
	ev := &qostest.Evictor{}
	s := New(ev, WithGates(Gates{MemoryAllocatableEvict: true}))
	cfg := slov1alpha1.ResourceThresholdStrategy{
		MemoryAllocatableEvictThresholdPercent: ptr.To[int64](110), MemoryAllocatableEvictLowerPercent: ptr.To[int64](100),
		AllocatableEvictPriorityThreshold: ptr.To[int32](5999),
	}
	if err := s.Run(ctx, f.stateWith(cfg, node)); err != nil {
		t.Fatal(err)
	}
	// 12Gi of batch-memory requested against 10Gi: 120% > 110%; release 12Gi − 10Gi = 2Gi: big (8Gi) first.
	want := []qostest.Eviction{{Pod: "default/big", Reason: ReasonAllocatable,
		Message: "kubernetes.io/batch-memory requests 12Gi (120% of allocatable 10Gi) > threshold 110%, releasing 2Gi to reach 100%; pod request 8Gi, priority 5500 <= 5999"}}
	if diff := cmp.Diff(want, ev.Calls()); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}

	// A half-configured eviction is an error naming the missing field, and evicts nothing.
	cfg.MemoryAllocatableEvictLowerPercent = nil
	err := New(ev, WithGates(Gates{MemoryAllocatableEvict: true})).Run(ctx, f.stateWith(cfg, node))
	if err == nil || !strings.Contains(err.Error(), "memoryAllocatableEvictLowerPercent") {
		t.Errorf("Run = %v, want an error naming memoryAllocatableEvictLowerPercent", err)
	}
	if got := ev.Calls(); len(got) != 0 {
		t.Errorf("evictions with an invalid configuration: %v", got)
	}
}

func TestGatesReasons(t *testing.T) {
	tests := map[string]struct {
		gates Gates
		want  []string
	}{
		"none":                  {},
		"BE only":               {gates: Gates{BEMemoryEvict: true}, want: []string{Reason}},
		"usage and allocatable": {gates: Gates{MemoryEvict: true, MemoryAllocatableEvict: true}, want: []string{ReasonNodeUsage, ReasonAllocatable}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.gates.Reasons()); diff != "" {
				t.Errorf("Reasons (-want,+got):\n%s", diff)
			}
		})
	}
}
