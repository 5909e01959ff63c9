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

// Package preflight checks what a local cluster needs before anything starts: that the binaries it runs exist
// and are executable, and that the ports it listens on are free. Its errors say what to do: which make target
// builds a missing binary, which flag chose a busy port and which process holds it.
package preflight

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Binary is an executable a local cluster runs, and the make target that builds it into bin/.
type Binary struct {
	// Name is the file name in the binary directory.
	Name string
	// MakeTarget builds it: "bin" for the control plane, "build" for Koord's own binaries.
	MakeTarget string
}

// The binaries of a local cluster.
var (
	// ControlPlaneBinaries are built by `make bin` from the versions pinned in go.mod and hack/tools/go.mod.
	ControlPlaneBinaries = []Binary{
		{"etcd", "bin"}, {"kube-apiserver", "bin"}, {"kube-controller-manager", "bin"}, {"kube-scheduler", "bin"}, {"kwok", "bin"},
	}
	// MonitoringBinaries are built by `make bin` from hack/tools/go.mod, for `koordctl up --monitoring`.
	MonitoringBinaries = []Binary{{"prometheus", "bin"}}
	// KoordBinaries are built by `make build`.
	KoordBinaries = []Binary{{"koord-manager", "build"}, {"koord-scheduler", "build"}, {"koord-descheduler", "build"}}
)

// BinaryProblem is one binary that cannot be run.
type BinaryProblem struct {
	Binary
	// Reason says why: "missing", "not a file", "not executable" or "unreadable (<error>)".
	Reason string
}

// MissingBinariesError lists the binaries of Dir that cannot be run.
type MissingBinariesError struct {
	// Dir is the binary directory that was checked.
	Dir string
	// Problems has one entry per binary, in the order they were asked for.
	Problems []BinaryProblem
}

// Error groups the binaries by problem and names the make targets that build them, e.g. `in /src/bin,
// missing: koord-manager, koord-scheduler. Run "make build" (koord-manager, koord-scheduler) in the repository
// root, or point --bin-dir (or $KOORD_BIN_DIR) at a directory that has them`.
func (e *MissingBinariesError) Error() string {
	var reasons []string
	byReason := map[string][]string{}
	var targets []string
	byTarget := map[string][]string{}
	for _, p := range e.Problems {
		if _, ok := byReason[p.Reason]; !ok {
			reasons = append(reasons, p.Reason)
		}
		byReason[p.Reason] = append(byReason[p.Reason], p.Name)
		if _, ok := byTarget[p.MakeTarget]; !ok {
			targets = append(targets, p.MakeTarget)
		}
		byTarget[p.MakeTarget] = append(byTarget[p.MakeTarget], p.Name)
	}
	var problems, runs []string
	for _, r := range reasons {
		problems = append(problems, r+": "+strings.Join(byReason[r], ", "))
	}
	slices.Sort(targets)
	for _, t := range targets {
		runs = append(runs, fmt.Sprintf("%q (%s)", "make "+t, strings.Join(byTarget[t], ", ")))
	}
	return fmt.Sprintf("in %s, %s. Run %s in the repository root, or point --bin-dir (or $KOORD_BIN_DIR) at a directory that has them",
		e.Dir, strings.Join(problems, "; "), strings.Join(runs, " and "))
}

// CheckBinaries returns a *MissingBinariesError naming every binary of bins that is not an executable file in
// dir, or nil when all are.
func CheckBinaries(dir string, bins []Binary) error {
	var problems []BinaryProblem
	for _, b := range bins {
		info, err := os.Stat(filepath.Join(dir, b.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, BinaryProblem{b, "missing"})
		case err != nil:
			problems = append(problems, BinaryProblem{b, fmt.Sprintf("unreadable (%v)", err)})
		case info.IsDir():
			problems = append(problems, BinaryProblem{b, "not a file"})
		case info.Mode()&0o111 == 0:
			problems = append(problems, BinaryProblem{b, "not executable"})
		}
	}
	if len(problems) > 0 {
		return &MissingBinariesError{Dir: dir, Problems: problems}
	}
	return nil
}
