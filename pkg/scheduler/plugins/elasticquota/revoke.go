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

package elasticquota

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// ReasonQuotaOverUsedRevoked is the reason of the event on a pod evicted because its quota used more than
// its runtime quota for too long.
const ReasonQuotaOverUsedRevoked = "QuotaOverUsedRevoked"

// revoker evicts pods of quotas that stay over their runtime quota.
type revoker struct {
	p *Plugin
	// overSince is when each quota was first seen over its runtime quota, since it last was not.
	overSince map[string]time.Time
}

// runRevoker checks the quotas every revokePodInterval until ctx ends: a quota whose used resources have
// exceeded its runtime quota for delayEvictTime gives back pods (see cache.Manager.RevokeVictims), which are
// evicted through the Eviction API.
func (p *Plugin) runRevoker(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("revoke")
	ctx = klog.NewContext(ctx, logger)
	r := &revoker{p: p, overSince: map[string]time.Time{}}
	plugins.Every(ctx, p.clock, p.args.RevokePodInterval.Duration, func() { r.revoke(ctx) })
}

// revoke runs one check.
func (r *revoker) revoke(ctx context.Context) {
	now := r.p.clock.Now()
	over := map[string]cache.OverUse{}
	for _, o := range r.p.manager.OverUsed() {
		over[o.Quota] = o
	}
	for name := range r.overSince {
		if _, ok := over[name]; !ok {
			delete(r.overSince, name)
		}
	}
	for name, o := range over {
		since, ok := r.overSince[name]
		if !ok {
			r.overSince[name] = now
			continue
		}
		if now.Sub(since) < r.p.args.DelayEvictTime.Duration {
			continue
		}
		// Start over: evicted pods take a while to go, and must not be evicted twice.
		r.overSince[name] = now
		for _, pod := range r.p.manager.RevokeVictims(name) {
			r.evict(ctx, pod, o)
		}
	}
}

// evict evicts pod for its quota's over-use and records an event on it naming the quota and the numbers.
func (r *revoker) evict(ctx context.Context, pod *corev1.Pod, o cache.OverUse) {
	logger := klog.FromContext(ctx)
	message := fmt.Sprintf("quota %q used more than its %s for %v: %s", o.Quota, limitName(r.p.args.EnableRuntimeQuota), r.p.args.DelayEvictTime.Duration, overUseText(o))
	// The UID precondition keeps a new pod of the same name safe.
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}}
	err := r.p.handle.ClientSet().PolicyV1().Evictions(pod.Namespace).Evict(ctx, eviction)
	if apierrors.IsNotFound(err) || (apierrors.IsConflict(err) && r.replaced(ctx, pod)) {
		// The apiserver no longer has the pod (or has another of that name): it uses nothing. A deletion the
		// informer did not deliver (the apiserver restarting meanwhile) would otherwise keep it charged to the
		// quota, and the quota over its runtime, for good.
		r.p.manager.DeletePod(pod.UID)
		logger.Info("Forgot a pod of an over-used quota that the apiserver no longer has", "pod", klog.KObj(pod), "uid", pod.UID, "quota", o.Quota)
		return
	}
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Could not evict a pod of an over-used quota", "pod", klog.KObj(pod), "quota", o.Quota)
		return
	}
	r.p.metrics.QuotaRevokedPods.Inc()
	r.p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerRevoker).Inc()
	logger.V(2).Info("Evicted a pod of an over-used quota", "pod", klog.KObj(pod), "quota", o.Quota, "detail", message)
	if rec := r.p.handle.EventRecorder(); rec != nil {
		rec.Eventf(pod, nil, corev1.EventTypeWarning, ReasonQuotaOverUsedRevoked, "Evict", "Evicted: %s", message)
	}
}

// replaced reports whether the apiserver has no pod of pod's name, or one with another UID (a conflict on the
// eviction's UID precondition; a conflict may also come from a PodDisruptionBudget update).
func (r *revoker) replaced(ctx context.Context, pod *corev1.Pod) bool {
	got, err := r.p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	return apierrors.IsNotFound(err) || (err == nil && got.UID != pod.UID)
}

func limitName(runtime bool) string {
	if runtime {
		return "runtime quota"
	}
	return "max"
}

// overUseText lists the resources over their limit, e.g. "cpu used 40 > 32".
func overUseText(o cache.OverUse) string {
	var parts []string
	for _, name := range o.Limit.Names() {
		if used, limit := o.Used[name], o.Limit[name]; used > limit {
			parts = append(parts, fmt.Sprintf("%s used %s > %s", name, quantity.Format(name, used), quantity.Format(name, limit)))
		}
	}
	return strings.Join(parts, ", ")
}
