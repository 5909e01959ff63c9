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

package evictor

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

const reason = "EvictPodByNodeMemoryUsage"

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "batch", UID: types.UID("uid-" + name)}}
}

// evictionCall is what the fake apiserver saw of one eviction request.
type evictionCall struct {
	Namespace, Name string
	UID             types.UID
}

// fakeAPI is a fake clientset whose eviction subresource answers with respond (nil: success) and records calls.
type fakeAPI struct {
	*fake.Clientset
	mu      sync.Mutex
	calls   []evictionCall
	respond func(name string) error
}

func newFakeAPI(respond func(name string) error) *fakeAPI {
	f := &fakeAPI{Clientset: fake.NewClientset(), respond: respond}
	f.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := action.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		call := evictionCall{Namespace: action.GetNamespace(), Name: ev.Name}
		if ev.DeleteOptions != nil && ev.DeleteOptions.Preconditions != nil && ev.DeleteOptions.Preconditions.UID != nil {
			call.UID = *ev.DeleteOptions.Preconditions.UID
		}
		f.mu.Lock()
		f.calls = append(f.calls, call)
		f.mu.Unlock()
		if f.respond != nil {
			return true, nil, f.respond(ev.Name)
		}
		return true, nil, nil
	})
	return f
}

func (f *fakeAPI) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// drain returns the events recorded so far.
func drain(r *record.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-r.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

var podsResource = schema.GroupResource{Resource: "pods"}

func TestEvictAPIOutcomes(t *testing.T) {
	tests := map[string]struct {
		respond     error
		wantEvicted bool
		wantErr     bool
		wantEvents  []string
		wantCause   string
		// wantSecondCall: whether a second Evict of the pod right away reaches the apiserver again.
		wantSecondCall bool
	}{
		"accepted": {
			wantEvicted: true,
			wantEvents:  []string{"Warning evictPodSuccess evict Pod:batch/a, reason: " + reason + ", message: node memory usage 82% >= threshold 70%"},
		},
		"pod is gone": {
			respond:   apierrors.NewNotFound(podsResource, "a"),
			wantCause: CausePodGone,
		},
		"a new pod has the name": {
			respond:   apierrors.NewConflict(podsResource, "a", errors.New("precondition failed: UID in precondition")),
			wantCause: CausePodGone,
		},
		"disallowed by a disruption budget": {
			respond:   apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0),
			wantCause: CauseDisallowed,
			wantEvents: []string{"Warning evictPodFail evict Pod:batch/a, reason: " + reason + ", message: node memory usage 82% >= threshold 70%, " +
				"error Cannot evict pod as it would violate the pod's disruption budget."},
			wantSecondCall: true,
		},
		"apiserver error": {
			respond: apierrors.NewInternalError(errors.New("etcd is down")),
			wantErr: true,
			wantEvents: []string{"Warning evictPodFail evict Pod:batch/a, reason: " + reason + ", message: node memory usage 82% >= threshold 70%, " +
				"error Internal error occurred: etcd is down"},
			wantCause:      CauseError,
			wantSecondCall: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			api := newFakeAPI(func(string) error { return tc.respond })
			rec := record.NewFakeRecorder(10)
			m := NewMetrics()
			e := New(api, rec, WithMetrics(m), WithClock(clocktesting.NewFakePassiveClock(time.Unix(1000, 0))))

			pod := testPod("a")
			evicted, err := e.Evict(ctx, pod, reason, "node memory usage 82% >= threshold 70%")
			if (err != nil) != tc.wantErr {
				t.Fatalf("Evict error = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr && !errors.Is(err, tc.respond) {
				t.Errorf("Evict error = %v, want it to wrap %v", err, tc.respond)
			}
			if evicted != tc.wantEvicted {
				t.Errorf("Evict = %v, want %v", evicted, tc.wantEvicted)
			}
			if diff := cmp.Diff([]evictionCall{{Namespace: "batch", Name: "a", UID: "uid-a"}}, api.calls); diff != "" {
				t.Errorf("eviction requests (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, drain(rec)); diff != "" {
				t.Errorf("events (-want,+got):\n%s", diff)
			}
			wantEvictions := 0.0
			if tc.wantEvicted {
				wantEvictions = 1
			}
			if got := testutil.ToFloat64(m.evictions.WithLabelValues(reason)); got != wantEvictions {
				t.Errorf("evictions_total{reason=%s} = %v, want %v", reason, got, wantEvictions)
			}
			if tc.wantCause != "" {
				if got := testutil.ToFloat64(m.rejected.WithLabelValues(tc.wantCause)); got != 1 {
					t.Errorf("evictions_rejected_total{cause=%s} = %v, want 1", tc.wantCause, got)
				}
			}

			// The budget is given back whenever nothing was evicted.
			e.mu.Lock()
			recent := len(e.recent)
			e.mu.Unlock()
			if want := int(wantEvictions); recent != want {
				t.Errorf("budget used = %d, want %d", recent, want)
			}

			// Only a retryable refusal lets the same pod through again within the cool-down.
			_, _ = e.Evict(ctx, pod, reason, "again")
			wantCalls := 1
			if tc.wantSecondCall {
				wantCalls = 2
			}
			if got := api.callCount(); got != wantCalls {
				t.Errorf("eviction requests after a second Evict = %d, want %d", got, wantCalls)
			}
		})
	}
}

func TestEvictBadArguments(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	api := newFakeAPI(nil)
	e := New(api, record.NewFakeRecorder(1))
	if _, err := e.Evict(ctx, nil, reason, "m"); err == nil {
		t.Errorf("Evict(nil pod) returned no error")
	}
	if _, err := e.Evict(ctx, testPod("a"), "", "m"); err == nil || !strings.Contains(err.Error(), "empty reason") {
		t.Errorf("Evict with an empty reason = %v, want an error naming the empty reason", err)
	}
	if got := api.callCount(); got != 0 {
		t.Errorf("eviction requests = %d, want 0", got)
	}
}

// step is one Evict call of a limits scenario, after advancing the clock by after.
type step struct {
	after     time.Duration
	pod       string
	want      bool
	wantCause string
}

func TestEvictLimits(t *testing.T) {
	tests := map[string]struct {
		opts  []Option
		steps []step
	}{
		"cool-down per pod": {
			opts: []Option{WithCoolDown(time.Minute)},
			steps: []step{
				{pod: "a", want: true},
				{after: 2 * time.Second, pod: "a", wantCause: CauseCoolDown},
				{pod: "b", want: true},
				{after: 57 * time.Second, pod: "a", wantCause: CauseCoolDown},
				{after: time.Second, pod: "a", want: true},
			},
		},
		"token bucket: burst 3 then 1/s": {
			opts: []Option{WithRateLimit(1, 3)},
			steps: []step{
				{pod: "a", want: true},
				{pod: "b", want: true},
				{pod: "c", want: true},
				{pod: "d", wantCause: CauseRateLimited},
				{after: 500 * time.Millisecond, pod: "d", wantCause: CauseRateLimited},
				{after: 500 * time.Millisecond, pod: "d", want: true},
				{pod: "e", wantCause: CauseRateLimited},
			},
		},
		"budget per rolling window": {
			opts: []Option{WithRateLimit(100, 100), WithBudget(2, time.Minute)},
			steps: []step{
				{pod: "a", want: true},
				{after: 30 * time.Second, pod: "b", want: true},
				{pod: "c", wantCause: CauseBudgetExhausted},
				{after: 29 * time.Second, pod: "c", wantCause: CauseBudgetExhausted},
				// a's eviction leaves the window; b's is still in it.
				{after: time.Second, pod: "c", want: true},
				{pod: "d", wantCause: CauseBudgetExhausted},
			},
		},
		"a pod in cool-down spends neither budget nor tokens": {
			opts: []Option{WithRateLimit(1, 2), WithBudget(2, time.Minute)},
			steps: []step{
				{pod: "a", want: true},
				{pod: "a", wantCause: CauseCoolDown},
				{pod: "a", wantCause: CauseCoolDown},
				{pod: "b", want: true},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
			m := NewMetrics()
			e := New(newFakeAPI(nil), record.NewFakeRecorder(100), append(tc.opts, WithClock(clk), WithMetrics(m))...)
			wantRejected := map[string]float64{}
			for i, s := range tc.steps {
				clk.SetTime(clk.Now().Add(s.after))
				got, err := e.Evict(ctx, testPod(s.pod), reason, "m")
				if err != nil {
					t.Fatalf("step %d: Evict(%s): %v", i, s.pod, err)
				}
				if got != s.want {
					t.Errorf("step %d: Evict(%s) = %v, want %v", i, s.pod, got, s.want)
				}
				if s.wantCause != "" {
					wantRejected[s.wantCause]++
				}
			}
			for _, cause := range []string{CauseCoolDown, CauseRateLimited, CauseBudgetExhausted} {
				if got := testutil.ToFloat64(m.rejected.WithLabelValues(cause)); got != wantRejected[cause] {
					t.Errorf("evictions_rejected_total{cause=%s} = %v, want %v", cause, got, wantRejected[cause])
				}
			}
		})
	}
}

func TestEvictConcurrentCallsEvictOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	api := newFakeAPI(nil)
	e := New(api, record.NewFakeRecorder(100), WithRateLimit(100, 100))
	pod := testPod("a")
	var wg sync.WaitGroup
	var mu sync.Mutex
	evicted := 0
	for range 10 {
		wg.Go(func() {
			ok, err := e.Evict(ctx, pod, reason, "m")
			if err != nil {
				t.Errorf("Evict: %v", err)
			}
			if ok {
				mu.Lock()
				evicted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if evicted != 1 || api.callCount() != 1 {
		t.Errorf("evicted %d times with %d requests, want 1 and 1", evicted, api.callCount())
	}
}

func TestEvictorMemoryStaysBounded(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	e := New(newFakeAPI(nil), record.NewFakeRecorder(10000), WithClock(clk), WithRateLimit(1000, 1000),
		WithBudget(1000, time.Minute), WithCoolDown(time.Minute))
	for i := range 3000 {
		clk.SetTime(clk.Now().Add(100 * time.Millisecond))
		if _, err := e.Evict(ctx, testPod(fmt.Sprint(i)), reason, "m"); err != nil {
			t.Fatal(err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// 100 ms apart, a minute holds 600 evictions.
	if len(e.evicted) > 600 || len(e.recent) > 600 {
		t.Errorf("after 3000 evictions over 5 minutes: %d pods in cool-down, %d in the budget window; want at most 600 each",
			len(e.evicted), len(e.recent))
	}
}

func TestMetricsRegister(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics()
	if err := m.Register(reg); err != nil {
		t.Fatalf("Register: %v", err)
	}
	if err := m.Register(reg); err == nil {
		t.Errorf("registering twice returned no error")
	}
	e := New(newFakeAPI(nil), record.NewFakeRecorder(10), WithMetrics(m), WithRateLimit(1, 1),
		WithClock(clocktesting.NewFakePassiveClock(time.Unix(1000, 0))))
	_, _ = e.Evict(ctx, testPod("a"), reason, "m")
	_, _ = e.Evict(ctx, testPod("b"), reason, "m")
	const want = `
# HELP koord_koordlet_evictions_total Pods koordlet evicted through the Eviction API, by the reason of the eviction (e.g. EvictPodByNodeMemoryUsage; in the message of the evictPodSuccess Event).
# TYPE koord_koordlet_evictions_total counter
koord_koordlet_evictions_total{reason="EvictPodByNodeMemoryUsage"} 1
# HELP koord_koordlet_evictions_rejected_total Evictions koordlet asked for but did not carry out, by cause: CoolDown, BudgetExhausted, RateLimited, PodGone, Disallowed (HTTP 429 from the apiserver, e.g. a PodDisruptionBudget) or Error.
# TYPE koord_koordlet_evictions_rejected_total counter
koord_koordlet_evictions_rejected_total{cause="BudgetExhausted"} 0
koord_koordlet_evictions_rejected_total{cause="CoolDown"} 0
koord_koordlet_evictions_rejected_total{cause="Disallowed"} 0
koord_koordlet_evictions_rejected_total{cause="Error"} 0
koord_koordlet_evictions_rejected_total{cause="PodGone"} 0
koord_koordlet_evictions_rejected_total{cause="RateLimited"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestDeclare: declared reasons are exported at 0 before any eviction; others appear with their first.
func TestDeclare(t *testing.T) {
	m := NewMetrics()
	m.Declare("EvictPodByNodeMemoryUsage", "EvictPodByBECPUSatisfaction")
	if got := testutil.CollectAndCount(m.evictions); got != 2 {
		t.Errorf("%d eviction series after declaring 2 reasons, want 2", got)
	}
	if got := testutil.ToFloat64(m.evictions.WithLabelValues("EvictPodByNodeMemoryUsage")); got != 0 {
		t.Errorf("declared reason at %v, want 0", got)
	}
}
