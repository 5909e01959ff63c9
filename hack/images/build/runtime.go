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
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// triplets are Debian's multiarch names of the platforms whose C runtime an image can carry.
var triplets = map[string]string{
	"amd64":   "x86_64-linux-gnu",
	"arm64":   "aarch64-linux-gnu",
	"ppc64le": "powerpc64le-linux-gnu",
	"s390x":   "s390x-linux-gnu",
}

// Triplet returns Debian's multiarch triplet of a Linux platform, e.g. aarch64-linux-gnu for linux/arm64.
func Triplet(p v1.Platform) (string, error) {
	if t, ok := triplets[p.Architecture]; ok && p.OS == "linux" {
		return t, nil
	}
	return "", fmt.Errorf("no C runtime for platform %s: dynamically linked binaries are built for linux/amd64, linux/arm64, linux/ppc64le and linux/s390x", p)
}

// DefaultSysroot is where Debian keeps the C runtime of platform p: the root for the build machine's own
// platform, /usr/<triplet> (the libc6-<arch>-cross package) for another.
func DefaultSysroot(p v1.Platform) (string, error) {
	if p.OS == runtime.GOOS && p.Architecture == runtime.GOARCH {
		return "/", nil
	}
	t, err := Triplet(p)
	if err != nil {
		return "", err
	}
	return "/usr/" + t, nil
}

// cRuntime is what a dynamically linked binary needs in its image besides itself.
type cRuntime struct {
	files []file
	// libraryPath is the image's LD_LIBRARY_PATH: where its libraries are, and where the NVIDIA container
	// toolkit mounts the driver's (usr/lib/<triplet> on Debian-like images, usr/lib64 on others).
	libraryPath []string
}

// runtimeFiles returns the C runtime of bin, the binary b names: its interpreter at the path the binary names
// and, in lib/<triplet>, every shared library it and extra need, transitively, read from b.Sysroot. It returns
// nil for a static binary, and for a file that is not ELF (tests' stand-ins).
func runtimeFiles(bin []byte, b Binary, extra []string) (*cRuntime, error) {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return nil, nil
	}
	interp, err := interpreter(f)
	if err != nil || interp == "" {
		return nil, err
	}
	if b.Sysroot == "" {
		return nil, fmt.Errorf("%s is dynamically linked (interpreter %s) and no sysroot holds its C runtime", b.Path, interp)
	}
	triplet, err := Triplet(b.Platform)
	if err != nil {
		return nil, err
	}
	libDir := "lib/" + triplet
	dirs := []string{"lib/" + triplet, "usr/lib/" + triplet, "lib", "usr/lib", "lib64"}
	find := func(name string) ([]byte, error) {
		for _, d := range dirs {
			data, err := os.ReadFile(filepath.Join(b.Sysroot, d, name))
			if err == nil {
				return data, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		return nil, fmt.Errorf("%s not found under %s (in %s): install the platform's C library (Debian: libc6, or libc6-<arch>-cross for another platform)", name, b.Sysroot, strings.Join(dirs, ", "))
	}

	loader, err := os.ReadFile(filepath.Join(b.Sysroot, interp))
	if errors.Is(err, fs.ErrNotExist) {
		loader, err = find(path.Base(interp))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: interpreter: %w", b.Path, err)
	}
	libs := map[string][]byte{}
	queue, err := f.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Path, err)
	}
	queue = append(queue, extra...)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if _, done := libs[name]; done || name == path.Base(interp) {
			continue
		}
		data, err := find(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Path, err)
		}
		lf, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", b.Path, name, err)
		}
		if lf.Machine != f.Machine {
			return nil, fmt.Errorf("%s: %s in %s is for %s, the binary for %s: give the sysroot of %s", b.Path, name, b.Sysroot, lf.Machine, f.Machine, b.Platform)
		}
		more, err := lf.ImportedLibraries()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", b.Path, name, err)
		}
		libs[name] = data
		queue = append(queue, more...)
	}

	// The NVIDIA container toolkit mounts the driver's libraries into usr/lib/<triplet> on Debian-like images,
	// usr/lib64 on others; both exist, and are on the library path.
	toolkitDirs := []string{"usr/lib/" + triplet, "usr/lib64"}
	rt := &cRuntime{libraryPath: []string{"/" + libDir}}
	dirSet := map[string]bool{}
	for _, d := range append([]string{libDir, path.Dir(strings.TrimPrefix(interp, "/"))}, toolkitDirs...) {
		for ; d != "." && d != "/" && d != ""; d = path.Dir(d) {
			dirSet[d] = true
		}
	}
	for _, d := range toolkitDirs {
		rt.libraryPath = append(rt.libraryPath, "/"+d)
	}
	// Parents sort before their children.
	for _, d := range slices.Sorted(maps.Keys(dirSet)) {
		rt.files = append(rt.files, file{name: d, mode: 0o755, dir: true})
	}
	rt.files = append(rt.files, file{name: strings.TrimPrefix(interp, "/"), mode: 0o755, data: loader})
	for _, name := range slices.Sorted(maps.Keys(libs)) {
		rt.files = append(rt.files, file{name: libDir + "/" + name, mode: 0o755, data: libs[name]})
	}
	return rt, nil
}

// interpreter returns the program interpreter (dynamic loader) an ELF executable names, "" for a static one.
func interpreter(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		data, err := io.ReadAll(p.Open())
		if err != nil {
			return "", fmt.Errorf("read the ELF interpreter: %w", err)
		}
		return strings.TrimRight(string(data), "\x00"), nil
	}
	return "", nil
}
