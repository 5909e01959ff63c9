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

package nodenumaresource

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// TestAllocationMemo checks that allocationOn answers a node's repeated requests from its memo, and computes
// afresh whatever the memo must not answer: a changed allocation on the node, another request, other node
// labels, a pod with Reservations or with an allocation of its own on the node.
func TestAllocationMemo(t *testing.T) {
	args := testArgs()
	p := &Plugin{args: args, cache: cache.New(), defaultBind: extension.CPUBindPolicy(args.DefaultCPUBindPolicy), policyNodes: sets.New[string](), rules: newRules(args)}
	p.cache.SetNode("n1", twoNUMANodes(t))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	pod := func(uid string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}} }
	bound := func(cpus int) *request {
		return &request{shape: shape{cpus: cpus, bind: extension.CPUBindPolicyFullPCPUs}, amounts: quantity.Amounts{corev1.ResourceCPU: int64(cpus) * 1000}}
	}
	describe := func(a *allocation, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		return a.cpus.String()
	}

	first, err := p.allocationOn(pod("a"), bound(2), node, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := p.allocationOn(pod("b"), bound(2), node, nil, nil)
	if again != first {
		t.Errorf("the same request on an unchanged node was computed again (%s, then %s), want the memoized allocation", describe(first, nil), describe(again, nil))
	}
	tooMany1, err1 := p.allocationOn(pod("c"), bound(16), node, nil, nil)
	tooMany2, err2 := p.allocationOn(pod("d"), bound(16), node, nil, nil)
	if err1 == nil || !errors.Is(err2, err1) || tooMany1 != nil || tooMany2 != nil {
		t.Errorf("16 CPUs of 8: got %q then %q, want the same memoized error", describe(tooMany1, err1), describe(tooMany2, err2))
	}

	// Each step changes one input: the answer must be the one computed from scratch.
	steps := []struct {
		name   string
		before func()
		pod    string
		req    *request
		labels map[string]string
		resvs  []types.UID
		want   string
	}{
		{name: "another request", pod: "b", req: bound(4), want: "0-1,4-5"},
		{name: "the node's labels", pod: "b", req: bound(2), labels: map[string]string{extension.LabelNodeCPUBindPolicy: string(extension.NodeCPUBindPolicySpreadByPCPUs)}, want: "0-1"},
		{
			name:   "an allocation on the node",
			before: func() { p.cache.Assume("a", cache.Allocation{Node: "n1", CPUs: first.cpus}) },
			pod:    "b", req: bound(2), want: "2,6",
		},
		// Pod a holds 0,4 now: computed for it, skipping its own allocation.
		{name: "the pod's own allocation", pod: "a", req: bound(2), want: "0,4"},
		{
			name:   "a Reservation the pod may allocate",
			before: func() { p.cache.Assume("r1", cache.Allocation{Node: "n1", CPUs: cpuset.New(3, 7), Reserves: true}) },
			pod:    "b", req: bound(2), resvs: []types.UID{"r1"}, want: "3,7",
		},
		// Without the Reservation, NUMA node 1 would hold it whole (2-3,6-7).
		{name: "the Reservation's CPUs are not free for others", pod: "b", req: bound(4), want: "1-2,5-6"},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		n := node
		if s.labels != nil {
			n = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: s.labels}}
		}
		var got []string
		for range 2 {
			got = append(got, describe(p.allocationOn(pod(s.pod), s.req, n, s.resvs, nil)))
		}
		if diff := cmp.Diff([]string{s.want, s.want}, got); diff != "" {
			t.Errorf("%s: allocations (-want +got):\n%s", s.name, diff)
		}
	}
}

// TestAllocationMemoBounded checks that a node whose usage does not change keeps only its last
// memoizedAllocations answers.
func TestAllocationMemoBounded(t *testing.T) {
	m := &allocations{}
	key := func(i int) allocationKey { return allocationKey{shape: shape{cpus: i}} }
	for i := range memoizedAllocations + 3 {
		m.put(key(i), allocated{err: fmt.Errorf("%d", i)})
	}
	var kept []int
	for i := range memoizedAllocations + 3 {
		if a, ok := m.get(key(i)); ok {
			if a.err.Error() != fmt.Sprint(i) {
				t.Errorf("entry %d holds %v", i, a.err)
			}
			kept = append(kept, i)
		}
	}
	if diff := cmp.Diff([]int{3, 4, 5, 6, 7, 8, 9, 10}, kept); diff != "" {
		t.Errorf("kept entries (-want +got):\n%s", diff)
	}
}
