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

package migration

import (
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

// maxPerWorkload resolves a per-workload limit for a workload of replicas: limit as a number or a percentage
// of replicas (rounded down, at least 1), else Koordinator's default (10% above 10 replicas, 2 for 4 to 10,
// 1 below). The result is at most replicas.
func maxPerWorkload(replicas int, limit *intstr.IntOrString) (int, error) {
	n := 0
	if limit != nil {
		v, err := intstr.GetScaledValueFromIntOrPercent(limit, replicas, false)
		if err != nil {
			return 0, fmt.Errorf("limit %s: %w", limit.String(), err)
		}
		n = max(v, 1)
	} else {
		switch {
		case replicas > 10:
			n = replicas / 10
		case replicas >= 4:
			n = 2
		default:
			n = 1
		}
	}
	return min(n, replicas), nil
}

// migration is a job that counts against the limits: Running, or Pending and let through by arbitration.
type migration struct {
	pod      types.NamespacedName
	podUID   types.UID
	node     string
	workload types.UID
}

// refusal says which limit keeps a pod from migrating now, with the numbers.
type refusal struct {
	gate    config.EvictionGate
	message string
	// retryAfter is when the limit may allow it again, when the limit knows (the object limiter's window).
	retryAfter time.Duration
}

// limits checks the arbitration limits of MigrationControllerArgs against the migrations in progress.
type limits struct {
	args *config.MigrationControllerArgs
	skip map[config.EvictionGate]bool
}

// check returns why pod, of workload w (nil for a bare pod), may not start migrating while migrating are in
// progress, or nil when it may. Migrations of pod itself do not count.
func (l *limits) check(pod *corev1.Pod, w *workload, migrating []migration) *refusal {
	others := slices.DeleteFunc(slices.Clone(migrating), func(m migration) bool {
		return m.podUID == pod.UID || m.pod == types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	})
	count := func(match func(m migration) bool) int {
		n := 0
		for _, m := range others {
			if match(m) {
				n++
			}
		}
		return n
	}
	if limit := ptr.Deref(l.args.MaxMigratingGlobally, 0); limit > 0 && !l.skip[config.EvictionGateMaxMigratingGlobally] {
		if n := len(others); n >= int(limit) {
			return &refusal{gate: config.EvictionGateMaxMigratingGlobally, message: fmt.Sprintf("%d pods are migrating in the cluster, maxMigratingGlobally is %d", n, limit)}
		}
	}
	if limit := ptr.Deref(l.args.MaxMigratingPerNode, 0); limit > 0 && pod.Spec.NodeName != "" && !l.skip[config.EvictionGateMaxMigratingPerNode] {
		if n := count(func(m migration) bool { return m.node == pod.Spec.NodeName }); n >= int(limit) {
			return &refusal{gate: config.EvictionGateMaxMigratingPerNode, message: fmt.Sprintf("%d pods of node %s are migrating, maxMigratingPerNode is %d", n, pod.Spec.NodeName, limit)}
		}
	}
	if limit := ptr.Deref(l.args.MaxMigratingPerNamespace, 0); limit > 0 && !l.skip[config.EvictionGateMaxMigratingPerNamespace] {
		if n := count(func(m migration) bool { return m.pod.Namespace == pod.Namespace }); n >= int(limit) {
			return &refusal{gate: config.EvictionGateMaxMigratingPerNamespace, message: fmt.Sprintf("%d pods of namespace %s are migrating, maxMigratingPerNamespace is %d", n, pod.Namespace, limit)}
		}
	}
	if w == nil {
		return nil
	}
	mine := count(func(m migration) bool { return m.workload == w.ref.UID })
	if !l.skip[config.EvictionGateMaxMigratingPerWorkload] {
		limit, err := maxPerWorkload(w.replicas, l.args.MaxMigratingPerWorkload)
		if err != nil {
			return &refusal{gate: config.EvictionGateMaxMigratingPerWorkload, message: err.Error()}
		}
		if mine > 0 && mine >= limit {
			return &refusal{gate: config.EvictionGateMaxMigratingPerWorkload, message: fmt.Sprintf("%d pods of %s (%d replicas) are migrating, maxMigratingPerWorkload is %d", mine, w, w.replicas, limit)}
		}
	}
	if !l.skip[config.EvictionGateMaxUnavailablePerWorkload] {
		limit, err := maxPerWorkload(w.replicas, l.args.MaxUnavailablePerWorkload)
		if err != nil {
			return &refusal{gate: config.EvictionGateMaxUnavailablePerWorkload, message: err.Error()}
		}
		if n := unavailable(w, others); n >= limit {
			return &refusal{gate: config.EvictionGateMaxUnavailablePerWorkload, message: fmt.Sprintf("%d pods of %s (%d replicas) are unavailable or migrating, maxUnavailablePerWorkload is %d", n, w, w.replicas, limit)}
		}
	}
	if !l.skip[config.EvictionGateExpectedReplicas] && !ptr.Deref(l.args.SkipCheckExpectedReplicas, false) {
		ready := 0
		for _, p := range w.pods {
			if isPodActive(p) && podutil.IsPodReady(p) {
				ready++
			}
		}
		if ready < w.replicas {
			return &refusal{gate: config.EvictionGateExpectedReplicas, message: fmt.Sprintf("%d of %d replicas of %s are ready", ready, w.replicas, w)}
		}
	}
	return nil
}

// unavailable counts the pods of w that are not ready, are migrating, or are missing from its replicas.
func unavailable(w *workload, migrating []migration) int {
	moving := map[types.UID]bool{}
	for _, m := range migrating {
		if m.workload == w.ref.UID {
			moving[m.podUID] = true
		}
	}
	active, n := 0, 0
	for _, p := range w.pods {
		if !isPodActive(p) {
			continue
		}
		active++
		if !podutil.IsPodReady(p) || moving[p.UID] {
			n++
		}
	}
	return n + max(w.replicas-active, 0)
}

// objectLimiter bounds the migrations of a workload within a time window (args.objectLimiters), counting the
// evictions this controller made. It forgets evictions older than the window.
type objectLimiter struct {
	args *config.MigrationControllerArgs

	mu        sync.Mutex
	evictions map[types.UID][]time.Time
}

func newObjectLimiter(args *config.MigrationControllerArgs) *objectLimiter {
	return &objectLimiter{args: args, evictions: map[types.UID][]time.Time{}}
}

// window returns the workload limiter's window, or 0 when there is none.
func (o *objectLimiter) window() time.Duration {
	return o.args.ObjectLimiters[config.MigrationLimitObjectWorkload].Duration.Duration
}

// exceeded returns why w may not have another pod evicted at now, or nil.
func (o *objectLimiter) exceeded(w *workload, now time.Time) *refusal {
	d := o.window()
	if w == nil || d <= 0 {
		return nil
	}
	limit := o.args.ObjectLimiters[config.MigrationLimitObjectWorkload].MaxMigrating
	if limit == nil {
		limit = o.args.MaxMigratingPerWorkload
	}
	n, err := maxPerWorkload(w.replicas, limit)
	if err != nil {
		return &refusal{gate: "ObjectLimiter", message: err.Error()}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	recent := o.prune(w.ref.UID, now)
	if len(recent) >= n {
		r := &refusal{gate: "ObjectLimiter", message: fmt.Sprintf("%d pods of %s were evicted in the last %s, the workload limiter allows %d", len(recent), w, d, n)}
		if n > 0 {
			// The window frees a slot when the (len(recent)-n+1)th oldest eviction in it leaves it.
			r.retryAfter = recent[len(recent)-n].Add(d).Sub(now)
		}
		return r
	}
	return nil
}

// record notes an eviction of a pod of the workload uid at now.
func (o *objectLimiter) record(uid types.UID, now time.Time) {
	if uid == "" || o.window() <= 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evictions[uid] = append(o.prune(uid, now), now)
}

// prune drops the evictions of uid outside the window ending at now and returns the rest. o.mu is held.
func (o *objectLimiter) prune(uid types.UID, now time.Time) []time.Time {
	from := now.Add(-o.window())
	recent := slices.DeleteFunc(o.evictions[uid], func(t time.Time) bool { return !t.After(from) })
	if len(recent) == 0 {
		delete(o.evictions, uid)
		return nil
	}
	o.evictions[uid] = recent
	return recent
}
