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
	c := func(name string, ep *int32, priority int32, mem int64) Candidate {
		return Candidate{Pod: qostest.Pod(name), EvictionPriority: ep, Priority: priority, Memory: mem}
	}
	in := []Candidate{
		c("big-low", nil, 5000, 3*gi),
		c("high", nil, 5900, 8*gi),
		c("small-low", nil, 5000, gi),
		c("annotated-2", ptr.To[int32](2), 5999, 0),
		c("unknown-low", nil, 5000, 0),
		c("annotated-1", ptr.To[int32](1), 5999, 0),
		c("twin-b", nil, 5000, gi),
	}
	SortCandidates(in)
	var got []string
	for _, x := range in {
		got = append(got, x.Pod.Name)
	}
	want := []string{"annotated-1", "annotated-2", "big-low", "small-low", "twin-b", "unknown-low", "high"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want,+got):\n%s", diff)
	}
}

// fixture is a 16Gi node using 13Gi (81.25%) with BE pods a, b, c, d (annotated), e (terminating) and LS pod f.
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
		be("d", 5900, qostest.Annotation(extension.AnnotationPodEvictionPriority, "1")),
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
	// d is no longer first: b (2Gi, priority 5000) with e's 0.25Gi covers the 2.12Gi alone.
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
	// "n" is the first in order (eviction priority 0) but has no memory sample yet: what it would release is
	// unknown, so it is passed over and the order goes on as without it.
	f.pods = append(f.pods, be("n", 5000, qostest.Annotation(extension.AnnotationPodEvictionPriority, "0")))
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
