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

package resctrl

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

func TestCATMask(t *testing.T) {
	cases := map[string]struct {
		cbm        string
		minBits    int
		start, end int64
		want       string
		wantErr    string
	}{
		// 11 ways, as the default BE range and Koordinator's examples.
		"11-ways/0-100":  {cbm: "7ff", start: 0, end: 100, want: "7ff"},
		"11-ways/0-30":   {cbm: "7ff", start: 0, end: 30, want: "f"},
		"11-ways/10-50":  {cbm: "7ff", start: 10, end: 50, want: "3c"},
		"11-ways/30-100": {cbm: "7ff", start: 30, end: 100, want: "7f0"},
		"11-ways/0-1":    {cbm: "7ff", start: 0, end: 1, want: "1"},
		"11-ways/99-100": {cbm: "7ff", start: 99, end: 100, wantErr: "select 0 of 11 cache ways"},
		"11-ways/1-5":    {cbm: "7ff", start: 1, end: 5, wantErr: "select 0 of 11 cache ways"},
		// 12 ways.
		"12-ways/0-30":   {cbm: "fff", start: 0, end: 30, want: "f"},
		"12-ways/50-100": {cbm: "fff", start: 50, end: 100, want: "fc0"},
		"12-ways/0-100":  {cbm: "fff", start: 0, end: 100, want: "fff"},
		"12-ways/25-75":  {cbm: "fff", start: 25, end: 75, want: "1f8"},
		// 20 ways.
		"20-ways/0-30":   {cbm: "fffff", start: 0, end: 30, want: "3f"},
		"20-ways/10-50":  {cbm: "fffff", start: 10, end: 50, want: "3fc"},
		"20-ways/95-100": {cbm: "fffff", start: 95, end: 100, want: "80000"},
		"20-ways/0-99":   {cbm: "fffff", start: 0, end: 99, want: "fffff"},
		"20-ways/1-2":    {cbm: "fffff", start: 1, end: 2, wantErr: "select 0 of 20 cache ways"},
		// 10 ways, Koordinator's example.
		"10-ways/10-80": {cbm: "3ff", start: 10, end: 80, want: "fe"},
		// The kernel's min_cbm_bits.
		"min-bits/enough":    {cbm: "fffff", minBits: 2, start: 0, end: 10, want: "3"},
		"min-bits/too-few":   {cbm: "fffff", minBits: 2, start: 0, end: 5, wantErr: "select 1 of 20 cache ways; the kernel takes at least 2"},
		"range/start-is-end": {cbm: "7ff", start: 30, end: 30, wantErr: "want 0 <= start < end <= 100"},
		"range/above-100":    {cbm: "7ff", start: 0, end: 101, wantErr: "want 0 <= start < end <= 100"},
		"range/negative":     {cbm: "7ff", start: -1, end: 50, wantErr: "want 0 <= start < end <= 100"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cbm, err := parseCBM("cbm_mask", tc.cbm)
			if err != nil {
				t.Fatal(err)
			}
			got, err := catMask(cbm, tc.minBits, tc.start, tc.end)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("catMask error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, strconv.FormatUint(got, 16)); diff != "" {
				t.Errorf("catMask (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestParseCBM(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    uint64
		wantErr string
	}{
		"11-ways":        {in: "7ff", want: 0x7ff},
		"upper-case":     {in: "FFFFF", want: 0xfffff},
		"not-hex":        {in: "xyz", wantErr: `"xyz" is not a hex bit mask`},
		"empty":          {in: "", wantErr: `"" is not a hex bit mask`},
		"zero":           {in: "0", wantErr: "not a bit mask of contiguous ways from bit 0"},
		"not-from-0":     {in: "7fe", wantErr: "not a bit mask of contiguous ways from bit 0"},
		"with-hole":      {in: "f0f", wantErr: "not a bit mask of contiguous ways from bit 0"},
		"names-the-file": {in: "-1", wantErr: "/r/info/L3/cbm_mask:"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseCBM("/r/info/L3/cbm_mask", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseCBM error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("parseCBM = %#x, want %#x", got, tc.want)
			}
		})
	}
}

func TestMBValue(t *testing.T) {
	intel := &mbInfo{max: mbPercentMax, min: 10, gran: 10}
	fine := &mbInfo{max: mbPercentMax, min: 5, gran: 1}
	amd := &mbInfo{max: mbAMDMax, min: 1, gran: 1}
	cases := map[string]struct {
		mb      *mbInfo
		percent int64
		want    uint64
	}{
		"intel/100":           {mb: intel, percent: 100, want: 100},
		"intel/30":            {mb: intel, percent: 30, want: 30},
		"intel/rounded-up":    {mb: intel, percent: 35, want: 40},
		"intel/1":             {mb: intel, percent: 1, want: 10},
		"intel/0-is-min":      {mb: intel, percent: 0, want: 10},
		"fine/3-below-min":    {mb: fine, percent: 3, want: 5},
		"fine/37":             {mb: fine, percent: 37, want: 37},
		"amd/100-unlimited":   {mb: amd, percent: 100, want: 2048},
		"amd/50":              {mb: amd, percent: 50, want: 80},
		"amd/33-rounded-down": {mb: amd, percent: 33, want: 52},
		"amd/0-is-min":        {mb: amd, percent: 0, want: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := mbValue(tc.mb, tc.percent); got != tc.want {
				t.Errorf("mbValue(%d) = %d, want %d", tc.percent, got, tc.want)
			}
		})
	}
}

func TestParseSchemata(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    map[string]map[int]string
		wantErr string
	}{
		"intel": {
			in:   "L3:0=7ff;1=7ff\nMB:0=100;1=100\n",
			want: map[string]map[int]string{"L3": {0: "7ff", 1: "7ff"}, "MB": {0: "100", 1: "100"}},
		},
		"kernel-aligned-and-padded": {
			in:   "    L3:0=00f;1=00f\n    MB:0=100;1=100\n",
			want: map[string]map[int]string{"L3": {0: "00f", 1: "00f"}, "MB": {0: "100", 1: "100"}},
		},
		"trailing-semicolon": {
			in:   "L3:0=f;\n",
			want: map[string]map[int]string{"L3": {0: "f"}},
		},
		"other-resources": {
			in:   "L2:0=ff\nL3:0=7ff\nSMBA:0=2048\n",
			want: map[string]map[int]string{"L2": {0: "ff"}, "L3": {0: "7ff"}, "SMBA": {0: "2048"}},
		},
		"empty":            {in: "", want: map[string]map[int]string{}},
		"no-colon":         {in: "L3 0=7ff\n", wantErr: `/r/schemata: line 1 "L3 0=7ff": want <resource>:<id>=<value>;...`},
		"domain-no-value":  {in: "L3:0=7ff;1\n", wantErr: `domain "1": want <id>=<value>`},
		"domain-not-int":   {in: "MB:0=100;x=100\n", wantErr: `domain "x=100"`},
		"no-domain":        {in: "L3:\n", wantErr: "no domain"},
		"resource-twice":   {in: "L3:0=f\nL3:0=f\n", wantErr: "line 2 \"L3:0=f\": resource L3 appears twice"},
		"empty-value":      {in: "MB:0=\n", wantErr: `domain "0="`},
		"negative-domains": {in: "MB:-1=10\n", wantErr: `domain "-1=10"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseSchemata("/r/schemata", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseSchemata error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseSchemata (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestClassSchemata(t *testing.T) {
	info := nodeInfo{
		cat: []catInfo{{name: "L3", cbm: 0x7ff, minBits: 1, domains: []int{0, 1}}},
		mb:  &mbInfo{max: 100, min: 10, gran: 10, domains: []int{0, 1}},
	}
	cases := map[string]struct {
		info          nodeInfo
		q             slov1alpha1.ResctrlQOS
		want          string
		wantWays      int
		wantMBPercent int64
		wantErr       string
	}{
		"unset-is-full": {info: info, want: "L3:0=7ff;1=7ff\nMB:0=100;1=100\n", wantWays: 11, wantMBPercent: 100},
		"be-default": {info: info, q: slov1alpha1.ResctrlQOS{CATRangeStartPercent: ptr.To[int64](0), CATRangeEndPercent: ptr.To[int64](30), MBAPercent: ptr.To[int64](100)},
			want: "L3:0=f;1=f\nMB:0=100;1=100\n", wantWays: 4, wantMBPercent: 100},
		"custom": {info: info, q: slov1alpha1.ResctrlQOS{CATRangeStartPercent: ptr.To[int64](10), CATRangeEndPercent: ptr.To[int64](50), MBAPercent: ptr.To[int64](35)},
			want: "L3:0=3c;1=3c\nMB:0=40;1=40\n", wantWays: 4, wantMBPercent: 40},
		"no-ways-keeps-mb": {info: info, q: slov1alpha1.ResctrlQOS{CATRangeStartPercent: ptr.To[int64](1), CATRangeEndPercent: ptr.To[int64](5), MBAPercent: ptr.To[int64](50)},
			want: "MB:0=50;1=50\n", wantMBPercent: 50, wantErr: "L3: catRangeStartPercent 1 and catRangeEndPercent 5 select 0 of 11 cache ways"},
		"cache-only": {info: nodeInfo{cat: info.cat}, q: slov1alpha1.ResctrlQOS{MBAPercent: ptr.To[int64](50)},
			want: "L3:0=7ff;1=7ff\n", wantWays: 11, wantMBPercent: -1},
		"amd-reports-the-percent-asked": {info: nodeInfo{mb: &mbInfo{max: 2048, min: 1, gran: 1, domains: []int{0, 1, 2, 3}}}, q: slov1alpha1.ResctrlQOS{MBAPercent: ptr.To[int64](50)},
			want: "MB:0=80;1=80;2=80;3=80\n", wantMBPercent: 50},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ways, mbPercent, err := classSchemata(tc.info, &tc.q)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("classSchemata error = %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.String()); diff != "" {
				t.Errorf("schemata (-want,+got):\n%s", diff)
			}
			if ways != tc.wantWays || mbPercent != tc.wantMBPercent {
				t.Errorf("ways, MB percent = %d, %d; want %d, %d", ways, mbPercent, tc.wantWays, tc.wantMBPercent)
			}
		})
	}
}
