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

package sysfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.max")
	content := strings.Repeat("100000 ", 100)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path, make([]byte, 0, 8))
	if err != nil || string(got) != content {
		t.Fatalf("Read = %q, %v", got, err)
	}
	got, err = Read(path, []byte("prefix:"))
	if err != nil || string(got) != "prefix:"+content {
		t.Errorf("Read appended %q, %v", got, err)
	}
	if err := Write(path, "max 100000"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "max 100000" {
		t.Errorf("after Write the file holds %q", b)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := Read(missing, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing file = %v, want ErrNotExist", err)
	}
	if err := Write(missing, "1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write of a missing file = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("Write created the file")
	}
}

// TestReadWriteInt: integers round-trip with the kernel's trailing newline ignored; a file that holds no
// integer and a missing file are errors naming the path.
func TestReadWriteInt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sched_autogroup_enabled")
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := ReadInt(path); err != nil || v != 1 {
		t.Errorf("ReadInt = %d, %v; want 1", v, err)
	}
	if err := WriteInt(path, -42); err != nil {
		t.Fatal(err)
	}
	if v, err := ReadInt(path); err != nil || v != -42 {
		t.Errorf("ReadInt after WriteInt(-42) = %d, %v", v, err)
	}
	if err := os.WriteFile(path, []byte("max\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadInt(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadInt of %q = %v, want an error naming the path", "max", err)
	}
	if _, err := ReadInt(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadInt of a missing file = %v, want ErrNotExist", err)
	}
	if err := WriteInt(filepath.Join(dir, "missing"), 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteInt of a missing file = %v, want ErrNotExist (it never creates files)", err)
	}
}
