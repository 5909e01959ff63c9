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

package preflight

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckBinaries(t *testing.T) {
	bins := []Binary{{"etcd", "bin"}, {"kwok", "bin"}, {"koord-manager", "build"}, {"koord-scheduler", "build"}}
	for name, tc := range map[string]struct {
		// files maps a binary name to its mode; "dir" makes a directory.
		files        map[string]string
		wantProblems []BinaryProblem
		wantMsg      string
	}{
		"all present": {
			files: map[string]string{"etcd": "exec", "kwok": "exec", "koord-manager": "exec", "koord-scheduler": "exec"},
		},
		"koord binaries missing": {
			files:        map[string]string{"etcd": "exec", "kwok": "exec"},
			wantProblems: []BinaryProblem{{Binary{"koord-manager", "build"}, "missing"}, {Binary{"koord-scheduler", "build"}, "missing"}},
			wantMsg: `in DIR, missing: koord-manager, koord-scheduler. Run "make build" (koord-manager, koord-scheduler) ` +
				`in the repository root, or point --bin-dir (or $KOORD_BIN_DIR) at a directory that has them`,
		},
		"every kind of problem": {
			files: map[string]string{"etcd": "plain", "kwok": "dir", "koord-scheduler": "exec"},
			wantProblems: []BinaryProblem{
				{Binary{"etcd", "bin"}, "not executable"}, {Binary{"kwok", "bin"}, "not a file"}, {Binary{"koord-manager", "build"}, "missing"},
			},
			wantMsg: `in DIR, not executable: etcd; not a file: kwok; missing: koord-manager. Run "make bin" (etcd, kwok) and ` +
				`"make build" (koord-manager) in the repository root, or point --bin-dir (or $KOORD_BIN_DIR) at a directory that has them`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, mode := range tc.files {
				p := filepath.Join(dir, f)
				var err error
				switch mode {
				case "dir":
					err = os.Mkdir(p, 0o755)
				case "plain":
					err = os.WriteFile(p, []byte("x"), 0o644)
				default:
					err = os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			err := CheckBinaries(dir, bins)
			if tc.wantProblems == nil {
				if err != nil {
					t.Fatalf("CheckBinaries() = %v, want nil", err)
				}
				return
			}
			var missing *MissingBinariesError
			if !errors.As(err, &missing) {
				t.Fatalf("CheckBinaries() = %v, want a *MissingBinariesError", err)
			}
			if diff := cmp.Diff(tc.wantProblems, missing.Problems); diff != "" {
				t.Errorf("problems (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMsg, strings.ReplaceAll(err.Error(), dir, "DIR")); diff != "" {
				t.Errorf("message (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestResolvePortsBusy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	busy := l.Addr().(*net.TCPAddr).Port

	_, err = ResolvePorts([]Port{{Flag: "--apiserver-port", Host: "127.0.0.1", Port: busy}, {Flag: "--etcd-port", Host: "127.0.0.1"}})
	var inUse *PortInUseError
	if !errors.As(err, &inUse) {
		t.Fatalf("ResolvePorts() = %v, want a *PortInUseError", err)
	}
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatalf("read /proc/self/comm: %v", err)
	}
	want := &PortInUseError{Flag: "--apiserver-port", Port: busy, Owner: &Process{PID: os.Getpid(), Command: strings.TrimSpace(string(self))}}
	if diff := cmp.Diff(want, inUse, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
		t.Errorf("error (-want,+got):\n%s", diff)
	}
	wantMsg := "--apiserver-port: port " + strconv.Itoa(busy) + " is in use by " + want.Owner.Command + " (pid " +
		strconv.Itoa(os.Getpid()) + "); choose another port, or 0 for a free one"
	if diff := cmp.Diff(wantMsg, inUse.Error()); diff != "" {
		t.Errorf("message (-want,+got):\n%s", diff)
	}
}

func TestResolvePortsInvalid(t *testing.T) {
	for name, tc := range map[string]struct {
		ports   []Port
		wantMsg string
	}{
		"same port twice": {
			ports:   []Port{{Flag: "--webhook-port", Port: 40001}, {Flag: "--scheduler-port", Port: 40001}},
			wantMsg: "--webhook-port and --scheduler-port both ask for port 40001",
		},
		"out of range": {
			ports:   []Port{{Flag: "--etcd-port", Port: 70000}, {Flag: "--scheduler-port", Port: -1}},
			wantMsg: "--etcd-port: 70000 is not a port (0 picks a free one)\n--scheduler-port: -1 is not a port (0 picks a free one)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ResolvePorts(tc.ports)
			if err == nil {
				t.Fatal("ResolvePorts() = nil, want an error")
			}
			if diff := cmp.Diff(tc.wantMsg, err.Error()); diff != "" {
				t.Errorf("message (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestResolvePortsPicksDistinctFreePorts(t *testing.T) {
	ports := make([]Port, 5)
	for i := range ports {
		ports[i] = Port{Flag: "--p" + strconv.Itoa(i), Host: "127.0.0.1"}
	}
	got, err := ResolvePorts(ports)
	if err != nil {
		t.Fatalf("ResolvePorts() = %v", err)
	}
	seen := map[int]bool{}
	for i, p := range got {
		if p <= 0 || seen[p] {
			t.Fatalf("port %d of %v is zero or repeated", i, got)
		}
		seen[p] = true
		// Free when ResolvePorts returns.
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("picked port %d is not free: %v", p, err)
		}
		_ = l.Close()
	}
}

func TestPortOwnerOfFreePort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	if owner, ok := PortOwner(port); ok {
		t.Errorf("PortOwner(%d) = %+v, true; want none for a closed port", port, owner)
	}
}
