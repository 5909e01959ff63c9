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

package collector

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProcStat(t *testing.T) {
	tests := map[string]struct {
		in   string
		want cpuTimes
	}{
		"current kernel": {
			// user nice system idle iowait irq softirq steal guest guest_nice
			in:   "cpu  100 10 50 1000 20 5 15 7 30 3\ncpu0 50 5 25 500 10 2 7 3 15 1\ncpu1 50 5 25 500 10 3 8 4 15 2\nintr 1 2\n",
			want: cpuTimes{busy: 100 + 10 + 50 + 5 + 15, total: 100 + 10 + 50 + 1000 + 20 + 5 + 15 + 7, cpus: 2},
		},
		"old kernel with four fields": {
			in:   "cpu  100 10 50 1000\ncpu0 100 10 50 1000\n",
			want: cpuTimes{busy: 160, total: 1160, cpus: 1},
		},
		"cpu lines end the scan": {
			in:   "cpu  1 0 0 1 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0\nintr 5\ncpu3 is not a cpu line here\n",
			want: cpuTimes{busy: 1, total: 2, cpus: 3},
		},
		"no trailing newline": {
			in:   "cpu 7 0 0 3\ncpu0 7 0 0 3",
			want: cpuTimes{busy: 7, total: 10, cpus: 1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(cpuTimes{})); diff != "" {
				t.Errorf("parseProcStat (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestParseMeminfo(t *testing.T) {
	in := "MemTotal:       16318480 kB\nMemFree:         1234567 kB\nMemAvailable:   9876543 kB\nBuffers:          123456 kB\nHugePages_Total:       0\n"
	got, err := parseMeminfo([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := memInfo{total: 16318480 << 10, free: 1234567 << 10, available: 9876543 << 10}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(memInfo{})); diff != "" {
		t.Errorf("parseMeminfo (-want,+got):\n%s", diff)
	}
}
