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

package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"
)

func TestTail(t *testing.T) {
	dir := t.TempDir()
	var long strings.Builder
	for i := range 30 {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	for name, tc := range map[string]struct {
		content string
		want    string
	}{
		"empty":      {content: "", want: "(log is empty)"},
		"short":      {content: "a\nb\n", want: "  a\n  b"},
		"last lines": {content: long.String(), want: "  line 27\n  line 28\n  line 29"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tail(path, 3)); diff != "" {
				t.Errorf("tail (-want,+got):\n%s", diff)
			}
		})
	}
	if got := tail(filepath.Join(dir, "missing"), 3); !strings.HasPrefix(got, "(log unreadable: ") {
		t.Errorf("tail of a missing file = %q", got)
	}
}

func TestProcessExit(t *testing.T) {
	log := filepath.Join(t.TempDir(), "comp.log")
	p, err := startProcess("comp", "/bin/sh", []string{"-c", "echo starting; echo broken config >&2; exit 3"}, log, false)
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	want := "comp stopped unexpectedly (exit status 3); last lines of " + log + ":\n  starting\n  broken config"
	if diff := cmp.Diff(want, p.exitError().Error()); diff != "" {
		t.Errorf("exit error (-want,+got):\n%s", diff)
	}
}

func TestProcessStop(t *testing.T) {
	for name, tc := range map[string]struct {
		script  string
		wantErr bool
	}{
		// The child of the shell is in the process group too and goes with it.
		"exits on SIGTERM": {script: "sleep 600 & wait"},
		"ignores SIGTERM":  {script: "trap '' TERM; sleep 600 & wait; sleep 600", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "comp.log")
			p, err := startProcess("comp", "/bin/sh", []string{"-c", tc.script}, log, false)
			if err != nil {
				t.Fatal(err)
			}
			// Let the shell set its trap and start its child.
			time.Sleep(200 * time.Millisecond)
			err = p.stop(clock.RealClock{}, time.Second)
			if (err != nil) != tc.wantErr {
				t.Errorf("stop() = %v, want error %v", err, tc.wantErr)
			}
			if !p.exited() {
				t.Error("process still running after stop")
			}
			// Nothing of its process group is left (once init has reaped the orphaned child).
			deadline := time.Now().Add(5 * time.Second)
			for syscall.Kill(-p.pid(), 0) == nil {
				if time.Now().After(deadline) {
					t.Fatalf("process group %d still has members", p.pid())
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
