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

package cgroup

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInt(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    int64
		wantErr string
	}{
		"zero":              {in: "0\n", want: 0},
		"plain":             {in: "123456789", want: 123456789},
		"surrounding space": {in: "  42 \n", want: 42},
		"minus one":         {in: "-1\n", want: -1},
		"max int64":         {in: "9223372036854775807", want: math.MaxInt64},
		"min int64":         {in: "-9223372036854775808", want: math.MinInt64},
		"overflow":          {in: "9223372036854775808", wantErr: "out of range"},
		"uint64 overflow":   {in: "99999999999999999999", wantErr: "out of range"},
		"empty":             {in: "\n", wantErr: `parsing "": not an integer`},
		"lone minus":        {in: "-", wantErr: "not an integer"},
		"letters":           {in: "12ab", wantErr: `parsing "12ab": not an integer`},
		"plus sign":         {in: "+1", wantErr: "not an integer"},
		"inner space":       {in: "1 2", wantErr: "not an integer"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseInt([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseInt(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseInt(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParseCPUMax(t *testing.T) {
	tests := map[string]struct {
		in                    string
		wantQuota, wantPeriod int64
		wantErr               string
	}{
		"unlimited":    {in: "max 100000\n", wantQuota: -1, wantPeriod: 100000},
		"limited":      {in: "50000 100000\n", wantQuota: 50000, wantPeriod: 100000},
		"short period": {in: "1000 10000", wantQuota: 1000, wantPeriod: 10000},
		"quota only":   {in: "50000\n", wantErr: `want "<quota|max> <period>"`},
		"empty":        {in: "", wantErr: `want "<quota|max> <period>"`},
		"three fields": {in: "max 100000 1", wantErr: `want "<quota|max> <period>"`},
		"two spaces":   {in: "max  100000", wantErr: `want "<quota|max> <period>"`},
		"max period":   {in: "max max", wantErr: `period: parsing "max": not an integer`},
		"bad quota":    {in: "fifty 100000", wantErr: `quota: parsing "fifty": not an integer`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q, p, err := parseCPUMax([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseCPUMax(%q) = %d, %d, %v; want an error containing %q", tc.in, q, p, err, tc.wantErr)
				}
				return
			}
			if err != nil || q != tc.wantQuota || p != tc.wantPeriod {
				t.Fatalf("parseCPUMax(%q) = %d, %d, %v; want %d, %d", tc.in, q, p, err, tc.wantQuota, tc.wantPeriod)
			}
		})
	}
}

func TestParseBytesLimit(t *testing.T) {
	tests := map[string]struct {
		in   string
		want int64
	}{
		"v2 max":                  {in: "max\n", want: -1},
		"v1 unlimited, 4K pages":  {in: "9223372036854771712\n", want: -1},
		"v1 unlimited, 64K pages": {in: "9223372036854710272\n", want: -1},
		"v1 minus one":            {in: "-1", want: -1},
		"a limit":                 {in: "1073741824\n", want: 1 << 30},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseBytesLimit([]byte(tc.in))
			if err != nil || got != tc.want {
				t.Fatalf("parseBytesLimit(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestStatFields(t *testing.T) {
	const stat = "cache 10\nrss 20\ninactive_file 5\ntotal_inactive_file 7\nbroken\n\ntotal_rss 30"
	tests := map[string]struct {
		keys    []string
		want    []int64
		wantErr string
	}{
		"one key":               {keys: []string{"inactive_file"}, want: []int64{5}},
		"prefix is not a match": {keys: []string{"total_inactive_file"}, want: []int64{7}},
		"several, any order":    {keys: []string{"total_rss", "cache"}, want: []int64{30, 10}},
		"missing":               {keys: []string{"cache", "swap"}, wantErr: "field swap: missing field"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out := make([]int64, len(tc.keys))
			err := statFields([]byte(stat), tc.keys, out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !isMissingField(err) {
					t.Fatalf("statFields = %v; want a missing-field error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("statFields: %v", err)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("values (-want,+got):\n%s", diff)
			}
		})
	}
	if err := statFields([]byte("rss 2x\n"), []string{"rss"}, make([]int64, 1)); err == nil || isMissingField(err) ||
		!strings.Contains(err.Error(), `field rss: parsing "2x": not an integer`) {
		t.Errorf("statFields on a bad value = %v; want a parse error naming the field", err)
	}
}

func TestSharesWeight(t *testing.T) {
	// The vectors of kubelet's TestCpuWeightToCPUShares and TestGetCpuWeight.
	weightToShares := map[int64]int64{1: 2, 2: 28, 3: 54, 4: 80, 245: 6398, 10000: 262144}
	for w, s := range weightToShares {
		if got := WeightToShares(w); got != s {
			t.Errorf("WeightToShares(%d) = %d, want %d", w, got, s)
		}
	}
	sharesToWeight := map[int64]int64{2: 1, 1024: 39, 512: 20, 262144: 10000, 1_000_000_000: 10000, 0: 1}
	for s, w := range sharesToWeight {
		if got := SharesToWeight(s); got != w {
			t.Errorf("SharesToWeight(%d) = %d, want %d", s, got, w)
		}
	}
	// kubelet's formulas truncate, so a round trip may lose one step of
	// weight, never more; SetCPUShares compares weights for that reason.
	for w := int64(1); w <= 10000; w++ {
		if got := SharesToWeight(WeightToShares(w)); got != w && got != w-1 {
			t.Fatalf("SharesToWeight(WeightToShares(%d)) = %d, want %d or %d", w, got, w, w-1)
		}
	}
}
