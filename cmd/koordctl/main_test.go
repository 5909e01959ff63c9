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

package main

import (
	"strings"
	"testing"
)

// TestCommands runs every command's help. The test binary links what koordctl links, so it also fails to start
// when a dependency breaks the program's loading: the stdlib plugin package, which k8s.io/cli-runtime imports,
// makes the loader resolve go-nvml's symbols at start, and they are missing on a machine without NVML.
func TestCommands(t *testing.T) {
	for _, cmd := range []string{"up", "down", "demo", "check", "explain", "explain pod", "explain node", "explain quota", "explain gang"} {
		if err := run(t.Context(), append(strings.Fields(cmd), "--help")); err != nil {
			t.Errorf("koordctl %s --help: %v", cmd, err)
		}
	}
	if err := run(t.Context(), []string{"nothing"}); err == nil {
		t.Errorf("koordctl nothing: no error")
	}
}
