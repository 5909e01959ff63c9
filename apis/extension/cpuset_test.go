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

package extension

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPUSet(t *testing.T) {
	tests := map[string]struct {
		cpuset  string
		want    []int
		wantErr string
	}{
		"empty":               {cpuset: "", want: nil},
		"blank":               {cpuset: "  ", want: nil},
		"single":              {cpuset: "3", want: []int{3}},
		"range":               {cpuset: "0-3", want: []int{0, 1, 2, 3}},
		"range and single":    {cpuset: "0-3,8", want: []int{0, 1, 2, 3, 8}},
		"unsorted":            {cpuset: "8,0-1", want: []int{0, 1, 8}},
		"overlapping":         {cpuset: "0-3,2-5,4", want: []int{0, 1, 2, 3, 4, 5}},
		"duplicate":           {cpuset: "1,1,1", want: []int{1}},
		"one-element range":   {cpuset: "5-5", want: []int{5}},
		"trailing newline":    {cpuset: "0-1\n", want: []int{0, 1}},
		"leading zeros":       {cpuset: "007", want: []int{7}},
		"max":                 {cpuset: "65535", want: []int{MaxCPUID}},
		"reversed range":      {cpuset: "3-1", wantErr: `cpuset "3-1": element "3-1": range end is before its start`},
		"empty element":       {cpuset: "0,,1", wantErr: `cpuset "0,,1": element "": missing CPU number`},
		"trailing comma":      {cpuset: "0,", wantErr: `cpuset "0,": element "": missing CPU number`},
		"open range":          {cpuset: "0-", wantErr: `cpuset "0-": element "0-": missing CPU number`},
		"negative":            {cpuset: "-1", wantErr: `cpuset "-1": element "-1": missing CPU number`},
		"letters":             {cpuset: "a", wantErr: `cpuset "a": element "a": "a" is not a CPU number`},
		"plus sign":           {cpuset: "+1", wantErr: `cpuset "+1": element "+1": "+1" is not a CPU number`},
		"inner blank":         {cpuset: "0, 1", wantErr: `cpuset "0, 1": element " 1": " 1" is not a CPU number`},
		"double dash":         {cpuset: "1-2-3", wantErr: `cpuset "1-2-3": element "1-2-3": "2-3" is not a CPU number`},
		"stride not accepted": {cpuset: "0-7:2", wantErr: `cpuset "0-7:2": element "0-7:2": "7:2" is not a CPU number`},
		"above max":           {cpuset: "65536", wantErr: `cpuset "65536": element "65536": CPU 65536 is above the maximum 65535`},
		"overflow":            {cpuset: "0-99999999999999999999", wantErr: `cpuset "0-99999999999999999999": element "0-99999999999999999999": CPU 99999999999999999999 is above the maximum 65535`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseCPUSet(tc.cpuset)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("ParseCPUSet(%q) error (-want,+got):\n%s", tc.cpuset, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseCPUSet(%q) (-want,+got):\n%s", tc.cpuset, diff)
			}
		})
	}
}

func TestParseCPUSetManyRanges(t *testing.T) {
	// Many full ranges must cost no more than one.
	cpuset := strings.Repeat("0-65535,", 1000) + "0"
	got, err := ParseCPUSet(cpuset)
	if err != nil {
		t.Fatalf("ParseCPUSet() error: %v", err)
	}
	if diff := cmp.Diff(MaxCPUID+1, len(got)); diff != "" {
		t.Errorf("len(ParseCPUSet()) (-want,+got):\n%s", diff)
	}
}

func TestFormatCPUSet(t *testing.T) {
	tests := map[string]struct {
		cpus []int
		want string
	}{
		"nil":          {cpus: nil, want: ""},
		"single":       {cpus: []int{3}, want: "3"},
		"pair":         {cpus: []int{10, 11}, want: "10-11"},
		"range":        {cpus: []int{0, 1, 2, 3}, want: "0-3"},
		"mixed":        {cpus: []int{8, 0, 2, 1, 3, 10, 11}, want: "0-3,8,10-11"},
		"duplicates":   {cpus: []int{1, 1, 2, 2}, want: "1-2"},
		"negatives":    {cpus: []int{-2, -1, 0}, want: "0"},
		"all separate": {cpus: []int{0, 2, 4}, want: "0,2,4"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FormatCPUSet(tc.cpus)); diff != "" {
				t.Errorf("FormatCPUSet(%v) (-want,+got):\n%s", tc.cpus, diff)
			}
		})
	}
}
