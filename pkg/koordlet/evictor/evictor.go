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
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Defaults of the safety limits.
// Reasons of the Events Evict records on the pod, Koordinator's, so that alerts written for Koordinator's
// koordlet keep working. The eviction's own reason is in the message.
const (
	// EventReasonEvicted is the reason of the Event on a pod koordlet evicted.
	EventReasonEvicted = "evictPodSuccess"
	// EventReasonEvictFailed is the reason of the Event on a pod whose eviction the apiserver refused or failed.
	EventReasonEvictFailed = "evictPodFail"
)

const (
	// DefaultQPS is the token bucket's refill rate, in evictions per second.
	DefaultQPS = 1
	// DefaultBurst is the token bucket's size.
	DefaultBurst = 3
	// DefaultCoolDown is how long a pod that was evicted is not asked for again.
	DefaultCoolDown = time.Minute
	// DefaultBudget is the most evictions per DefaultBudgetWindow.
	DefaultBudget = 20
	// DefaultBudgetWindow is the rolling window of the budget.
	DefaultBudgetWindow = time.Minute
)

// Evictor evicts pods through the Eviction API under a per-pod cool-down, a global budget and a token bucket.
// It is safe for concurrent use.
type Evictor struct {
	kube     kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.PassiveClock
	limiter  flowcontrol.PassiveRateLimiter
	metrics  *Metrics

	coolDown     time.Duration
	budget       int
	budgetWindow time.Duration

	mu sync.Mutex
	// evicted holds when each pod was last evicted (or is being evicted), for the cool-down.
	evicted map[types.UID]time.Time
	// recent are the times of the evictions within the budget window, oldest first.
	recent []time.Time
}

type config struct {
	clock        clock.PassiveClock
	qps          float32
	burst        int
	coolDown     time.Duration
	budget       int
	budgetWindow time.Duration
	metrics      *Metrics
}

// Option configures an Evictor.
type Option func(*config)

// WithClock sets the clock of the cool-down, the budget and the token bucket.
func WithClock(c clock.PassiveClock) Option { return func(o *config) { o.clock = c } }

// WithRateLimit sets the token bucket: qps evictions per second, at most burst at once. Values below or equal
// to 0 keep the defaults.
func WithRateLimit(qps float32, burst int) Option {
	return func(o *config) {
		if qps > 0 {
			o.qps = qps
		}
		if burst > 0 {
			o.burst = burst
		}
	}
}

// WithCoolDown sets how long an evicted pod is not asked for again. A value below or equal to 0 keeps the
// default.
func WithCoolDown(d time.Duration) Option {
	return func(o *config) {
		if d > 0 {
			o.coolDown = d
		}
	}
}

// WithBudget allows at most n evictions per rolling window. Values below or equal to 0 keep the defaults.
func WithBudget(n int, window time.Duration) Option {
	return func(o *config) {
		if n > 0 {
			o.budget = n
		}
		if window > 0 {
			o.budgetWindow = window
		}
	}
}

// WithMetrics sets the collectors the Evictor counts into.
func WithMetrics(m *Metrics) Option { return func(o *config) { o.metrics = m } }

// New returns an Evictor that evicts through kube and records Events with recorder.
func New(kube kubernetes.Interface, recorder record.EventRecorder, opts ...Option) *Evictor {
	o := config{
		clock:        clock.RealClock{},
		qps:          DefaultQPS,
		burst:        DefaultBurst,
		coolDown:     DefaultCoolDown,
		budget:       DefaultBudget,
		budgetWindow: DefaultBudgetWindow,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.metrics == nil {
		o.metrics = NewMetrics()
	}
	return &Evictor{
		kube:         kube,
		recorder:     recorder,
		clock:        o.clock,
		limiter:      flowcontrol.NewTokenBucketPassiveRateLimiterWithClock(o.qps, o.burst, o.clock),
		metrics:      o.metrics,
		coolDown:     o.coolDown,
		budget:       o.budget,
		budgetWindow: o.budgetWindow,
		evicted:      map[types.UID]time.Time{},
	}
}

// Evict asks the apiserver to evict pod and reports whether the pod was evicted. reason (UpperCamelCase, e.g.
// EvictPodByNodeMemoryUsage) says why and message carries the numbers that caused the eviction. As in
// Koordinator, an accepted eviction records a Warning Event evictPodSuccess on the pod and one the apiserver
// refused or failed an evictPodFail, both with the message "evict Pod:<namespace>/<name>, reason: <reason>,
// message: <message>". A refusal by a safety limit, a pod the apiserver no longer has and a 429 from the
// apiserver (e.g. a PodDisruptionBudget) return false and no error; other API errors are returned.
func (e *Evictor) Evict(ctx context.Context, pod *corev1.Pod, reason, message string) (bool, error) {
	if pod == nil {
		return false, errors.New("evict: no pod given")
	}
	if reason == "" {
		return false, fmt.Errorf("evict pod %s: empty reason", klog.KObj(pod))
	}
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "reason", reason)

	now := e.clock.Now()
	if cause := e.reserve(pod.UID, now); cause != "" {
		e.metrics.rejected.WithLabelValues(cause).Inc()
		logger.V(3).Info("Skipped eviction", "cause", cause)
		return false, nil
	}

	eviction := &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		// The UID precondition keeps a new pod that took the name from being evicted in its place.
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
	}
	err := e.kube.PolicyV1().Evictions(pod.Namespace).Evict(ctx, eviction)
	switch {
	case err == nil:
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// The pod is gone, or a new pod has its name: nothing of this one is left to evict. Keep the cool-down
		// so that a stale pod list does not make us ask again, but give the budget back.
		e.release(pod.UID, now, false)
		e.metrics.rejected.WithLabelValues(CausePodGone).Inc()
		logger.V(3).Info("Skipped eviction of a pod that is gone", "err", err)
		return false, nil
	case apierrors.IsTooManyRequests(err):
		e.release(pod.UID, now, true)
		e.metrics.rejected.WithLabelValues(CauseDisallowed).Inc()
		e.event(logger, pod, EventReasonEvictFailed, fmt.Sprintf("%s, error %v", eventMessage(pod, reason, message), err))
		logger.V(2).Info("Eviction was disallowed by the apiserver", "err", err)
		return false, nil
	default:
		e.release(pod.UID, now, true)
		e.metrics.rejected.WithLabelValues(CauseError).Inc()
		e.event(logger, pod, EventReasonEvictFailed, fmt.Sprintf("%s, error %v", eventMessage(pod, reason, message), err))
		return false, fmt.Errorf("evict pod %s: %w", klog.KObj(pod), err)
	}

	e.metrics.evictions.WithLabelValues(reason).Inc()
	e.event(logger, pod, EventReasonEvicted, eventMessage(pod, reason, message))
	logger.Info("Evicted pod", "message", message)
	return true, nil
}

// eventMessage is the message of the Events of an eviction, Koordinator's.
func eventMessage(pod *corev1.Pod, reason, message string) string {
	return fmt.Sprintf("evict Pod:%s/%s, reason: %s, message: %s", pod.Namespace, pod.Name, reason, message)
}

// event records a Warning Event on pod.
func (e *Evictor) event(logger klog.Logger, pod *corev1.Pod, reason, message string) {
	recorder := e.recorder
	if rl, ok := recorder.(record.EventRecorderLogger); ok {
		recorder = rl.WithLogger(logger)
	}
	recorder.Event(pod, corev1.EventTypeWarning, reason, message)
}

// reserve checks the cool-down, the budget and the token bucket, in that order, and on success records the
// eviction of uid at now so that concurrent callers see it. It returns the cause of a refusal, or "".
func (e *Evictor) reserve(uid types.UID, now time.Time) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.prune(now)
	if _, ok := e.evicted[uid]; ok {
		return CauseCoolDown
	}
	if len(e.recent) >= e.budget {
		return CauseBudgetExhausted
	}
	if !e.limiter.TryAccept() {
		return CauseRateLimited
	}
	e.evicted[uid] = now
	e.recent = append(e.recent, now)
	return ""
}

// release undoes what reserve recorded at now for an eviction that did not happen: the budget entry always,
// the cool-down entry when dropCoolDown is set (so that the pod may be asked for again in the next round).
func (e *Evictor) release(uid types.UID, now time.Time, dropCoolDown bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if i := slicesLastIndex(e.recent, now); i >= 0 {
		e.recent = append(e.recent[:i], e.recent[i+1:]...)
	}
	if dropCoolDown && e.evicted[uid].Equal(now) {
		delete(e.evicted, uid)
	}
}

// prune forgets the evictions older than the cool-down and the budget window, so that memory stays bounded by
// the number of evictions per window.
func (e *Evictor) prune(now time.Time) {
	for uid, t := range e.evicted {
		if now.Sub(t) >= e.coolDown {
			delete(e.evicted, uid)
		}
	}
	i := 0
	for i < len(e.recent) && now.Sub(e.recent[i]) >= e.budgetWindow {
		i++
	}
	e.recent = e.recent[i:]
}

// slicesLastIndex returns the index of the last element of ts equal to t, or -1.
func slicesLastIndex(ts []time.Time, t time.Time) int {
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Equal(t) {
			return i
		}
	}
	return -1
}
