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

package cpusuppress

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"
)

func TestBEAllowed(t *testing.T) {
	tests := map[string]struct {
		in   Inputs
		want float64
	}{
		// 16 × 65% = 10.4; − 4.2 − max(1.5, 2) = 4.2
		"node reservation above system usage": {
			in:   Inputs{Capacity: 16, ThresholdPercent: 65, NonBEPodsUsage: 4.2, SystemUsage: 1.5, NodeReserved: 2},
			want: 4.2,
		},
		// 16 × 65% = 10.4; − 4.2 − max(3, 2) = 3.2
		"system usage above node reservation": {
			in:   Inputs{Capacity: 16, ThresholdPercent: 65, NonBEPodsUsage: 4.2, SystemUsage: 3, NodeReserved: 2},
			want: 3.2,
		},
		// 4.2 is below 16 × 30% = 4.8
		"raised to the minimum": {
			in:   Inputs{Capacity: 16, ThresholdPercent: 65, MinPercent: ptr.To[int64](30), NonBEPodsUsage: 4.2, SystemUsage: 1.5, NodeReserved: 2},
			want: 4.8,
		},
		// 10.4 − 12 − 2 < 0
		"LS pods use more than the threshold": {
			in:   Inputs{Capacity: 16, ThresholdPercent: 65, NonBEPodsUsage: 12, SystemUsage: 1, NodeReserved: 2},
			want: 0,
		},
		"idle node": {
			in:   Inputs{Capacity: 8, ThresholdPercent: 100},
			want: 8,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := BEAllowed(tc.in); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("BEAllowed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCPUSetSize(t *testing.T) {
	tests := map[string]struct {
		allowed                   float64
		current, total, available int
		want                      int
	}{
		"rounded up":                     {allowed: 4.2, current: 6, total: 16, available: 16, want: 5},
		"exact cores stay exact":         {allowed: 3, current: 3, total: 16, available: 16, want: 3},
		"shrinks at once":                {allowed: 4.2, current: 16, total: 16, available: 16, want: 5},
		"at least two":                   {allowed: 0.3, current: 8, total: 16, available: 16, want: 2},
		"grows by ceil(10% of 16) = 2":   {allowed: 10, current: 2, total: 16, available: 16, want: 4},
		"grows by ceil(10% of 64) = 7":   {allowed: 40, current: 10, total: 64, available: 64, want: 17},
		"no more than BE may use":        {allowed: 10, current: 8, total: 16, available: 3, want: 3},
		"growth limit not hit":           {allowed: 5.5, current: 5, total: 16, available: 16, want: 6},
		"nothing eligible means none":    {allowed: 5, current: 5, total: 16, available: 0, want: 0},
		"zero allowance still keeps two": {allowed: 0, current: 0, total: 16, available: 16, want: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := CPUSetSize(tc.allowed, tc.current, tc.total, tc.available); got != tc.want {
				t.Errorf("CPUSetSize(%v, %d, %d, %d) = %d, want %d", tc.allowed, tc.current, tc.total, tc.available, got, tc.want)
			}
		})
	}
}

func TestCFSQuota(t *testing.T) {
	// A 16-core node with a 100 ms period: 1% is 16000 µs, 10% is 160000 µs.
	tests := map[string]struct {
		allowed   float64
		current   int64
		wantQuota int64
		wantWrite bool
	}{
		"first limit from unlimited":      {allowed: 4.2, current: -1, wantQuota: 420000, wantWrite: true},
		"change below 1% is skipped":      {allowed: 4.3, current: 420000, wantQuota: 420000},
		"increase limited to 10%":         {allowed: 8, current: 420000, wantQuota: 580000, wantWrite: true},
		"decrease is immediate":           {allowed: 1, current: 800000, wantQuota: 100000, wantWrite: true},
		"floor of 2000 us":                {allowed: 0.01, current: 100000, wantQuota: 2000, wantWrite: true},
		"floor is written even if close":  {allowed: 0, current: 10000, wantQuota: 2000, wantWrite: true},
		"floor already set":               {allowed: 0, current: 2000, wantQuota: 2000},
		"increase just under 10% applies": {allowed: 5.7, current: 420000, wantQuota: 570000, wantWrite: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q, w := CFSQuota(tc.allowed, 16, tc.current, 100000)
			if q != tc.wantQuota || w != tc.wantWrite {
				t.Errorf("CFSQuota(%v, 16, %d) = %d, %v; want %d, %v", tc.allowed, tc.current, q, w, tc.wantQuota, tc.wantWrite)
			}
		})
	}
}

// twoNodes is 2 NUMA nodes × 2 cores × 2 hyper-threads: node 0 has cores 0 (CPUs 0, 4) and 1 (1, 5), node 1
// has cores 2 (2, 6) and 3 (3, 7).
var twoNodes = map[int]CPUInfo{
	0: {ID: 0, Core: 0, Node: 0}, 4: {ID: 4, Core: 0, Node: 0},
	1: {ID: 1, Core: 1, Node: 0}, 5: {ID: 5, Core: 1, Node: 0},
	2: {ID: 2, Core: 2, Socket: 1, Node: 1}, 6: {ID: 6, Core: 2, Socket: 1, Node: 1},
	3: {ID: 3, Core: 3, Socket: 1, Node: 1}, 7: {ID: 7, Core: 3, Socket: 1, Node: 1},
}

func TestSelectCPUs(t *testing.T) {
	tests := map[string]struct {
		n        int
		pools    Pools
		topology map[int]CPUInfo
		want     string
	}{
		"no topology: lowest CPUs": {
			n: 3, pools: Pools{LS: cpuset.New(0, 1, 2, 3, 4, 5, 6, 7)}, want: "0-2",
		},
		"siblings together, NUMA nodes in turn": {
			// node 0 core 0 (0, 4), node 1 core 2 (2, 6)
			n: 4, pools: Pools{LS: cpuset.New(0, 1, 2, 3, 4, 5, 6, 7)}, topology: twoNodes, want: "0,2,4,6",
		},
		"an odd count takes one sibling": {
			// node 0 core 0 (0, 4), then one CPU of node 1 core 2
			n: 3, pools: Pools{LS: cpuset.New(0, 1, 2, 3, 4, 5, 6, 7)}, topology: twoNodes, want: "0,2,4",
		},
		"the fuller NUMA node first": {
			// node 1 has 4 eligible CPUs, node 0 only 1, 5
			n: 2, pools: Pools{LS: cpuset.New(1, 5, 2, 3, 6, 7)}, topology: twoNodes, want: "2,6",
		},
		"LSR and LS in proportion": {
			// 4 × 2/6 = 1 (rounded down) from LSR, 3 from LS
			n: 4, pools: Pools{LSR: cpuset.New(4, 5), LS: cpuset.New(0, 1, 2, 3)}, want: "0-2,4",
		},
		"LS too small: the rest from LSR": {
			n: 5, pools: Pools{LSR: cpuset.New(4, 5, 6, 7), LS: cpuset.New(0)}, want: "0,4-7",
		},
		"more than there is": {
			n: 9, pools: Pools{LS: cpuset.New(0, 1)}, want: "0-1",
		},
		"none": {n: 0, pools: Pools{LS: cpuset.New(0, 1)}, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := SelectCPUs(tc.n, tc.pools, tc.topology).String(); got != tc.want {
				t.Errorf("SelectCPUs(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}

func TestSelectCPUsIsStableAndGrowsBySuperset(t *testing.T) {
	pools := Pools{LS: cpuset.New(0, 1, 2, 3, 4, 5, 6, 7)}
	prev := cpuset.New()
	for n := 1; n <= 8; n++ {
		got := SelectCPUs(n, pools, twoNodes)
		if !got.Equals(SelectCPUs(n, pools, twoNodes)) {
			t.Fatalf("SelectCPUs(%d) differs between calls", n)
		}
		if got.Size() != n || !prev.IsSubsetOf(got) {
			t.Errorf("SelectCPUs(%d) = %s, want %d CPUs including %s", n, got, n, prev)
		}
		prev = got
	}
}

func TestReadTopology(t *testing.T) {
	dir := t.TempDir()
	write := func(path, value string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(value), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cpu0/topology/core_id", "0\n")
	write("cpu0/topology/physical_package_id", "0\n")
	write("cpu0/node0/cpulist", "0-1\n")
	write("cpu1/topology/core_id", "4\n")
	write("cpu1/topology/physical_package_id", "1\n")
	write("cpu1/node1/cpulist", "1\n")
	write("cpu2/online", "0\n") // offline: no topology
	write("cpufreq/policy0", "")
	write("online", "0-1\n")

	got, err := ReadTopology(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]CPUInfo{0: {ID: 0, Core: 0, Socket: 0, Node: 0}, 1: {ID: 1, Core: 4, Socket: 1, Node: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadTopology (-want,+got):\n%s", diff)
	}

	write("cpu3/topology/core_id", "x\n")
	if _, err := ReadTopology(dir); err == nil {
		t.Errorf("ReadTopology with a malformed core_id returned no error")
	}
	if _, err := ReadTopology(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("ReadTopology of a missing directory returned no error")
	}
}

func TestBEAllowedPressureRule(t *testing.T) {
	base := Inputs{Capacity: 16, ThresholdPercent: 65, NonBEPodsUsage: 4.2, SystemUsage: 1.5, NodeReserved: 2} // 4.2
	with := func(threshold *int64, pressure float64, minPercent *int64) Inputs {
		in := base
		in.PSIThresholdPercent, in.NonBEPressure, in.MinPercent = threshold, pressure, minPercent
		return in
	}
	tests := map[string]struct {
		in   Inputs
		want float64
	}{
		"rule off":                      {in: with(nil, 80, nil), want: 4.2},
		"pressure below the threshold":  {in: with(ptr.To[int64](10), 9.9, nil), want: 4.2},
		"pressure at the threshold":     {in: with(ptr.To[int64](10), 10, nil), want: 4.2},
		"pressure 4 × the threshold":    {in: with(ptr.To[int64](10), 40, nil), want: 1.05},
		"the floor still holds":         {in: with(ptr.To[int64](10), 40, ptr.To[int64](10)), want: 1.6},
		"nothing left stays nothing":    {in: Inputs{Capacity: 8, ThresholdPercent: 10, NonBEPodsUsage: 4, PSIThresholdPercent: ptr.To[int64](5), NonBEPressure: 50}, want: 0},
		"no samples: pressure 0 is off": {in: with(ptr.To[int64](10), 0, nil), want: 4.2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := BEAllowed(tc.in); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("BEAllowed = %v, want %v", got, tc.want)
			}
		})
	}
}
