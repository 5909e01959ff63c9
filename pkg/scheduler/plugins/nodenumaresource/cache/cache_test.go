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

package cache_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// node is 2 NUMA nodes of 2 cores × 2 threads: NUMA node 0 has CPUs 0, 1, 4, 5; node 1 CPUs 2, 3, 6, 7.
func node(t *testing.T) *cache.Node {
	t.Helper()
	nrt := &topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	var detail []extension.CPUInfo
	for th := range 2 {
		for core := range 4 {
			detail = append(detail, extension.CPUInfo{ID: int32(th*4 + core), Core: int32(core), Socket: int32(core / 2), Node: int32(core / 2)})
		}
	}
	if err := extension.SetCPUTopology(nrt, &extension.CPUTopology{Detail: detail}); err != nil {
		t.Fatal(err)
	}
	for id := range 2 {
		nrt.Zones = append(nrt.Zones, topologyv1alpha1.Zone{Name: fmt.Sprintf("node-%d", id), Type: "Node", Resources: topologyv1alpha1.ResourceInfoList{
			{Name: "cpu", Allocatable: resource.MustParse("4")},
			{Name: "memory", Allocatable: resource.MustParse("4Gi")},
		}})
	}
	n, err := cache.NodeFromTopology(nrt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// usage is a Usage in a comparable form.
type usage struct {
	CPUs, Free     string
	NUMA           map[int]string
	Reserved       map[types.UID]string
	ReservedNUMA   map[types.UID]map[int]string
	Single, Shared map[int]int
}

func TestUsage(t *testing.T) {
	gi := int64(1 << 30)
	amounts := func(cpu, memory int64) quantity.Amounts {
		return quantity.Amounts{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory}
	}
	tests := map[string]struct {
		allocs map[types.UID]cache.Allocation
		want   usage
	}{
		"pods on one NUMA node and across two": {
			allocs: map[types.UID]cache.Allocation{
				"alone":  {CPUs: cpuset.New(0, 4), NUMA: map[int]quantity.Amounts{0: amounts(2000, gi)}},
				"across": {CPUs: cpuset.New(1, 2), NUMA: map[int]quantity.Amounts{0: amounts(1000, gi), 1: amounts(1000, gi)}},
				// An unbound pod with a NUMA policy counts by its NUMA resources.
				"unbound": {CPUs: cpuset.New(), NUMA: map[int]quantity.Amounts{1: amounts(500, gi)}},
			},
			want: usage{CPUs: "0-2,4", Free: "3,5-7",
				NUMA:   map[int]string{0: "cpu=3,memory=2Gi", 1: "cpu=1500m,memory=2Gi"},
				Single: map[int]int{0: 1, 1: 1}, Shared: map[int]int{0: 1, 1: 1}},
		},
		// The Reservation holds core 0 and 2 cpu, 2Gi on NUMA node 0; its owner took one CPU of it and 1Gi:
		// NUMA node 0 counts the Reservation's resources once, and the rest stays the Reservation's.
		"an owner's NUMA resources come out of its Reservation's": {
			allocs: map[types.UID]cache.Allocation{
				"resv":  {CPUs: cpuset.New(0, 4), NUMA: map[int]quantity.Amounts{0: amounts(2000, 2*gi)}, Reserves: true},
				"owner": {CPUs: cpuset.New(0), NUMA: map[int]quantity.Amounts{0: amounts(1000, gi)}, Reservation: "resv"},
				// This owner asked more than the Reservation had left: the excess is its own.
				"big owner": {CPUs: cpuset.New(4, 1), NUMA: map[int]quantity.Amounts{0: amounts(2000, 2*gi)}, Reservation: "resv"},
			},
			want: usage{CPUs: "0-1,4", Free: "2-3,5-7",
				NUMA:         map[int]string{0: "cpu=3,memory=3Gi"},
				Reserved:     map[types.UID]string{"resv": ""},
				ReservedNUMA: map[types.UID]map[int]string{"resv": {0: "cpu=0,memory=0"}},
				Single:       map[int]int{0: 3}, Shared: map[int]int{}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := node(t)
			c := cache.New()
			c.SetNode("n1", n)
			for uid, a := range tc.allocs {
				a.Node = "n1"
				c.SetBound(uid, a)
			}
			u := c.Usage("n1", n, "")
			got := usage{CPUs: u.CPUs.String(), Free: u.Free.String(), NUMA: map[int]string{}, Single: u.Single, Shared: u.Shared}
			for id, a := range u.NUMA {
				got.NUMA[id] = a.String()
			}
			for uid, cpus := range u.Reserved {
				if got.Reserved == nil {
					got.Reserved = map[types.UID]string{}
				}
				got.Reserved[uid] = cpus.String()
			}
			for uid, numa := range u.ReservedNUMA {
				if got.ReservedNUMA == nil {
					got.ReservedNUMA = map[types.UID]map[int]string{}
				}
				got.ReservedNUMA[uid] = map[int]string{}
				for id, a := range numa {
					got.ReservedNUMA[uid][id] = a.String()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Usage (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestUsageDerived checks the lifetime of Usage.Derived: shared by the Usages of one memo, new once an
// allocation on the node or its Node changes, and absent from a Usage computed for one pod.
func TestUsageDerived(t *testing.T) {
	c := cache.New()
	n := node(t)
	c.SetNode("n1", n)
	derived := func(skip types.UID) any {
		d := c.Usage("n1", n, skip).Derived
		if d == nil {
			return nil
		}
		v, _ := d.LoadOrStore("probe", new(int))
		return v
	}
	first := derived("")
	if first == nil {
		t.Fatal("a memoized Usage has no Derived")
	}
	if got := derived("someone"); got != first {
		t.Error("a second Usage of an unchanged node has another Derived")
	}
	c.Assume("p1", cache.Allocation{Node: "n1", CPUs: cpuset.New(0)})
	afterAssume := derived("")
	if afterAssume == first {
		t.Error("Derived survived an allocation on the node")
	}
	if got := derived("p1"); got != nil {
		t.Error("a Usage computed for p1, which holds CPUs on the node, has a Derived")
	}
	n2 := node(t)
	c.SetNode("n1", n2)
	n = n2
	if got := derived(""); got == afterAssume {
		t.Error("Derived survived a new Node")
	}
}
