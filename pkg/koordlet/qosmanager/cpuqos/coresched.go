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

package cpuqos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"k8s.io/klog/v2"
)

// CoreScheduler sets the core scheduling cookies of processes (thread groups). The kernel's is prctl
// PR_SCHED_CORE (KernelCoreScheduler); tests use a fake.
type CoreScheduler interface {
	// Supported returns nil when the kernel schedules by cookies, else why not.
	Supported() error
	// Cookie returns the cookie of process pid, 0 for none.
	Cookie(pid int) (uint64, error)
	// Create gives process pid a new cookie of its own.
	Create(pid int) error
	// Assign gives each of the processes to the cookie of process from.
	Assign(from int, to []int) error
	// Clear takes the cookies of the processes away.
	Clear(pids []int) error
}

// cookieGroup is the processes of one core scheduling group in a round.
type cookieGroup struct {
	name string
	pids []int
}

// syncCookies gives the processes of each group one cookie, keeping the one most of its processes have when
// it is not another group's, and clears the cookies of the processes in clear. It returns the errors of the
// processes it could not set; a process that exited in the meantime is not an error.
func syncCookies(ctx context.Context, cs CoreScheduler, groups []cookieGroup, clear []int) error {
	var errs []error
	taken := map[uint64]string{}
	for _, g := range groups {
		if len(g.pids) == 0 {
			continue
		}
		cookies := make(map[int]uint64, len(g.pids))
		count := map[uint64]int{}
		for _, pid := range g.pids {
			c, err := cs.Cookie(pid)
			if err != nil {
				continue // exited
			}
			cookies[pid] = c
			count[c]++
		}
		// The group's cookie: the most common non-zero cookie no other group has taken.
		var target uint64
		for _, c := range slices.SortedFunc(maps.Keys(count), func(a, b uint64) int {
			return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b))
		}) {
			if _, other := taken[c]; c != 0 && !other {
				target = c
				break
			}
		}
		var from int
		if target == 0 {
			for _, pid := range g.pids {
				if _, alive := cookies[pid]; !alive {
					continue
				}
				if err := cs.Create(pid); err != nil {
					errs = append(errs, fmt.Errorf("core scheduling group %q: create a cookie for process %d: %w", g.name, pid, err))
					continue
				}
				c, err := cs.Cookie(pid)
				if err != nil || c == 0 {
					continue
				}
				target, from = c, pid
				cookies[pid] = c
				klog.FromContext(ctx).V(2).Info("Created a core scheduling cookie", "group", g.name, "pid", pid)
				break
			}
		} else {
			for _, pid := range g.pids {
				if cookies[pid] == target {
					from = pid
					break
				}
			}
		}
		if target == 0 {
			continue
		}
		taken[target] = g.name
		var to []int
		for _, pid := range g.pids {
			if c, alive := cookies[pid]; alive && c != target {
				to = append(to, pid)
			}
		}
		if len(to) > 0 {
			if err := cs.Assign(from, to); err != nil {
				errs = append(errs, fmt.Errorf("core scheduling group %q: share the cookie of process %d: %w", g.name, from, err))
			}
		}
	}
	var toClear []int
	for _, pid := range clear {
		if c, err := cs.Cookie(pid); err == nil && c != 0 {
			toClear = append(toClear, pid)
		}
	}
	if len(toClear) > 0 {
		if err := cs.Clear(toClear); err != nil {
			errs = append(errs, fmt.Errorf("core scheduling: clear the cookies of %d processes: %w", len(toClear), err))
		}
	}
	return errors.Join(errs...)
}
