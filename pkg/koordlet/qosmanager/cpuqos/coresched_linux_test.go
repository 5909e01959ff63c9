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
	"os/exec"
	"strings"
	"testing"
)

// TestKernelCoreScheduler runs against the kernel of the machine: with core scheduling, a child process gets a
// cookie, shares it and loses it; without, Supported says why.
func TestKernelCoreScheduler(t *testing.T) {
	var cs KernelCoreScheduler
	if err := cs.Supported(); err != nil {
		if !strings.Contains(err.Error(), "core scheduling") && !strings.Contains(err.Error(), "multithreading") {
			t.Fatalf("Supported = %v, want a reason naming core scheduling or multithreading", err)
		}
		t.Logf("this kernel: %v", err)
		return
	}
	start := func() int {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd.Process.Pid
	}
	a, b := start(), start()
	if err := cs.Create(a); err != nil {
		t.Fatal(err)
	}
	if err := cs.Assign(a, []int{b}); err != nil {
		t.Fatal(err)
	}
	ca, _ := cs.Cookie(a)
	cb, _ := cs.Cookie(b)
	if ca == 0 || ca != cb {
		t.Fatalf("cookies %d, %d; want one non-zero cookie", ca, cb)
	}
	if err := cs.Clear([]int{a, b}); err != nil {
		t.Fatal(err)
	}
	if ca, _ := cs.Cookie(a); ca != 0 {
		t.Errorf("cookie %d after Clear, want 0", ca)
	}
	if self, _ := cs.Cookie(0); self != 0 {
		t.Errorf("the test's own thread has cookie %d, want 0: Assign must run on a throwaway thread", self)
	}
}
