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
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Scopes of prctl PR_SCHED_CORE (enum pid_type).
const (
	scopeThread      = 0 // PIDTYPE_PID
	scopeThreadGroup = 1 // PIDTYPE_TGID
)

// KernelCoreScheduler is the kernel's core scheduling, through prctl PR_SCHED_CORE (Linux 5.14 with
// CONFIG_SCHED_CORE).
type KernelCoreScheduler struct{}

// Supported implements CoreScheduler: it reads the calling thread's cookie; EINVAL means a kernel without
// core scheduling, ENODEV a machine without SMT.
func (KernelCoreScheduler) Supported() error {
	var cookie uint64
	err := unix.Prctl(unix.PR_SCHED_CORE, unix.PR_SCHED_CORE_GET, 0, scopeThread, uintptr(unsafe.Pointer(&cookie)))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL):
		return errors.New("the kernel has no core scheduling (CONFIG_SCHED_CORE, Linux 5.14)")
	case errors.Is(err, unix.ENODEV):
		return errors.New("the machine has no simultaneous multithreading")
	}
	return fmt.Errorf("prctl PR_SCHED_CORE_GET: %w", err)
}

// Cookie implements CoreScheduler.
func (KernelCoreScheduler) Cookie(pid int) (uint64, error) {
	var cookie uint64
	if err := unix.Prctl(unix.PR_SCHED_CORE, unix.PR_SCHED_CORE_GET, uintptr(pid), scopeThread, uintptr(unsafe.Pointer(&cookie))); err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	return cookie, nil
}

// Create implements CoreScheduler.
func (KernelCoreScheduler) Create(pid int) error {
	if err := unix.Prctl(unix.PR_SCHED_CORE, unix.PR_SCHED_CORE_CREATE, uintptr(pid), scopeThreadGroup, 0); err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	return nil
}

// Assign implements CoreScheduler: on a thread of its own, which takes the cookie of from and pushes it to
// each process, and which then exits, so that no other thread of koordlet ever carries a cookie.
func (KernelCoreScheduler) Assign(from int, to []int) error {
	return onThrowawayThread(func() error {
		if err := unix.Prctl(unix.PR_SCHED_CORE, unix.PR_SCHED_CORE_SHARE_FROM, uintptr(from), scopeThread, 0); err != nil {
			return fmt.Errorf("take the cookie of process %d: %w", from, err)
		}
		return shareTo(to)
	})
}

// Clear implements CoreScheduler: a fresh thread has no cookie, and pushes that to each process.
func (KernelCoreScheduler) Clear(pids []int) error {
	return onThrowawayThread(func() error { return shareTo(pids) })
}

func shareTo(pids []int) error {
	var errs []error
	for _, pid := range pids {
		err := unix.Prctl(unix.PR_SCHED_CORE, unix.PR_SCHED_CORE_SHARE_TO, uintptr(pid), scopeThreadGroup, 0)
		if err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("process %d: %w", pid, err))
		}
	}
	return errors.Join(errs...)
}

// onThrowawayThread runs f on an OS thread that exits afterwards: the goroutine stays locked to it, and the Go
// runtime ends a thread whose goroutine exits locked.
func onThrowawayThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- f()
	}()
	return <-done
}
