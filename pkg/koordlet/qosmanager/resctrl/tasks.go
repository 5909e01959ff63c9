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

package resctrl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// threadsKnob returns the file of a cgroup that lists its threads: tasks (in the cpu hierarchy) on cgroup v1,
// cgroup.threads on v2.
func threadsKnob(l cgroup.Layout) string {
	if l.Version == cgroup.V1 {
		return "tasks"
	}
	return "cgroup.threads"
}

// podThreads returns the threads of pod: those of its cgroup and of every cgroup directly under it, which are
// its containers and its sandbox (the pause container, or the VM of a VM-based runtime). A pod or container
// whose cgroup is gone, or not there yet, has none.
func podThreads(l cgroup.Layout, pod *corev1.Pod) ([]int, error) {
	knob := threadsKnob(l)
	podDir := l.PodDir(extension.GetKubeQoSClass(pod), pod.UID)
	base := l.DirPath(podDir, knob)
	entries, err := os.ReadDir(base)
	if gone(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ids, err := readIDs(filepath.Join(base, knob))
	if err != nil && !gone(err) {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		more, err := readIDs(filepath.Join(base, e.Name(), knob))
		if gone(err) {
			// The container exited between the listing and the read.
			continue
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	return ids, nil
}

// gone reports whether err says a cgroup is not there (any more): a missing file, or a removed cgroup (ENODEV).
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV)
}

// readIDs reads a file of thread IDs, one per line.
func readIDs(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		id, err := strconv.Atoi(line)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("%s: %q is not a thread ID", path, line)
		}
		out = append(out, id)
	}
	return out, nil
}

// assignThreads writes to the tasks file of the group at dir each of ids it does not list yet, one per write as
// the kernel takes them, and returns how many it moved. Threads that exited meanwhile (ESRCH) are skipped.
func assignThreads(dir string, ids []int) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	path := filepath.Join(dir, tasksFile)
	cur, err := readIDs(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	have := sets.New(cur...)
	var todo []int
	for _, id := range ids {
		if !have.Has(id) {
			have.Insert(id)
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	slices.Sort(todo)
	// O_CREATE only matters to a fake tree: the kernel creates tasks with the group.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	moved, failed := 0, 0
	var first error
	for _, id := range todo {
		_, err := f.WriteString(strconv.Itoa(id) + "\n")
		switch {
		case err == nil:
			moved++
		case errors.Is(err, syscall.ESRCH):
		default:
			if first == nil {
				first = err
			}
			failed++
		}
	}
	closeErr := f.Close()
	if first != nil {
		return moved, fmt.Errorf("%d of %d threads not moved: %w", failed, len(todo), first)
	}
	return moved, closeErr
}
