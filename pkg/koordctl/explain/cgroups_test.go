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

package explain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/pkg/koordlet/podcgroups"
)

func TestCgroupRow(t *testing.T) {
	tests := map[string]struct {
		settings podcgroups.Settings
		want     []string
	}{
		"BE pod on v1 with suppression": {
			settings: podcgroups.Settings{CPUShares: ptr.To[int64](2), CFSQuotaUs: ptr.To[int64](150000), CFSPeriodUs: ptr.To[int64](100000),
				CPUSet: ptr.To("2-5"), CPUIdle: ptr.To[int64](1), MemoryLimitBytes: ptr.To[int64](256 << 20)},
			want: []string{"be", "2", "150000/100000 (1.5 cores)", "2-5", "1", "-", "256Mi", "-/-/-"},
		},
		"unlimited on v2": {
			settings: podcgroups.Settings{CPUShares: ptr.To[int64](1024), CFSQuotaUs: ptr.To[int64](-1), CFSPeriodUs: ptr.To[int64](100000),
				MemoryLimitBytes: ptr.To[int64](-1), MemoryMinBytes: ptr.To[int64](0), MemoryLowBytes: ptr.To[int64](64 << 20), MemoryHighBytes: ptr.To[int64](-1)},
			want: []string{"be", "1024", "unlimited", "-", "-", "-", "max", "0/64Mi/max"},
		},
		"nothing read": {want: []string{"be", "-", "-", "-", "-", "-", "-", "-/-/-"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, cgroupRow("be", &tc.settings)); diff != "" {
				t.Errorf("cgroupRow (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestPrintCgroups: the table has a row for the pod and each container, and the errors under it.
func TestPrintCgroups(t *testing.T) {
	x := &PodExplanation{Namespace: "ns", Name: "be", Phase: "Running", Cgroups: &podcgroups.Pod{
		CgroupVersion: "v1",
		Pod:           podcgroups.Settings{Dir: "/kubepods/besteffort/poduid", CPUShares: ptr.To[int64](2)},
		Containers: []podcgroups.Container{{Name: "main", Settings: podcgroups.Settings{
			Dir: "/kubepods/besteffort/poduid/c1", Errors: []string{"cpuset: permission denied"},
		}}},
	}}
	var b strings.Builder
	if err := Print(&b, OutputTable, x); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Cgroups (cgroup v1, as the node's koordlet reads them)", "pod ", "main ", "/kubepods/besteffort/poduid/c1: cpuset: permission denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	x.Cgroups, x.CgroupsUnavailable = nil, "node n1 is simulated (KWOK): it has no cgroups"
	b.Reset()
	if err := Print(&b, OutputTable, x); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "not read: node n1 is simulated") {
		t.Errorf("output lacks why the cgroups were not read:\n%s", b.String())
	}
}
