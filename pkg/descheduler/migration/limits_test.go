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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

func TestMaxPerWorkload(t *testing.T) {
	tests := map[string]struct {
		replicas int
		limit    *intstr.IntOrString
		want     int
	}{
		"default 1 replica":     {replicas: 1, want: 1},
		"default 3 replicas":    {replicas: 3, want: 1},
		"default 4 replicas":    {replicas: 4, want: 2},
		"default 10 replicas":   {replicas: 10, want: 2},
		"default 11 replicas":   {replicas: 11, want: 1},
		"default 25 replicas":   {replicas: 25, want: 2},
		"default 100 replicas":  {replicas: 100, want: 10},
		"number":                {replicas: 10, limit: ptr.To(intstr.FromInt32(3)), want: 3},
		"number above replicas": {replicas: 2, limit: ptr.To(intstr.FromInt32(5)), want: 2},
		"percentage":            {replicas: 10, limit: ptr.To(intstr.FromString("30%")), want: 3},
		"small percentage":      {replicas: 10, limit: ptr.To(intstr.FromString("1%")), want: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := maxPerWorkload(tc.replicas, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("maxPerWorkload(%d, %v) = %d, want %d", tc.replicas, tc.limit, got, tc.want)
			}
		})
	}
}

// testWorkload returns a Deployment ns/web of replicas with ready pods p0... (notReady of them not ready).
func testWorkload(replicas, existing, notReady int) *workload {
	w := &workload{ref: metav1.OwnerReference{Kind: "Deployment", Name: "web", UID: "web"}, namespace: "ns", replicas: replicas}
	for i := range existing {
		p := makePod(fmt.Sprintf("p%d", i))
		if i < notReady {
			p.Status.Conditions = nil
		}
		w.pods = append(w.pods, p)
	}
	return w
}

func migrating(workload types.UID, node string, pods ...string) []migration {
	var out []migration
	for _, p := range pods {
		out = append(out, migration{pod: types.NamespacedName{Namespace: "ns", Name: p}, podUID: types.UID("uid-" + p), node: node, workload: workload})
	}
	return out
}

func TestLimitsCheck(t *testing.T) {
	skipAll := func(a *config.MigrationControllerArgs) {
		a.SkipEvictionGates = []config.EvictionGate{config.EvictionGateMaxMigratingPerWorkload, config.EvictionGateMaxUnavailablePerWorkload, config.EvictionGateExpectedReplicas}
	}
	tests := map[string]struct {
		args      func(a *config.MigrationControllerArgs)
		pod       *corev1.Pod
		w         *workload
		migrating []migration
		want      *refusal
	}{
		"nothing migrating": {pod: makePod("p9"), w: testWorkload(10, 10, 0)},
		"10 replicas, 2 migrating, default limit 2": {
			pod: makePod("p9"), w: testWorkload(10, 10, 0), migrating: migrating("web", "other", "p0", "p1"),
			args: func(a *config.MigrationControllerArgs) {
				a.SkipEvictionGates = []config.EvictionGate{config.EvictionGateMaxUnavailablePerWorkload}
			},
			want: &refusal{gate: config.EvictionGateMaxMigratingPerWorkload, message: "2 pods of Deployment ns/web (10 replicas) are migrating, maxMigratingPerWorkload is 2"},
		},
		"10 replicas, 1 migrating, default limit 2": {
			pod: makePod("p9"), w: testWorkload(10, 10, 0), migrating: migrating("web", "other", "p0"),
		},
		"own migration does not count": {
			pod: makePod("p1"), w: testWorkload(10, 10, 0), migrating: migrating("web", "other", "p0", "p1"),
		},
		"10 replicas, 2 migrating, gate skipped": {
			pod: makePod("p9"), w: testWorkload(10, 10, 0), migrating: migrating("web", "other", "p0", "p1"),
			args: skipAll,
		},
		"3 replicas, 1 migrating": {
			pod: makePod("p2"), w: testWorkload(3, 3, 0), migrating: migrating("web", "other", "p0"),
			want: &refusal{gate: config.EvictionGateMaxMigratingPerWorkload, message: "1 pods of Deployment ns/web (3 replicas) are migrating, maxMigratingPerWorkload is 1"},
		},
		"other workload migrating": {
			pod: makePod("p2"), w: testWorkload(3, 3, 0), migrating: migrating("db", "other", "x0"),
		},
		"10 replicas, 2 not ready, maxUnavailable 2": {
			pod: makePod("p9"), w: testWorkload(10, 10, 2),
			want: &refusal{gate: config.EvictionGateMaxUnavailablePerWorkload, message: "2 pods of Deployment ns/web (10 replicas) are unavailable or migrating, maxUnavailablePerWorkload is 2"},
		},
		"10 replicas, 1 not ready, 1 migrating, maxUnavailable 2": {
			pod: makePod("p9"), w: testWorkload(10, 10, 1), migrating: migrating("web", "other", "p5"),
			want: &refusal{gate: config.EvictionGateMaxUnavailablePerWorkload, message: "2 pods of Deployment ns/web (10 replicas) are unavailable or migrating, maxUnavailablePerWorkload is 2"},
		},
		"10 replicas, 1 missing, maxUnavailable 3": {
			pod: makePod("p8"), w: testWorkload(10, 9, 0),
			args: func(a *config.MigrationControllerArgs) { a.MaxUnavailablePerWorkload = ptr.To(intstr.FromInt32(3)) },
			want: &refusal{gate: config.EvictionGateExpectedReplicas, message: "9 of 10 replicas of Deployment ns/web are ready"},
		},
		"10 replicas, 1 missing, expected replicas skipped": {
			pod: makePod("p8"), w: testWorkload(10, 9, 0),
			args: func(a *config.MigrationControllerArgs) {
				a.MaxUnavailablePerWorkload = ptr.To(intstr.FromInt32(3))
				a.SkipCheckExpectedReplicas = ptr.To(true)
			},
		},
		"per node: 2 migrating on n1, default 2": {
			pod: makePod("p9"), w: testWorkload(100, 100, 0), migrating: append(migrating("a", "n1", "x0"), migrating("b", "n1", "y0")...),
			want: &refusal{gate: config.EvictionGateMaxMigratingPerNode, message: "2 pods of node n1 are migrating, maxMigratingPerNode is 2"},
		},
		"per node: 2 migrating on n2": {
			pod: makePod("p9"), w: testWorkload(100, 100, 0), migrating: append(migrating("a", "n2", "x0"), migrating("b", "n2", "y0")...),
		},
		"per node, gate skipped": {
			pod: makePod("p9"), w: testWorkload(100, 100, 0), migrating: append(migrating("a", "n1", "x0"), migrating("b", "n1", "y0")...),
			args: func(a *config.MigrationControllerArgs) {
				a.SkipEvictionGates = []config.EvictionGate{config.EvictionGateMaxMigratingPerNode}
			},
		},
		"per namespace": {
			pod: makePod("p9"), migrating: migrating("a", "n2", "x0"),
			args: func(a *config.MigrationControllerArgs) { a.MaxMigratingPerNamespace = ptr.To[int32](1) },
			want: &refusal{gate: config.EvictionGateMaxMigratingPerNamespace, message: "1 pods of namespace ns are migrating, maxMigratingPerNamespace is 1"},
		},
		"per namespace, gate skipped": {
			pod: makePod("p9"), migrating: migrating("a", "n2", "x0"),
			args: func(a *config.MigrationControllerArgs) {
				a.MaxMigratingPerNamespace = ptr.To[int32](1)
				a.SkipEvictionGates = []config.EvictionGate{config.EvictionGateMaxMigratingPerNamespace}
			},
		},
		"globally": {
			pod: makePod("p9"), migrating: append(migrating("a", "n2", "x0"), migrating("b", "n3", "y0")...),
			args: func(a *config.MigrationControllerArgs) { a.MaxMigratingGlobally = ptr.To[int32](2) },
			want: &refusal{gate: config.EvictionGateMaxMigratingGlobally, message: "2 pods are migrating in the cluster, maxMigratingGlobally is 2"},
		},
		"globally, gate skipped": {
			pod: makePod("p9"), migrating: append(migrating("a", "n2", "x0"), migrating("b", "n3", "y0")...),
			args: func(a *config.MigrationControllerArgs) {
				a.MaxMigratingGlobally = ptr.To[int32](2)
				a.SkipEvictionGates = []config.EvictionGate{config.EvictionGateMaxMigratingGlobally}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := defaultArgs()
			if tc.args != nil {
				tc.args(args)
			}
			c := newTestController(t, args)
			got := c.limits.check(tc.pod, tc.w, tc.migrating)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(refusal{})); diff != "" {
				t.Errorf("check (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestObjectLimiter(t *testing.T) {
	w := testWorkload(3, 3, 0)
	tests := map[string]struct {
		limiter   config.MigrationObjectLimiter
		evictions []time.Duration // ago
		want      *refusal
	}{
		"none yet": {limiter: config.MigrationObjectLimiter{Duration: metav1.Duration{Duration: 5 * time.Minute}}},
		"one within the window": {
			limiter:   config.MigrationObjectLimiter{Duration: metav1.Duration{Duration: 5 * time.Minute}},
			evictions: []time.Duration{time.Minute},
			want: &refusal{gate: "ObjectLimiter", message: "1 pods of Deployment ns/web were evicted in the last 5m0s, the workload limiter allows 1",
				retryAfter: 4 * time.Minute},
		},
		// Three evictions 4, 3 and 1 minute ago, 2 allowed: a slot frees when the one 3 minutes ago leaves.
		"maxMigrating 2, three within": {
			limiter:   config.MigrationObjectLimiter{Duration: metav1.Duration{Duration: 5 * time.Minute}, MaxMigrating: ptr.To(intstr.FromInt32(2))},
			evictions: []time.Duration{4 * time.Minute, 3 * time.Minute, time.Minute},
			want: &refusal{gate: "ObjectLimiter", message: "3 pods of Deployment ns/web were evicted in the last 5m0s, the workload limiter allows 2",
				retryAfter: 2 * time.Minute},
		},
		"one before the window": {
			limiter:   config.MigrationObjectLimiter{Duration: metav1.Duration{Duration: 5 * time.Minute}},
			evictions: []time.Duration{6 * time.Minute},
		},
		"maxMigrating 2, one within": {
			limiter:   config.MigrationObjectLimiter{Duration: metav1.Duration{Duration: 5 * time.Minute}, MaxMigrating: ptr.To(intstr.FromInt32(2))},
			evictions: []time.Duration{time.Minute},
		},
		"no window": {evictions: []time.Duration{time.Second}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := newObjectLimiter(defaultArgs(func(a *config.MigrationControllerArgs) {
				a.ObjectLimiters = config.ObjectLimiterMap{config.MigrationLimitObjectWorkload: tc.limiter}
			}))
			for _, ago := range tc.evictions {
				o.record(w.ref.UID, testNow.Add(-ago))
			}
			if diff := cmp.Diff(tc.want, o.exceeded(w, testNow), cmp.AllowUnexported(refusal{})); diff != "" {
				t.Errorf("exceeded (-want,+got):\n%s", diff)
			}
		})
	}
}
