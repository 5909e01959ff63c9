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

	"k8s.io/utils/cpuset"
)

// CPUSet returns the CPUs dir may run on. It reads cpuset.cpus; on v2 an
// empty cpuset.cpus means the cgroup inherits its parent's CPUs, and
// cpuset.cpus.effective is returned instead. On v1 an empty cpuset.cpus is
// an empty set (a new cgroup nobody has configured).
func (m *Manager) CPUSet(ctx context.Context, dir string) (cpuset.CPUSet, error) {
	cpus, err := m.configuredCPUSet(ctx, dir, knobCPUSetCPUs)
	if err != nil || m.layout.Version == V1 || !cpus.IsEmpty() {
		return cpus, err
	}
	return m.configuredCPUSet(ctx, dir, knobCPUSetCPUsEff)
}

func (m *Manager) configuredCPUSet(ctx context.Context, dir, knob string) (cpuset.CPUSet, error) {
	var cpus cpuset.CPUSet
	err := m.read(ctx, dir, knob, func(b []byte) error {
		var err error
		cpus, err = cpuset.Parse(string(bytes.TrimSpace(b)))
		return err
	})
	return cpus, err
}

// SetCPUSet sets cpuset.cpus of dir to a non-empty set. It writes nothing
// when cpuset.cpus already holds exactly that set (on v2 an empty,
// inheriting cpuset.cpus is not equal to anything) and reports whether it
// wrote. On v1 the kernel rejects (EACCES) CPUs outside the parent's set,
// and (EBUSY) a set that would leave a child with CPUs its parent no longer
// has; use
// SetCPUSetTree to change a parent and its children together.
func (m *Manager) SetCPUSet(ctx context.Context, dir string, cpus cpuset.CPUSet) (bool, error) {
	if cpus.IsEmpty() {
		return false, fmt.Errorf("%s for cgroup %s: empty set: %w", knobCPUSetCPUs, dir, ErrInvalidValue)
	}
	cur, err := m.configuredCPUSet(ctx, dir, knobCPUSetCPUs)
	if err != nil {
		return false, err
	}
	if cur.Equals(cpus) {
		return false, nil
	}
	if err := m.write(ctx, dir, knobCPUSetCPUs, cpus.String()); err != nil {
		return false, err
	}
	return true, nil
}

// SetCPUSetTree sets cpuset.cpus of every directory in dirs, listed parent
// first (e.g. the besteffort QoS dir, then its pods, then their containers),
// to cpus, and reports whether it wrote anything.
//
// On v1 a child's CPUs must stay within its parent's at every step, so it
// writes in two passes: top-down, each directory gets its current CPUs plus
// cpus (this grows the tree, and does nothing when cpus is a subset of what
// each already has); then bottom-up, each directory gets exactly cpus (this
// shrinks it, and does nothing when the first pass already set them). A
// growing change is therefore written top-down, a shrinking one bottom-up,
// and any other change goes through the union. On v2 there is no such rule
// and each directory is written once, parent first.
//
// It stops at the first error; a directory that is gone gives ErrNotFound.
func (m *Manager) SetCPUSetTree(ctx context.Context, dirs []string, cpus cpuset.CPUSet) (bool, error) {
	if cpus.IsEmpty() {
		return false, fmt.Errorf("%s for cgroups %v: empty set: %w", knobCPUSetCPUs, dirs, ErrInvalidValue)
	}
	changed := false
	if m.layout.Version == V1 {
		for _, dir := range dirs {
			cur, err := m.configuredCPUSet(ctx, dir, knobCPUSetCPUs)
			if err != nil {
				return changed, err
			}
			c, err := m.SetCPUSet(ctx, dir, cur.Union(cpus))
			changed = changed || c
			if err != nil {
				return changed, err
			}
		}
	}
	for i := range dirs {
		dir := dirs[i]
		if m.layout.Version == V1 {
			dir = dirs[len(dirs)-1-i]
		}
		c, err := m.SetCPUSet(ctx, dir, cpus)
		changed = changed || c
		if err != nil {
			return changed, err
		}
	}
	return changed, nil
}
