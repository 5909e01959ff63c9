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
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// cpuTimes are the node-wide counters of the "cpu" line of /proc/stat, in
// USER_HZ ticks, and the number of online CPUs (the "cpuN" lines).
type cpuTimes struct {
	busy, total uint64
	cpus        int
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat: user nice
// system idle iowait irq softirq steal (guest and guest_nice are already
// part of user and nice). Busy time is user+nice+system+irq+softirq, as in
// Koordinator: idle, iowait and steal are not the node's work. Total is all
// eight. Kernels older than 2.6.33 print fewer fields; missing ones count as
// zero, but the first four are required.
func parseProcStat(b []byte) (cpuTimes, error) {
	var t cpuTimes
	found := false
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if !bytes.HasPrefix(line, []byte("cpu")) {
			if found {
				break // the cpu lines come first, together
			}
			continue
		}
		if len(line) > 3 && line[3] >= '0' && line[3] <= '9' {
			t.cpus++
			continue
		}
		if found {
			return cpuTimes{}, fmt.Errorf("line %q: a second aggregate cpu line", line)
		}
		found = true
		var fields [8]uint64
		n := 0
		rest := line[3:]
		for n < len(fields) {
			rest = bytes.TrimLeft(rest, " ")
			if len(rest) == 0 {
				break
			}
			f := rest
			if i := bytes.IndexByte(rest, ' '); i >= 0 {
				f, rest = rest[:i], rest[i:]
			} else {
				rest = nil
			}
			v, err := strconv.ParseUint(string(f), 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("line %q: field %d: %q is not a tick count", line, n+1, f)
			}
			fields[n] = v
			n++
		}
		if n < 4 {
			return cpuTimes{}, fmt.Errorf("line %q: %d fields, want at least user nice system idle", line, n)
		}
		user, nice, system, idle, iowait, irq, softirq, steal := fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], fields[6], fields[7]
		t.busy = user + nice + system + irq + softirq
		t.total = t.busy + idle + iowait + steal
	}
	if !found {
		return cpuTimes{}, errors.New("no aggregate cpu line")
	}
	if t.cpus == 0 {
		return cpuTimes{}, errors.New("no per-CPU cpuN lines")
	}
	return t, nil
}

// memInfo is what the node agent needs from /proc/meminfo, in bytes.
type memInfo struct {
	total, free, available int64
}

// parseMeminfo reads MemTotal, MemFree and MemAvailable (Linux 3.14+) from
// /proc/meminfo, whose values are in kB (KiB).
func parseMeminfo(b []byte) (memInfo, error) {
	var m memInfo
	want := []struct {
		key string
		dst *int64
	}{{"MemTotal:", &m.total}, {"MemFree:", &m.free}, {"MemAvailable:", &m.available}}
	var found [3]bool
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		for i, w := range want {
			if found[i] || !bytes.HasPrefix(line, []byte(w.key)) {
				continue
			}
			v := bytes.TrimSpace(line[len(w.key):])
			v, unit, _ := bytes.Cut(v, []byte(" "))
			if string(unit) != "kB" {
				return memInfo{}, fmt.Errorf("line %q: want a value in kB", line)
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n < 0 {
				return memInfo{}, fmt.Errorf("line %q: %q is not a size", line, v)
			}
			*w.dst = n << 10
			found[i] = true
		}
	}
	for i, w := range want {
		if !found[i] {
			return memInfo{}, fmt.Errorf("no %s line", w.key[:len(w.key)-1])
		}
	}
	return m, nil
}
