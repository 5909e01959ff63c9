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
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxCPUID is the highest logical CPU number ParseCPUSet accepts. It bounds
// the memory a hostile range such as "0-4294967295" could make it allocate.
const MaxCPUID = 1<<16 - 1

// ParseCPUSet parses a Linux CPU list such as "0-3,8,10-11" and returns the
// CPUs it names, sorted and without duplicates. The empty string is the empty
// set. Each element is a CPU number or an inclusive range "lo-hi" with
// lo <= hi; numbers are unsigned base-10 and at most MaxCPUID. Blanks around
// the whole list are ignored, blanks inside it are not.
func ParseCPUSet(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	type span struct{ lo, hi int }
	var spans []span
	for elem := range strings.SplitSeq(s, ",") {
		loStr, hiStr, isRange := strings.Cut(elem, "-")
		lo, err := parseCPUID(loStr)
		if err != nil {
			return nil, fmt.Errorf("cpuset %q: element %q: %w", s, elem, err)
		}
		hi := lo
		if isRange {
			if hi, err = parseCPUID(hiStr); err != nil {
				return nil, fmt.Errorf("cpuset %q: element %q: %w", s, elem, err)
			}
			if hi < lo {
				return nil, fmt.Errorf("cpuset %q: element %q: range end is before its start", s, elem)
			}
		}
		spans = append(spans, span{lo, hi})
	}
	// Expand the spans only after merging them, so that repeated or
	// overlapping ranges cost no more than MaxCPUID+1 entries.
	slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
	var cpus []int
	next := 0 // lowest CPU not yet in cpus
	for _, sp := range spans {
		for cpu := max(sp.lo, next); cpu <= sp.hi; cpu++ {
			cpus = append(cpus, cpu)
		}
		next = max(next, sp.hi+1)
	}
	return cpus, nil
}

// parseCPUID parses one unsigned base-10 CPU number no greater than
// MaxCPUID.
func parseCPUID(s string) (int, error) {
	if s == "" {
		return 0, errors.New("missing CPU number")
	}
	if strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxCPUID {
		return 0, fmt.Errorf("CPU %s is above the maximum %d", s, MaxCPUID)
	}
	return n, nil
}

// FormatCPUSet returns the canonical Linux CPU list of cpus: sorted, without
// duplicates, with runs of consecutive CPUs written as ranges
// ("0-3,8,10-11"), as the kernel writes them. Negative numbers are skipped.
func FormatCPUSet(cpus []int) string {
	sorted := slices.Compact(slices.Sorted(slices.Values(cpus)))
	var b strings.Builder
	for i := 0; i < len(sorted); {
		if sorted[i] < 0 {
			i++
			continue
		}
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(sorted[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(sorted[j]))
		}
		i = j + 1
	}
	return b.String()
}
