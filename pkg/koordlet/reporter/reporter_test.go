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

package reporter

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	koordfake "github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	"github.com/koord-dev/koord/pkg/koordlet/statesinformer"
)

const nodeName = "n1"

var _ Inputs = (*statesinformer.Informer)(nil)

// fakeInputs is what the states informer would return; safe for concurrent use.
type fakeInputs struct {
	mu   sync.Mutex
	nm   *slov1alpha1.NodeMetric
	pods []*corev1.Pod
}

func (f *fakeInputs) NodeMetric() *slov1alpha1.NodeMetric {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nm
}

func (f *fakeInputs) Pods() []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods
}

// setSpec replaces the NodeMetric's spec.
func (f *fakeInputs) setSpec(spec slov1alpha1.NodeMetricSpec) {
	f.mu.Lock()
	defer f.mu.Unlock()
	nm := f.nm.DeepCopy()
	nm.Spec = spec
	f.nm = nm
}

func nodeMetric(spec slov1alpha1.NodeMetricSpec) *slov1alpha1.NodeMetric {
	return &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: nodeName}, Spec: spec}
}

var nodeMetricsGR = schema.GroupResource{Group: "slo.koordinator.sh", Resource: "nodemetrics"}

// verbs returns verb[/subresource] of the NodeMetric actions.
func verbs(actions []k8stesting.Action) []string {
	var out []string
	for _, a := range actions {
		if a.GetResource().Resource != "nodemetrics" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		v := a.GetVerb()
		if s := a.GetSubresource(); s != "" {
			v += "/" + s
		}
		out = append(out, v)
	}
	return out
}

func TestReport(t *testing.T) {
	tests := map[string]struct {
		inApiserver bool
		inInformer  bool
		conflicts   int // UpdateStatus calls answered with a conflict
		wantErr     string
		wantVerbs   []string
		wantStored  bool
	}{
		"status-updated": {
			inApiserver: true, inInformer: true,
			wantVerbs: []string{"update/status"}, wantStored: true,
		},
		"conflict-retried-with-fresh-get": {
			inApiserver: true, inInformer: true, conflicts: 1,
			wantVerbs: []string{"update/status", "get", "update/status"}, wantStored: true,
		},
		"conflict-every-time": {
			inApiserver: true, inInformer: true, conflicts: 100,
			wantErr:   `update the status of nodemetric "n1": Operation cannot be fulfilled on nodemetrics.slo.koordinator.sh "n1": stale`,
			wantVerbs: []string{"update/status", "get", "update/status", "get", "update/status", "get", "update/status"},
		},
		"nodemetric-absent": {
			wantErr: `nodemetric "n1" does not exist yet: koord-manager creates it`,
		},
		"nodemetric-gone-from-apiserver": {
			inInformer: true,
			wantErr:    `nodemetric "n1" is gone: nodemetrics.slo.koordinator.sh "n1" not found`,
			wantVerbs:  []string{"update/status"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var objs []runtime.Object
			if tc.inApiserver {
				objs = append(objs, nodeMetric(slov1alpha1.NodeMetricSpec{}))
			}
			client := koordfake.NewSimpleClientset(objs...)
			conflicts := tc.conflicts
			client.PrependReactor("update", "nodemetrics", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() == "status" && conflicts > 0 {
					conflicts--
					return true, nil, apierrors.NewConflict(nodeMetricsGR, nodeName, errStale)
				}
				return false, nil, nil
			})
			in := &fakeInputs{pods: []*corev1.Pod{lsPodB, bePodA}}
			if tc.inInformer {
				in.nm = nodeMetric(slov1alpha1.NodeMetricSpec{})
			}
			r := New(client, nodeName, standardSource(), in, WithClock(clocktesting.NewFakeClock(now)))

			var gotErr string
			if err := r.Report(ctx); err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("Report error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantVerbs, verbs(client.Actions())); diff != "" {
				t.Errorf("API calls (-want,+got):\n%s", diff)
			}
			if !tc.wantStored {
				return
			}
			stored, err := client.SloV1alpha1().NodeMetrics().Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(defaultStatus(), stored.Status); diff != "" {
				t.Errorf("stored status (-want,+got):\n%s", diff)
			}
		})
	}
}

var errStale = errString("stale")

type errString string

func (e errString) Error() string { return string(e) }

func TestReportStampsWithTheStampClock(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := koordfake.NewSimpleClientset(nodeMetric(slov1alpha1.NodeMetricSpec{}))
	in := &fakeInputs{pods: []*corev1.Pod{lsPodB, bePodA}, nm: nodeMetric(slov1alpha1.NodeMetricSpec{})}
	// Usage windows end at now (the reporter's clock, e.g. simulated time); the stamp is the other clock's time.
	stamp := now.Add(-90 * time.Minute)
	r := New(client, nodeName, standardSource(), in, WithClock(clocktesting.NewFakeClock(now)),
		WithStampClock(clocktesting.NewFakeClock(stamp)))
	if err := r.Report(ctx); err != nil {
		t.Fatal(err)
	}
	stored, err := client.SloV1alpha1().NodeMetrics().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := defaultStatus()
	want.UpdateTime = &metav1.Time{Time: stamp}
	if diff := cmp.Diff(want, stored.Status); diff != "" {
		t.Errorf("stored status (-want,+got):\n%s", diff)
	}
}

func TestReportNotesMemoryFallbackOnce(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer()
	ctx := klog.NewContext(t.Context(), logger)
	spec := slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{
		NodeMemoryCollectPolicy: ptr.To(slov1alpha1.UsageWithHotPageCache),
	}}
	client := koordfake.NewSimpleClientset(nodeMetric(spec))
	in := &fakeInputs{nm: nodeMetric(spec)}
	r := New(client, nodeName, standardSource(), in, WithClock(clocktesting.NewFakeClock(now)))
	for range 3 {
		if err := r.Report(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const msg = "Counted memory without page cache instead of the NodeMetric's memory collection policy"
	if diff := cmp.Diff(1, strings.Count(logs.String(), msg)); diff != "" {
		t.Errorf("fallback notes logged (-want,+got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), `nodeMemoryCollectPolicy="usageWithHotPageCache"`) {
		t.Errorf("the note does not name the policy:\n%s", logs.String())
	}
}

func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	start := now
	fc := clocktesting.NewFakeClock(start)
	client := koordfake.NewSimpleClientset(nodeMetric(slov1alpha1.NodeMetricSpec{}))
	reports := make(chan time.Time, 10)
	client.PrependReactor("update", "nodemetrics", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			nm := a.(k8stesting.UpdateAction).GetObject().(*slov1alpha1.NodeMetric)
			reports <- nm.Status.UpdateTime.Time
		}
		return false, nil, nil
	})
	in := &fakeInputs{nm: nodeMetric(slov1alpha1.NodeMetricSpec{})}
	r := New(client, nodeName, standardSource(), in, WithClock(fc), WithWarmUp(5*time.Second))
	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})

	// step waits for Run to wait on the clock, then advances it.
	step := func(d time.Duration) {
		t.Helper()
		waitForTimer(t, fc)
		fc.Step(d)
	}
	// report waits for the next report and returns its offset from start.
	report := func() time.Duration {
		t.Helper()
		select {
		case at := <-reports:
			return at.Sub(start)
		case <-time.After(30 * time.Second):
			t.Fatal("no report")
			return 0
		}
	}
	withInterval := func(v *int64) slov1alpha1.NodeMetricSpec {
		return slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{ReportIntervalSeconds: v}}
	}

	var got []time.Duration
	// Warm-up: the first report comes 5 s in, not before.
	step(4 * time.Second)
	step(time.Second)
	got = append(got, report())
	// Default interval 60 s; the spec changes to 10 s while Run waits, which takes effect after the next report.
	step(59 * time.Second)
	in.setSpec(withInterval(ptr.To[int64](10)))
	step(time.Second)
	got = append(got, report())
	step(10 * time.Second)
	got = append(got, report())
	// An interval below 1 takes the default again. Run reads the interval after reporting, so wait until it
	// waits (on the 10 s interval) before changing it.
	waitForTimer(t, fc)
	in.setSpec(withInterval(ptr.To[int64](0)))
	step(10 * time.Second)
	got = append(got, report())
	step(59 * time.Second)
	step(time.Second)
	got = append(got, report())

	want := []time.Duration{5 * time.Second, 65 * time.Second, 75 * time.Second, 85 * time.Second, 145 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report times after start (-want,+got):\n%s", diff)
	}
}

func TestRunKeepsGoingAfterErrors(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	fc := clocktesting.NewFakeClock(now)
	client := koordfake.NewSimpleClientset(nodeMetric(slov1alpha1.NodeMetricSpec{}))
	reports := make(chan struct{}, 10)
	client.PrependReactor("update", "nodemetrics", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reports <- struct{}{}
		return false, nil, nil
	})
	in := &fakeInputs{} // no NodeMetric yet: reports fail
	r := New(client, nodeName, standardSource(), in, WithClock(fc), WithWarmUp(0))
	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	for range 3 {
		waitForTimer(t, fc)
		fc.Step(60 * time.Second)
	}
	// Once Run waits again, the third failed report is over.
	waitForTimer(t, fc)
	in.mu.Lock()
	in.nm = nodeMetric(slov1alpha1.NodeMetricSpec{})
	in.mu.Unlock()
	fc.Step(60 * time.Second)
	select {
	case <-reports:
	case <-time.After(30 * time.Second):
		t.Fatal("no report once the NodeMetric appeared")
	}
	if diff := cmp.Diff(0, len(reports)); diff != "" {
		t.Errorf("extra reports (-want,+got):\n%s", diff)
	}
}

// waitForTimer waits until Run waits on the fake clock; the timeout only keeps a broken test from hanging.
func waitForTimer(t *testing.T, fc *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !fc.HasWaiters() {
		select {
		case <-deadline:
			t.Fatal("Run never waited on the clock")
		case <-time.After(time.Millisecond):
		}
	}
}
