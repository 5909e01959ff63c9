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
	"errors"
	"fmt"
	"math"
)

// unlimitedBytes is the smallest memory value read as "no limit": cgroup v1
// reports an unlimited memory.limit_in_bytes as the largest page-aligned
// int64 (9223372036854771712 with 4 KiB pages), and no real limit comes close
// to 4 EiB.
const unlimitedBytes = int64(1) << 62

// errMissingField is wrapped when a key/value file lacks a field.
var errMissingField = errors.New("missing field")

// parseInt parses a decimal int64 with an optional leading '-', after
// trimming white space. It does not allocate unless it fails.
func parseInt(b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	neg := false
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		neg, digits = true, digits[1:]
	}
	if len(digits) == 0 {
		return 0, fmt.Errorf("parsing %q: not an integer", b)
	}
	var v uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("parsing %q: not an integer", b)
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, fmt.Errorf("parsing %q: out of range", b)
		}
		v = v*10 + d
	}
	switch {
	case !neg && v <= math.MaxInt64:
		return int64(v), nil
	case neg && v <= math.MaxInt64+1:
		return -int64(v), nil
	}
	return 0, fmt.Errorf("parsing %q: out of range", b)
}

// parseMax parses an integer or the word "max", which gives -1.
func parseMax(b []byte) (int64, error) {
	if string(bytes.TrimSpace(b)) == "max" {
		return -1, nil
	}
	return parseInt(b)
}

// parseBytesLimit parses a memory limit: "max" or a value of at least
// unlimitedBytes give -1.
func parseBytesLimit(b []byte) (int64, error) {
	v, err := parseMax(b)
	if err != nil {
		return 0, err
	}
	if v >= unlimitedBytes {
		return -1, nil
	}
	return v, nil
}

// statFields looks up keys in a "key value" per line file (cpu.stat,
// memory.stat) and stores their values in out, in the order of keys. It
// fails naming the first key it did not find.
func statFields(b []byte, keys []string, out []int64) error {
	found := 0
	var seen uint64 // bit i set when keys[i] was found; keys has at most 64 entries
	for len(b) > 0 && found < len(keys) {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		k, v := line[:sp], line[sp+1:]
		for i, key := range keys {
			if seen&(1<<i) != 0 || string(k) != key {
				continue
			}
			n, err := parseInt(v)
			if err != nil {
				return fmt.Errorf("field %s: %w", key, err)
			}
			out[i] = n
			seen |= 1 << i
			found++
			break
		}
	}
	for i, key := range keys {
		if seen&(1<<i) == 0 {
			return fmt.Errorf("field %s: %w", key, errMissingField)
		}
	}
	return nil
}

// isMissingField reports whether err says a key/value file lacks a field.
func isMissingField(err error) bool {
	return errors.Is(err, errMissingField)
}
