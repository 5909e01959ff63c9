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
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// The resources of a schemata file the strategy manages.
const (
	// resourceMB is memory bandwidth allocation.
	resourceMB = "MB"
	// schemataFile is a group's allocation, one line per resource.
	schemataFile = "schemata"
	// tasksFile lists the threads of a group, one per line.
	tasksFile = "tasks"
)

// catResources are the cache allocation resources the strategy manages, in the order it writes them: L3, or
// L3CODE and L3DATA when the kernel runs with code/data prioritisation (CDP), which get the same mask.
var catResources = []string{"L3", "L3CODE", "L3DATA"}

// The memory bandwidth units a kernel may use, told by the root group's value, which is the maximum.
const (
	// mbPercentMax is the root value of Intel MBA and ARM MPAM, in percent.
	mbPercentMax = 100
	// mbAMDMax is the root value of AMD's bandwidth allocation: unlimited, in 1/8 GB/s units.
	mbAMDMax = 2048
	// mbAMDPercentBase is what Koordinator takes as 100 % of an AMD CCD's bandwidth, in 1/8 GB/s: 25 GB/s less
	// 20 %, measured on EPYC Milan.
	mbAMDPercentBase = 25 * 8 * 8 / 10
	// defaultMBGranularity is the step of percent values when info/MB/bandwidth_gran is absent, as Koordinator
	// rounds Intel MBA.
	defaultMBGranularity = 10
)

// catInfo is one cache allocation resource of the node.
type catInfo struct {
	// name is the resource, e.g. "L3".
	name string
	// cbm is the mask of all the cache ways, from info/<name>/cbm_mask.
	cbm uint64
	// minBits is the fewest ways a mask may have, from info/<name>/min_cbm_bits (1 when absent).
	minBits int
	// domains are the cache IDs of the root schemata's line.
	domains []int
}

// mbInfo is the node's memory bandwidth allocation.
type mbInfo struct {
	// domains are the domain IDs of the root schemata's MB line.
	domains []int
	// max is the root group's value: mbPercentMax or mbAMDMax.
	max uint64
	// min is the smallest value the kernel takes, from info/MB/min_bandwidth.
	min uint64
	// gran is the step of percent values, from info/MB/bandwidth_gran.
	gran uint64
}

// nodeInfo is what the node's resctrl offers. A nil mb and an empty cat mean the feature is off.
type nodeInfo struct {
	cat []catInfo
	mb  *mbInfo
	// off says, per feature that is off although the root schemata is there, why.
	off []string
}

// available reports whether the strategy has anything to manage.
func (n nodeInfo) available() bool { return len(n.cat) > 0 || n.mb != nil }

// readNodeInfo reads the root schemata and info directory of the resctrl filesystem at root. It returns false
// when resctrl is not mounted there (no root schemata). A file that is there but malformed is an error naming it.
func readNodeInfo(root string) (nodeInfo, bool, error) {
	path := filepath.Join(root, schemataFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nodeInfo{}, false, nil
	}
	if err != nil {
		return nodeInfo{}, false, err
	}
	lines, err := parseSchemata(path, string(b))
	if err != nil {
		return nodeInfo{}, false, err
	}
	var info nodeInfo
	for _, name := range catResources {
		domains, ok := lines[name]
		if !ok {
			continue
		}
		for _, id := range sortedKeys(domains) {
			if _, err := parseValue(path, name, id, domains[id]); err != nil {
				return nodeInfo{}, false, err
			}
		}
		c, ok, err := readCATInfo(root, name)
		if err != nil {
			return nodeInfo{}, false, err
		}
		if !ok {
			info.off = append(info.off, fmt.Sprintf("%s cache allocation: the root schemata has it but info/%s/cbm_mask is missing", name, name))
			continue
		}
		c.domains = sortedKeys(domains)
		info.cat = append(info.cat, c)
	}
	if len(info.cat) == 0 && len(info.off) == 0 {
		info.off = append(info.off, "LLC cache allocation: the root schemata has no L3 line")
	}
	if domains, ok := lines[resourceMB]; ok {
		mb, reason, err := readMBInfo(root, path, domains)
		if err != nil {
			return nodeInfo{}, false, err
		}
		if mb != nil {
			info.mb = mb
		} else {
			info.off = append(info.off, "memory bandwidth allocation: "+reason)
		}
	} else {
		info.off = append(info.off, "memory bandwidth allocation: the root schemata has no MB line")
	}
	return info, info.available(), nil
}

// readCATInfo reads info/<name>: false when its cbm_mask is missing.
func readCATInfo(root, name string) (catInfo, bool, error) {
	dir := filepath.Join(root, "info", name)
	cbmPath := filepath.Join(dir, "cbm_mask")
	b, err := os.ReadFile(cbmPath)
	if errors.Is(err, fs.ErrNotExist) {
		return catInfo{}, false, nil
	}
	if err != nil {
		return catInfo{}, false, err
	}
	cbm, err := parseCBM(cbmPath, strings.TrimSpace(string(b)))
	if err != nil {
		return catInfo{}, false, err
	}
	minBits, ok, err := readUint(filepath.Join(dir, "min_cbm_bits"), 10)
	if err != nil {
		return catInfo{}, false, err
	}
	if !ok || minBits == 0 {
		minBits = 1
	}
	return catInfo{name: name, cbm: cbm, minBits: int(minBits)}, true, nil
}

// parseCBM parses a root capacity bit mask: hex, not zero, all ways from bit 0 up, as the kernel reports the
// mask of the whole cache.
func parseCBM(path, s string) (uint64, error) {
	cbm, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a hex bit mask", path, s)
	}
	if cbm == 0 || cbm&(cbm+1) != 0 {
		return 0, fmt.Errorf("%s: %q is not a bit mask of contiguous ways from bit 0", path, s)
	}
	return cbm, nil
}

// readMBInfo reads info/MB and tells the units from the root values (rootPath's MB line): nil, with the reason,
// when MBA is off for the strategy: info/MB is missing, or the root values are neither percents nor AMD's
// (e.g. the mba_MBps mount option).
func readMBInfo(root, rootPath string, domains map[int]string) (*mbInfo, string, error) {
	dir := filepath.Join(root, "info", resourceMB)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, "the root schemata has it but info/MB is missing", nil
	} else if err != nil {
		return nil, "", err
	}
	var maxValue uint64
	for _, id := range sortedKeys(domains) {
		v, err := parseValue(rootPath, resourceMB, id, domains[id])
		if err != nil {
			return nil, "", err
		}
		if maxValue != 0 && v != maxValue {
			return nil, fmt.Sprintf("the root group's values differ between domains (%d, %d)", maxValue, v), nil
		}
		maxValue = v
	}
	if maxValue != mbPercentMax && maxValue != mbAMDMax {
		return nil, fmt.Sprintf("the root group's value %d is neither a percent (100) nor AMD's (2048)", maxValue), nil
	}
	mb := &mbInfo{domains: sortedKeys(domains), max: maxValue}
	minBW, hasMin, err := readUint(filepath.Join(dir, "min_bandwidth"), 10)
	if err != nil {
		return nil, "", err
	}
	gran, hasGran, err := readUint(filepath.Join(dir, "bandwidth_gran"), 10)
	if err != nil {
		return nil, "", err
	}
	switch {
	case maxValue == mbAMDMax:
		mb.gran = 1
	case hasGran && gran > 0:
		mb.gran = gran
	default:
		mb.gran = defaultMBGranularity
	}
	switch {
	case hasMin:
		mb.min = minBW
	case maxValue == mbPercentMax:
		mb.min = mb.gran
	}
	mb.min = max(mb.min, 1)
	return mb, "", nil
}

// readUint reads a file holding one unsigned number in base: false when the file is missing.
func readUint(path string, base int) (uint64, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %q is not an unsigned number", path, s)
	}
	return v, true, nil
}

// parseSchemata parses a schemata file, e.g. "L3:0=7ff;1=7ff\nMB:0=100;1=100\n", into the raw values of each
// resource by domain ID. Lines may be indented, as the kernel aligns them; resources the strategy does not manage
// (L2, SMBA, ...) are parsed too, so that any malformed line is an error naming path.
func parseSchemata(path, content string) (map[string]map[int]string, error) {
	out := map[string]map[int]string{}
	for i, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		bad := func(reason string) error {
			return fmt.Errorf("%s: line %d %q: %s", path, i+1, line, reason)
		}
		name, rest, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, bad("want <resource>:<id>=<value>;...")
		}
		if _, dup := out[name]; dup {
			return nil, bad("resource " + name + " appears twice")
		}
		domains := map[int]string{}
		for d := range strings.SplitSeq(rest, ";") {
			d = strings.TrimSpace(d)
			if d == "" {
				continue
			}
			idStr, value, ok := strings.Cut(d, "=")
			id, err := strconv.Atoi(strings.TrimSpace(idStr))
			value = strings.TrimSpace(value)
			if !ok || err != nil || id < 0 || value == "" {
				return nil, bad(fmt.Sprintf("domain %q: want <id>=<value>", d))
			}
			domains[id] = value
		}
		if len(domains) == 0 {
			return nil, bad("no domain")
		}
		out[name] = domains
	}
	return out, nil
}

// parseValue parses the raw value of a domain of resource: hex for cache masks, decimal for bandwidth.
func parseValue(path, resource string, id int, raw string) (uint64, error) {
	base, what := 10, "a number"
	if resource != resourceMB {
		base, what = 16, "a hex bit mask"
	}
	v, err := strconv.ParseUint(raw, base, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s domain %d: %q is not %s", path, resource, id, raw, what)
	}
	return v, nil
}

// catMask returns the mask of the ways [⌈ways×start/100⌉, ⌈ways×end/100⌉) of the cache whose full mask is cbm,
// as Koordinator computes it: with 11 ways, 0–30 % is 0xf and 10–50 % is 0x3c. It fails when the range is not
// 0 <= start < end <= 100 or selects fewer than minBits ways.
func catMask(cbm uint64, minBits int, start, end int64) (uint64, error) {
	if start < 0 || end > 100 || start >= end {
		return 0, fmt.Errorf("catRangeStartPercent %d and catRangeEndPercent %d: want 0 <= start < end <= 100", start, end)
	}
	ways := int64(bits.Len64(cbm))
	first := (ways*start + 99) / 100
	last := (ways*end + 99) / 100
	mask := (uint64(1)<<last - 1) &^ (uint64(1)<<first - 1)
	if n := bits.OnesCount64(mask); n < max(minBits, 1) {
		return 0, fmt.Errorf("catRangeStartPercent %d and catRangeEndPercent %d select %d of %d cache ways; the kernel takes at least %d",
			start, end, n, ways, max(minBits, 1))
	}
	return mask, nil
}

// mbValue returns the MB value of percent for the node's units: in percent, rounded up to the granularity and
// kept within [min, 100]; on AMD, 2048 (unlimited) for 100 % and else percent of mbAMDPercentBase, as Koordinator
// computes it, at least min.
func mbValue(mb *mbInfo, percent int64) uint64 {
	p := uint64(min(max(percent, 0), 100))
	var v uint64
	if mb.max == mbAMDMax {
		if p == 100 {
			return mbAMDMax
		}
		v = mbAMDPercentBase * p / 100
	} else {
		gran := max(mb.gran, 1)
		v = (p + gran - 1) / gran * gran
	}
	return min(max(v, mb.min), mb.max)
}

// groupSchemata is what a group's schemata file should hold: per managed resource, the value of each domain.
type groupSchemata map[string]map[int]uint64

// fullSchemata returns the schemata of a group that is not limited: every cache way and the most bandwidth.
func fullSchemata(info nodeInfo) groupSchemata {
	out := groupSchemata{}
	for _, c := range info.cat {
		out[c.name] = sameValue(c.domains, c.cbm)
	}
	if info.mb != nil {
		out[resourceMB] = sameValue(info.mb.domains, info.mb.max)
	}
	return out
}

// classSchemata returns the schemata of a class's group with q, the number of cache ways it gets (0 without
// cache allocation) and the MB percent it asks for (-1 without bandwidth allocation). An unset field takes the
// whole cache or bandwidth. A range that cannot be written is an error; the bandwidth is then still returned.
func classSchemata(info nodeInfo, q *slov1alpha1.ResctrlQOS) (groupSchemata, int, int64, error) {
	out := groupSchemata{}
	var errs []error
	ways := 0
	start, end := int64(0), int64(100)
	if q.CATRangeStartPercent != nil {
		start = *q.CATRangeStartPercent
	}
	if q.CATRangeEndPercent != nil {
		end = *q.CATRangeEndPercent
	}
	for _, c := range info.cat {
		mask, err := catMask(c.cbm, c.minBits, start, end)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
			continue
		}
		out[c.name] = sameValue(c.domains, mask)
		ways = bits.OnesCount64(mask)
	}
	mbPercent := int64(-1)
	if info.mb != nil {
		mbPercent = 100
		if q.MBAPercent != nil {
			mbPercent = *q.MBAPercent
		}
		v := mbValue(info.mb, mbPercent)
		out[resourceMB] = sameValue(info.mb.domains, v)
		if info.mb.max == mbPercentMax {
			mbPercent = int64(v)
		}
	}
	return out, ways, mbPercent, errors.Join(errs...)
}

func sameValue(domains []int, v uint64) map[int]uint64 {
	out := make(map[int]uint64, len(domains))
	for _, id := range domains {
		out[id] = v
	}
	return out
}

// matches reports whether the raw schemata cur (parsed from path) already holds want.
func (want groupSchemata) matches(path string, cur map[string]map[int]string) (bool, error) {
	for res, domains := range want {
		have, ok := cur[res]
		if !ok {
			return false, nil
		}
		for id, v := range domains {
			raw, ok := have[id]
			if !ok {
				return false, nil
			}
			got, err := parseValue(path, res, id, raw)
			if err != nil {
				return false, err
			}
			if got != v {
				return false, nil
			}
		}
	}
	return true, nil
}

// String formats the schemata as written: cache lines first, in catResources order, then MB; domains in order.
func (want groupSchemata) String() string {
	var b strings.Builder
	for _, res := range append(slices.Clone(catResources), resourceMB) {
		domains, ok := want[res]
		if !ok {
			continue
		}
		b.WriteString(res)
		b.WriteByte(':')
		for i, id := range sortedKeys(domains) {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(strconv.Itoa(id))
			b.WriteByte('=')
			if res == resourceMB {
				b.WriteString(strconv.FormatUint(domains[id], 10))
			} else {
				b.WriteString(strconv.FormatUint(domains[id], 16))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// current formats the lines of cur that want manages, for logs.
func (want groupSchemata) current(cur map[string]map[int]string) string {
	var b strings.Builder
	for _, res := range append(slices.Clone(catResources), resourceMB) {
		domains, ok := cur[res]
		if _, managed := want[res]; !ok || !managed {
			continue
		}
		b.WriteString(res)
		b.WriteByte(':')
		for i, id := range sortedKeys(domains) {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(strconv.Itoa(id) + "=" + domains[id])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func sortedKeys[V any](m map[int]V) []int {
	return slices.Sorted(maps.Keys(m))
}
