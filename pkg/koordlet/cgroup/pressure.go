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
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/koord-dev/koord/pkg/util/sysfile"
)

// PressureResource is a resource the kernel keeps pressure stall information (PSI) for.
type PressureResource string

// Pressure resources, each read from the file <resource>.pressure.
const (
	// PressureCPU is time runnable tasks waited for a CPU.
	PressureCPU PressureResource = "cpu"
	// PressureMemory is time tasks stalled on memory: reclaim, refaults, swap-in.
	PressureMemory PressureResource = "memory"
	// PressureIO is time tasks waited for block I/O.
	PressureIO PressureResource = "io"
)

// knob returns the file name of r's pressure: cpu.pressure, memory.pressure or io.pressure; "" for another
// resource.
func (r PressureResource) knob() string {
	switch r {
	case PressureCPU:
		return "cpu.pressure"
	case PressureMemory:
		return "memory.pressure"
	case PressureIO:
		return "io.pressure"
	}
	return ""
}

func (r PressureResource) valid() bool { return r.knob() != "" }

// unifiedMount is where a hybrid cgroup v1 system mounts the cgroup v2 hierarchy, under the cgroup root.
const unifiedMount = "unified"

// PressureLine is one line of a pressure file: the share of wall time in which tasks stalled on the resource.
type PressureLine struct {
	// Avg10, Avg60 and Avg300 are the stalled share of the last 10, 60 and 300 seconds, in percent (0 to 100),
	// as exponentially decaying averages.
	Avg10, Avg60, Avg300 float64
	// Total is the cumulative stalled time.
	Total time.Duration
}

// Pressure is the pressure stall information of one resource. Some is the time in which at least one task
// stalled; Full the time in which all non-idle tasks stalled at once, so that no work was done.
type Pressure struct {
	// Some is the "some" line.
	Some PressureLine
	// Full is the "full" line; zero when HasFull is false.
	Full PressureLine
	// HasFull says whether the kernel reported a "full" line. CPU pressure has one from Linux 5.13 on; memory
	// and I/O always.
	HasFull bool
}

// PressurePath returns the path of r's pressure file of dir in the cgroup v2 hierarchy, where mainline kernels
// keep PSI: <Root>/<dir>/<r>.pressure on v2, and on v1 the hybrid mount's <Root>/unified/<dir>/<r>.pressure
// (runc, kubelet and systemd create each cgroup there too).
func (l Layout) PressurePath(dir string, r PressureResource) string {
	if l.Version == V1 {
		return filepath.Join(l.Root, unifiedMount, dir, r.knob())
	}
	return filepath.Join(l.Root, dir, r.knob())
}

// Pressure returns the pressure stall information of resource r for the tasks of dir and its descendants.
//
// On cgroup v2 it reads <dir>/<r>.pressure. Mainline kernels keep PSI only in the v2 hierarchy, so on cgroup v1
// it reads, first, the cpuacct hierarchy's <dir>/<r>.pressure, which kernels with PSI for cgroup v1 (Anolis,
// with it enabled) have, and otherwise the file in the hybrid mount (see PressurePath).
//
// Errors follow the package contract. ErrNotSupported: PSI is disabled or missing in the kernel, or, on v1, the
// directory is not in the cgroup v2 hierarchy (no hybrid mount, or the runtime did not create it there); the
// first occurrence per file is logged. ErrNotFound: the cgroup is gone.
func (m *Manager) Pressure(ctx context.Context, dir string, r PressureResource) (Pressure, error) {
	if !r.valid() {
		return Pressure{}, fmt.Errorf("pressure resource %q: want cpu, memory or io: %w", r, ErrInvalidValue)
	}
	knob := r.knob()
	if m.layout.Version != V1 {
		var p Pressure
		err := m.read(ctx, dir, knob, func(b []byte) error {
			var err error
			p, err = parsePressure(b)
			return err
		})
		return p, err
	}
	if err := checkDir(dir); err != nil {
		return Pressure{}, err
	}

	// Cgroup v1 PSI, in the cpuacct hierarchy. Without it (ENOENT, or EOPNOTSUPP where it is compiled in but
	// disabled), the unified hierarchy. A kernel found without it, the file missing from an existing cpuacct
	// directory, is not asked again: that is a boot-time setting.
	if !m.noV1PSI.Load() {
		p, err := readPressureFile(m.v1Path("cpuacct", dir, knob))
		if ioErr := pathError(err); ioErr == nil {
			return p, wrapParse(err, knob, dir)
		} else if !errors.Is(ioErr, syscall.ENOENT) && !errors.Is(ioErr, syscall.EOPNOTSUPP) {
			return Pressure{}, m.fileError(ctx, dir, knob, "reading", ioErr)
		} else if errors.Is(ioErr, syscall.EOPNOTSUPP) || isDir(m.layout.DirPath(dir, "cpuacct.usage")) {
			m.noV1PSI.Store(true)
		}
	}

	p, err := readPressureFile(m.v1Path(unifiedMount, dir, knob))
	ioErr := pathError(err)
	switch {
	case ioErr == nil:
		return p, wrapParse(err, knob, dir)
	case errors.Is(ioErr, syscall.ENODEV):
		return Pressure{}, fmt.Errorf("reading %s: cgroup %s: %w", knob, dir, ErrNotFound)
	case errors.Is(ioErr, syscall.EOPNOTSUPP):
		return Pressure{}, m.notSupported(ctx, dir, knob)
	case !errors.Is(ioErr, syscall.ENOENT):
		return Pressure{}, fmt.Errorf("reading %s in cgroup %s: %w", knob, dir, ioErr)
	}
	// Missing. In an existing v2 directory the kernel has no PSI; a directory missing in the v2 hierarchy but
	// present in v1 was not created there; missing in both, the cgroup is gone.
	if isDir(filepath.Join(m.layout.Root, unifiedMount, dir)) {
		return Pressure{}, m.notSupported(ctx, dir, knob)
	}
	if isDir(m.layout.DirPath(dir, "cpuacct.usage")) {
		return Pressure{}, m.notSupported(ctx, dir, unifiedMount+"/"+knob)
	}
	return Pressure{}, fmt.Errorf("reading %s: cgroup %s: %w", knob, dir, ErrNotFound)
}

// v1Path returns <Root>/<hierarchy><dir>/<knob>, in one allocation for the clean paths the Layout returns.
func (m *Manager) v1Path(hierarchy, dir, knob string) string {
	if !cleanAbs(m.layout.Root) || !cleanAbs(dir) {
		return filepath.Join(m.layout.Root, hierarchy, dir, knob)
	}
	root := m.layout.Root
	if root == "/" {
		root = ""
	}
	if dir == "/" {
		dir = ""
	}
	return root + "/" + hierarchy + dir + "/" + knob
}

// NodePressure returns the node's pressure stall information of resource r, from <procRoot>/pressure/<r>.
// Kernels without PSI, or with it disabled (psi=0), have no such file; that gives ErrNotSupported.
func NodePressure(procRoot string, r PressureResource) (Pressure, error) {
	if !r.valid() {
		return Pressure{}, fmt.Errorf("pressure resource %q: want cpu, memory or io: %w", r, ErrInvalidValue)
	}
	path := filepath.Join(procRoot, "pressure", string(r))
	p, err := readPressureFile(path)
	ioErr := pathError(err)
	switch {
	case ioErr == nil && err != nil:
		return Pressure{}, fmt.Errorf("parsing %s: %w", path, err)
	case errors.Is(ioErr, syscall.ENOENT) || errors.Is(ioErr, syscall.EOPNOTSUPP):
		return Pressure{}, fmt.Errorf("reading %s: %w", path, ErrNotSupported)
	case ioErr != nil:
		return Pressure{}, ioErr
	}
	return p, nil
}

// readPressureFile reads and parses the pressure file at path. Failing to open or read it gives the
// *os.PathError of sysfile; failing to parse it another error.
func readPressureFile(path string) (Pressure, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b, err := sysfile.Read(path, (*bp)[:0])
	*bp = b[:0]
	if err != nil {
		return Pressure{}, err
	}
	return parsePressure(b)
}

// pathError returns err, an error of readPressureFile, when it is a failure to open or read the file, nil
// otherwise (no error, or a parse error).
func pathError(err error) error {
	// readPressureFile returns sysfile's errors unwrapped; a type assertion, unlike errors.As, does not
	// allocate.
	if pe, ok := err.(*os.PathError); ok { //nolint:errorlint // see above
		return pe
	}
	return nil
}

// wrapParse wraps a parse error of knob in dir; nil stays nil.
func wrapParse(err error, knob, dir string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("reading %s in cgroup %s: %w", knob, dir, err)
}

// parsePressure parses a pressure file:
//
//	some avg10=0.21 avg60=0.66 avg300=10.87 total=4232774220
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// The "some" line is required, the "full" line optional (CPU before Linux 5.13); other lines are ignored.
// total is in microseconds.
func parsePressure(b []byte) (Pressure, error) {
	var p Pressure
	hasSome := false
	for rest := b; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		kind, fields := line, []byte(nil)
		if i := bytes.IndexByte(line, ' '); i >= 0 {
			kind, fields = line[:i], line[i+1:]
		}
		var dst *PressureLine
		switch string(kind) {
		case "some":
			dst, hasSome = &p.Some, true
		case "full":
			dst, p.HasFull = &p.Full, true
		default:
			continue
		}
		if err := parsePressureLine(fields, dst); err != nil {
			return Pressure{}, fmt.Errorf("parsing pressure line %q: %w", line, err)
		}
	}
	if !hasSome {
		return Pressure{}, fmt.Errorf("parsing pressure %q: no \"some\" line", b)
	}
	return p, nil
}

// parsePressureLine parses the fields after "some" or "full": avg10=, avg60=, avg300= and total=, all required.
func parsePressureLine(b []byte, l *PressureLine) error {
	const (
		avg10 = 1 << iota
		avg60
		avg300
		total
	)
	seen := 0
	for rest := b; len(rest) > 0; {
		field := rest
		if i := bytes.IndexByte(rest, ' '); i >= 0 {
			field, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if len(field) == 0 {
			continue
		}
		eq := bytes.IndexByte(field, '=')
		if eq < 0 {
			return fmt.Errorf("field %q: want key=value", field)
		}
		key, value := field[:eq], field[eq+1:]
		var err error
		switch string(key) {
		case "avg10":
			l.Avg10, err = parseDecimal(value)
			seen |= avg10
		case "avg60":
			l.Avg60, err = parseDecimal(value)
			seen |= avg60
		case "avg300":
			l.Avg300, err = parseDecimal(value)
			seen |= avg300
		case "total":
			var us int64
			if us, err = parseInt(value); err == nil && (us < 0 || us > math.MaxInt64/int64(time.Microsecond)) {
				err = fmt.Errorf("parsing %q: out of range", value)
			}
			l.Total = time.Duration(us) * time.Microsecond
			seen |= total
		}
		if err != nil {
			return fmt.Errorf("field %s: %w", key, err)
		}
	}
	for _, f := range []struct {
		bit  int
		name string
	}{{avg10, "avg10"}, {avg60, "avg60"}, {avg300, "avg300"}, {total, "total"}} {
		if seen&f.bit == 0 {
			return fmt.Errorf("field %s: %w", f.name, errMissingField)
		}
	}
	return nil
}

// pow10 are the powers of ten a float64 holds exactly, for parseDecimal.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseDecimal parses a non-negative decimal with an optional fraction ("10.87", "0", "100.00"), as the kernel
// prints PSI averages, with at most 15 digits. The result is the float64 nearest to the decimal, as
// strconv.ParseFloat gives. It does not allocate unless it fails.
func parseDecimal(b []byte) (float64, error) {
	b = bytes.TrimSpace(b)
	intPart, frac := b, []byte(nil)
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		intPart, frac = b[:i], b[i+1:]
		if len(frac) == 0 {
			return 0, fmt.Errorf("parsing %q: not a decimal", b)
		}
	}
	if len(intPart) == 0 || len(intPart)+len(frac) >= len(pow10) {
		return 0, fmt.Errorf("parsing %q: not a decimal of at most %d digits", b, len(pow10)-1)
	}
	var mantissa uint64
	for _, part := range [2][]byte{intPart, frac} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("parsing %q: not a decimal", b)
			}
			mantissa = mantissa*10 + uint64(c-'0')
		}
	}
	// Both operands are exact (below 2^53 and 1e15), so the quotient is correctly rounded.
	return float64(mantissa) / pow10[len(frac)], nil
}
