//go:build cgo && linux

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

package devices

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/google/go-cmp/cmp"
)

// fakeNVML compiles testdata/fakenvml.c against go-nvml's nvml.h into a libnvidia-ml.so.1 and returns its path.
func fakeNVML(t *testing.T) string {
	t.Helper()
	mod, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "github.com/NVIDIA/go-nvml").Output()
	if err != nil {
		t.Fatalf("find go-nvml's nvml.h: %v", err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	lib := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	cmd := exec.CommandContext(t.Context(), cc, "-shared", "-fPIC", "-Wall", "-Werror", "-o", lib,
		"-I", filepath.Join(strings.TrimSpace(string(mod)), "pkg", "nvml"), filepath.Join("testdata", "fakenvml.c"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compile the stand-in NVML library: %v\n%s", err, out)
	}
	return lib
}

// TestNVMLLibrary loads a stand-in NVML library through go-nvml, as koordlet loads the driver's, and reads
// the GPUs as the GPU source does: the calls, the structures and the errors cross the C boundary intact.
func TestNVMLLibrary(t *testing.T) {
	l := newNVML(nvml.WithLibraryPath(fakeNVML(t)))
	if err := l.Init(); err != nil {
		t.Fatalf("Init: %v", err)
	}
	defer func() {
		if err := l.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}()
	driver, err := l.DriverVersion()
	if err != nil || driver != "550.54.15" {
		t.Errorf("DriverVersion = %q, %v; want 550.54.15", driver, err)
	}
	n, err := l.Count()
	if err != nil || n != 2 {
		t.Fatalf("Count = %d, %v; want 2", n, err)
	}
	got, err := l.GPU(0)
	if err != nil {
		t.Fatalf("GPU(0): %v", err)
	}
	want := GPU{UUID: "GPU-0a1b2c3d-0000-0000-0000-000000000000", Minor: 0, MemoryBytes: 80 << 30, BusID: "00000000:3B:00.0", Name: "NVIDIA A100-SXM4-80GB"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GPU(0) (-want +got):\n%s", diff)
	}
	if _, err := l.GPU(1); err == nil || !strings.Contains(err.Error(), "GPU 1: memory") {
		t.Errorf("GPU(1) err = %v, want the memory query's failure", err)
	}
	if _, err := l.GPU(2); err == nil || !strings.Contains(err.Error(), "GPU 2: handle") {
		t.Errorf("GPU(2) err = %v, want the handle query's failure", err)
	}
}

// TestNVMLLibraryMissing: a node without the driver's library makes the source unavailable, naming the library.
func TestNVMLLibraryMissing(t *testing.T) {
	err := newNVML(nvml.WithLibraryPath(filepath.Join(t.TempDir(), "libnvidia-ml.so.1"))).Init()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "libnvidia-ml.so.1") {
		t.Errorf("Init = %v, want ErrUnavailable naming libnvidia-ml.so.1", err)
	}
}
