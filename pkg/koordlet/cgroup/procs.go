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
	"context"
	"fmt"
)

// knobProcs lists the processes (thread group IDs) of a cgroup, one per line, on v1 and v2.
const knobProcs = "cgroup.procs"

// Procs returns the processes of dir itself, not of its children, as their PIDs (thread group IDs): on v1
// those of the cpu controller's hierarchy.
func (m *Manager) Procs(ctx context.Context, dir string) ([]int, error) {
	var out []int
	err := m.read(ctx, dir, knobProcs, func(b []byte) error {
		for line := range bytes.SplitSeq(b, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			v, err := parseInt(line)
			if err != nil || v <= 0 {
				return fmt.Errorf("%q is not a PID", line)
			}
			out = append(out, int(v))
		}
		return nil
	})
	return out, err
}
