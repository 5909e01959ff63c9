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

// Package sysfile reads and writes the small files of kernel filesystems (cgroupfs, procfs) with plain system
// calls: no *os.File, no poller registration, and no allocation when the caller's buffer is large enough.
// koordlet reads thousands of them every second.
package sysfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Open opens path with flags (O_CLOEXEC added), retrying on EINTR.
func Open(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags|syscall.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// Read appends the content of the file at path to buf and returns it.
func Read(path string, buf []byte) ([]byte, error) {
	fd, err := Open(path, syscall.O_RDONLY)
	if err != nil {
		return buf, err
	}
	// Closing a file opened read-only reports nothing worth acting on.
	defer func() { _ = syscall.Close(fd) }()
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return buf, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// Write writes value to the existing file at path in one write(2), as cgroup files expect; it never creates the
// file.
func Write(path, value string) error {
	fd, err := Open(path, syscall.O_WRONLY|syscall.O_TRUNC)
	if err != nil {
		return err
	}
	var werr error
	for {
		_, werr = syscall.Write(fd, []byte(value))
		if !errors.Is(werr, syscall.EINTR) {
			break
		}
	}
	cerr := syscall.Close(fd)
	if werr != nil {
		return &os.PathError{Op: "write", Path: path, Err: werr}
	}
	if cerr != nil {
		return &os.PathError{Op: "close", Path: path, Err: cerr}
	}
	return nil
}

// ReadInt reads the integer the file at path holds, such as a sysctl under /proc/sys.
func ReadInt(path string) (int64, error) {
	var buf [32]byte
	b, err := Read(path, buf[:0])
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// WriteInt writes v to the existing file at path (see Write).
func WriteInt(path string, v int64) error {
	return Write(path, strconv.FormatInt(v, 10))
}
