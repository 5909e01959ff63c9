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
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// fakeInputs is a settable Inputs.
type fakeInputs struct {
	mu   sync.Mutex
	node *corev1.Node
	pods []*corev1.Pod
	slo  *slov1alpha1.NodeSLO
}

func (f *fakeInputs) Node() *corev1.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.node
}

func (f *fakeInputs) Pods() []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods
}

func (f *fakeInputs) NodeSLO() *slov1alpha1.NodeSLO {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.slo
}

func (f *fakeInputs) set(node *corev1.Node, slo *slov1alpha1.NodeSLO) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.node, f.slo = node, slo
}

// fakeStrategy records the rounds it saw and fails as told.
type fakeStrategy struct {
	name string
	// run is called each round; nil succeeds.
	run func(s *State) error

	mu     sync.Mutex
	rounds []time.Time
	seen   []string
}

func (f *fakeStrategy) Name() string { return f.name }

func (f *fakeStrategy) Run(ctx context.Context, s *State) error {
	f.mu.Lock()
	f.rounds = append(f.rounds, s.Now)
	f.seen = append(f.seen, s.NodeSLO.ResourceVersion)
	f.mu.Unlock()
	if f.run != nil {
		return f.run(s)
	}
	return nil
}

func (f *fakeStrategy) roundCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.rounds)
}

// sampledCache returns a metric cache holding one node CPU sample, which the Manager waits for.
func sampledCache() *metriccache.Cache {
	c := metriccache.New(metriccache.Options{})
	c.Append(NodeKey(corev1.ResourceCPU), time.Unix(1, 0), 1)
	return c
}

func testNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
}

func testSLO(rv string) *slov1alpha1.NodeSLO {
	return &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: rv}}
}

// bufferedContext returns a context whose logger keeps what is logged.
func bufferedContext(t *testing.T) (context.Context, ktesting.Underlier) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(2)))
	return klog.NewContext(context.Background(), logger), logger.GetSink().(ktesting.Underlier)
}

// errorLogs returns the messages of the errors logged, as "strategy: error".
func errorLogs(u ktesting.Underlier) []string {
	var out []string
	for _, e := range u.GetBuffer().Data() {
		if e.Type != ktesting.LogError {
			continue
		}
		strategy := ""
		for i := 0; i+1 < len(e.ParameterKVList); i += 2 {
			if e.ParameterKVList[i] == "strategy" {
				strategy, _ = e.ParameterKVList[i+1].(string)
			}
		}
		out = append(out, strategy+": "+e.Err.Error())
	}
	return out
}

func TestRunOnceWaitsForNodeNodeSLOAndSample(t *testing.T) {
	tests := map[string]struct {
		node       *corev1.Node
		slo        *slov1alpha1.NodeSLO
		reader     MetricReader
		wantRounds int
	}{
		"neither":                         {reader: sampledCache()},
		"node only":                       {node: testNode(), reader: sampledCache()},
		"NodeSLO only":                    {slo: testSLO("1"), reader: sampledCache()},
		"node and NodeSLO, no sample yet": {node: testNode(), slo: testSLO("1"), reader: metriccache.New(metriccache.Options{})},
		"node, NodeSLO and a sample":      {node: testNode(), slo: testSLO("1"), reader: sampledCache(), wantRounds: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			s := &fakeStrategy{name: "s"}
			in := &fakeInputs{}
			in.set(tc.node, tc.slo)
			New([]Strategy{s}, in, tc.reader).RunOnce(ctx)
			if got := s.roundCount(); got != tc.wantRounds {
				t.Errorf("rounds = %d, want %d", got, tc.wantRounds)
			}
		})
	}
}

func TestRunOnceSnapshot(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	pods := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "p"}}}
	in := &fakeInputs{pods: pods}
	in.set(testNode(), testSLO("7"))
	cache := sampledCache()
	var got *State
	s := &fakeStrategy{name: "s", run: func(s *State) error { got = s; return nil }}
	New([]Strategy{s}, in, cache, WithClock(clocktesting.NewFakeClock(now)), WithMaxSampleAge(3*time.Second)).RunOnce(ctx)
	if got == nil {
		t.Fatal("strategy did not run")
	}
	want := &State{Node: in.node, Pods: pods, NodeSLO: in.slo, Metrics: cache, Now: now, MaxSampleAge: 3 * time.Second}
	if got.Node != want.Node || got.NodeSLO != want.NodeSLO || got.Metrics != want.Metrics ||
		!got.Now.Equal(want.Now) || got.MaxSampleAge != want.MaxSampleAge || len(got.Pods) != 1 || got.Pods[0] != pods[0] {
		t.Errorf("state = %+v, want %+v", got, want)
	}
}

func TestRunOnceIsolatesStrategyFailures(t *testing.T) {
	ctx, logs := bufferedContext(t)
	in := &fakeInputs{}
	in.set(testNode(), testSLO("1"))
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	failing := &fakeStrategy{name: "failing", run: func(*State) error { return errors.New("cgroup write: permission denied") }}
	panicking := &fakeStrategy{name: "panicking", run: func(*State) error { panic("nil map") }}
	healthy := &fakeStrategy{name: "healthy"}
	m := NewMetrics()
	mgr := New([]Strategy{failing, panicking, healthy}, in, sampledCache(), WithClock(clk), WithMetrics(m))

	// Three rounds within a minute, then one after it.
	for _, step := range []time.Duration{0, time.Second, 30 * time.Second, 30 * time.Second} {
		clk.Step(step)
		mgr.RunOnce(ctx)
	}
	for _, s := range []*fakeStrategy{failing, panicking, healthy} {
		if got := s.roundCount(); got != 4 {
			t.Errorf("%s ran %d rounds, want 4", s.name, got)
		}
	}
	for strategy, want := range map[string]float64{"failing": 4, "panicking": 4, "healthy": 0} {
		if got := testutil.ToFloat64(m.errors.WithLabelValues(strategy)); got != want {
			t.Errorf("errors_total{strategy=%s} = %v, want %v", strategy, got, want)
		}
	}
	// Logged in the first round and again once a minute had passed.
	wantLogs := []string{
		"failing: cgroup write: permission denied",
		"panicking: strategy panicked: nil map",
		"failing: cgroup write: permission denied",
		"panicking: strategy panicked: nil map",
	}
	if diff := cmp.Diff(wantLogs, errorLogs(logs)); diff != "" {
		t.Errorf("logged errors (-want,+got):\n%s", diff)
	}
}

func TestRunOnceLogsEachDistinctError(t *testing.T) {
	ctx, logs := bufferedContext(t)
	in := &fakeInputs{}
	in.set(testNode(), testSLO("1"))
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	errs := []string{"a", "b", "a", "b", "c"}
	round := 0
	s := &fakeStrategy{name: "s", run: func(*State) error { e := errs[round]; round++; return errors.New(e) }}
	mgr := New([]Strategy{s}, in, sampledCache(), WithClock(clk))
	for range errs {
		clk.Step(time.Second)
		mgr.RunOnce(ctx)
	}
	if diff := cmp.Diff([]string{"s: a", "s: b", "s: c"}, errorLogs(logs)); diff != "" {
		t.Errorf("logged errors (-want,+got):\n%s", diff)
	}
	if got := len(mgr.logged); got != 3 {
		t.Errorf("remembered errors = %d, want 3", got)
	}
	clk.Step(2 * time.Minute)
	in.set(testNode(), testSLO("1"))
	s.run = nil
	mgr.RunOnce(ctx)
	if got := len(mgr.logged); got != 0 {
		t.Errorf("remembered errors after two quiet minutes = %d, want 0", got)
	}
}

func TestRunKeepsTheLastNodeSLOAndStopsWithContext(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	in := &fakeInputs{}
	s := &fakeStrategy{name: "s"}
	mgr := New([]Strategy{s}, in, sampledCache(), WithClock(clk))
	done := make(chan struct{})
	go func() {
		mgr.Run(ctx, 2*time.Second)
		close(done)
	}()

	waitTicker := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !clk.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatal("Run did not wait on its ticker")
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitRounds := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for s.roundCount() < n {
			if time.Now().After(deadline) {
				t.Fatalf("rounds = %d, want %d", s.roundCount(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}

	waitTicker()
	in.set(testNode(), testSLO("1"))
	clk.Step(2 * time.Second)
	waitRounds(1)
	// The apiserver goes away: the informer keeps returning the last NodeSLO.
	clk.Step(2 * time.Second)
	waitRounds(2)
	in.set(testNode(), testSLO("2"))
	clk.Step(2 * time.Second)
	waitRounds(3)

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the context was cancelled")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if diff := cmp.Diff([]string{"1", "1", "2"}, s.seen[:3]); diff != "" {
		t.Errorf("NodeSLO versions seen (-want,+got):\n%s", diff)
	}
	for i := 1; i < 3; i++ {
		if d := s.rounds[i].Sub(s.rounds[i-1]); d != 2*time.Second {
			t.Errorf("round %d came %v after the previous one, want 2s", i, d)
		}
	}
}

func TestMetricsRegister(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics()
	if err := m.Register(reg); err != nil {
		t.Fatalf("Register: %v", err)
	}
	in := &fakeInputs{}
	in.set(testNode(), testSLO("1"))
	failing := &fakeStrategy{name: "cpusuppress", run: func(*State) error { return errors.New("boom") }}
	fine := &fakeStrategy{name: "memoryqos", run: func(*State) error { return nil }}
	mgr := New([]Strategy{failing, fine}, in, sampledCache(), WithMetrics(m))
	// Each strategy's errors are exported before its first round, at 0.
	if got := testutil.ToFloat64(m.errors.WithLabelValues("cpusuppress")); got != 0 || testutil.CollectAndCount(m.errors) != 2 {
		t.Errorf("before any round: %d error series, cpusuppress at %v; want 2 at 0", testutil.CollectAndCount(m.errors), got)
	}
	mgr.RunOnce(ctx)
	const want = `
# HELP koord_koordlet_qos_strategy_errors_total Rounds of a QoS strategy that returned an error (or panicked), by strategy.
# TYPE koord_koordlet_qos_strategy_errors_total counter
koord_koordlet_qos_strategy_errors_total{strategy="cpusuppress"} 1
koord_koordlet_qos_strategy_errors_total{strategy="memoryqos"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "koord_koordlet_qos_strategy_errors_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(m.duration, "koord_koordlet_qos_strategy_duration_seconds"); got != 2 {
		t.Errorf("duration series = %d, want 2", got)
	}
}
