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

package build

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// hostDynamicBinary is a dynamically linked executable of this machine (Debian's /bin/true) and its
// interpreter.
func hostDynamicBinary(t *testing.T) (string, string) {
	t.Helper()
	const bin = "/bin/true"
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("this test needs a dynamically linked %s: %v", bin, err)
	}
	defer func() { _ = f.Close() }()
	interp, err := interpreter(f)
	if err != nil || interp == "" {
		t.Fatalf("%s has no interpreter (%v): this test needs it dynamically linked", bin, err)
	}
	return bin, interp
}

var native = v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}

// TestBuildDynamic builds the image of a dynamically linked binary from this machine's C runtime: its
// interpreter where the binary names it, its libraries and the extra ones in lib/<triplet>, the library path
// and the extra environment in the config.
func TestBuildDynamic(t *testing.T) {
	bin, interp := hostDynamicBinary(t)
	triplet, err := Triplet(native)
	if err != nil {
		t.Skipf("no C runtime layout for %s", native)
	}
	spec := testSpec(t, true)
	spec.Component = "koordlet"
	spec.Binaries = []Binary{{Platform: native, Path: bin, Sysroot: "/"}}
	spec.Libraries = []string{"libm.so.6"}
	spec.Env = []string{"NVIDIA_VISIBLE_DEVICES=all"}
	idx, err := Build(spec)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	im, _ := idx.IndexManifest()
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	fs := files(t, img)
	for _, name := range []string{strings.TrimPrefix(interp, "/"), "lib/" + triplet + "/libc.so.6", "lib/" + triplet + "/libm.so.6", "koordlet"} {
		if !strings.HasPrefix(fs[name], "-rwxr-xr-x \x7fELF") {
			t.Errorf("file %s = %.20q, want an executable ELF file", name, fs[name])
		}
	}
	if _, ok := fs["lib/"+triplet+"/"+filepath.Base(interp)]; ok {
		t.Errorf("the interpreter is in lib/%s too", triplet)
	}
	for _, dir := range []string{"usr/lib/" + triplet + "/", "usr/lib64/"} {
		if _, ok := fs[dir]; !ok {
			t.Errorf("no directory %s for the NVIDIA toolkit's mounts", dir)
		}
	}
	cf, _ := img.ConfigFile()
	want := []string{"PATH=/", "SSL_CERT_FILE=/" + caBundlePath, "LD_LIBRARY_PATH=/lib/" + triplet + ":/usr/lib/" + triplet + ":/usr/lib64", "NVIDIA_VISIBLE_DEVICES=all"}
	if diff := cmp.Diff(want, cf.Config.Env); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
	layers, _ := img.Layers()
	if len(layers) != 3 {
		t.Errorf("%d layers, want 3 (base, C runtime, binary)", len(layers))
	}
}

func TestBuildDynamicErrors(t *testing.T) {
	bin, interp := hostDynamicBinary(t)
	triplet, err := Triplet(native)
	if err != nil {
		t.Skipf("no C runtime layout for %s", native)
	}
	// A sysroot whose libc is for another machine.
	foreign := t.TempDir()
	loader, err := os.ReadFile(interp)
	if err != nil {
		t.Fatal(err)
	}
	libc, err := os.ReadFile("/lib/" + triplet + "/libc.so.6")
	if err != nil {
		t.Fatal(err)
	}
	machine := elf.EM_AARCH64
	if runtime.GOARCH == "arm64" {
		machine = elf.EM_X86_64
	}
	binary.LittleEndian.PutUint16(libc[18:], uint16(machine))
	for name, data := range map[string][]byte{interp: loader, "lib/" + triplet + "/libc.so.6": libc} {
		path := filepath.Join(foreign, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name    string
		binary  Binary
		extra   []string
		wantErr []string
	}{
		{name: "no sysroot", binary: Binary{Platform: native, Path: bin}, wantErr: []string{"dynamically linked", interp}},
		{name: "empty sysroot", binary: Binary{Platform: native, Path: bin, Sysroot: t.TempDir()}, wantErr: []string{filepath.Base(interp), "not found"}},
		{name: "missing extra library", binary: Binary{Platform: native, Path: bin, Sysroot: "/"}, extra: []string{"libnot-there.so.1"}, wantErr: []string{"libnot-there.so.1 not found under /", "libc6"}},
		{name: "library of another machine", binary: Binary{Platform: native, Path: bin, Sysroot: foreign}, wantErr: []string{"libc.so.6 in " + foreign + " is for " + machine.String()}},
		{name: "platform without a triplet", binary: Binary{Platform: v1.Platform{OS: "linux", Architecture: "riscv64"}, Path: bin, Sysroot: "/"}, wantErr: []string{"linux/riscv64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			_, err = runtimeFiles(data, tc.binary, tc.extra)
			if err == nil || slices.ContainsFunc(tc.wantErr, func(s string) bool { return !strings.Contains(err.Error(), s) }) {
				t.Errorf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDefaultSysroot(t *testing.T) {
	other := v1.Platform{OS: "linux", Architecture: "arm64"}
	if runtime.GOARCH == "arm64" {
		other.Architecture = "amd64"
	}
	got := map[string]string{}
	for _, p := range []v1.Platform{native, other, {OS: "linux", Architecture: "riscv64"}} {
		s, err := DefaultSysroot(p)
		if err != nil {
			s = "error"
		}
		got[p.String()] = s
	}
	otherTriplet, _ := Triplet(other)
	want := map[string]string{native.String(): "/", other.String(): "/usr/" + otherTriplet, "linux/riscv64": "error"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DefaultSysroot (-want +got):\n%s", diff)
	}
}
