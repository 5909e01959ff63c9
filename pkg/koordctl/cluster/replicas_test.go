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

package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
)

// newProcessCluster returns a cluster that runs shell commands as its components (the binary "sh" of /bin),
// for the tests of how it watches, restarts and tells apart its processes; its processes are stopped when the
// test ends.
func newProcessCluster(t *testing.T) *Cluster {
	t.Helper()
	logger, _ := ktesting.NewTestContext(t)
	c := &Cluster{
		opts:   Options{BinDir: "/bin"},
		clock:  clock.RealClock{},
		logger: logger,
		logDir: t.TempDir(),
		failed: make(chan struct{}),
		exits:  map[string]int{},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	t.Cleanup(func() {
		c.stopping.Store(true)
		c.cancel()
		c.wg.Wait()
		c.procsMu.Lock()
		defer c.procsMu.Unlock()
		for _, p := range c.procs {
			_ = p.stop(c.clock, time.Second)
		}
	})
	return c
}

// startShell starts script as the component name; replica as for a replica of a leader-elected component.
func startShell(t *testing.T, c *Cluster, name, script string, replica bool) *process {
	t.Helper()
	p, err := c.startBinary(t.Context(), name, "sh", []string{"-c", script}, replica)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	return p
}

// waitLog waits until the log of p has s, so that what the test reads next follows the process's output.
func waitLog(t *testing.T, p *process, s string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return p.logContains(s)
	})
	if err != nil {
		t.Fatalf("%s never wrote %q: %v", p.name, s, err)
	}
}

func TestLogContains(t *testing.T) {
	const marker = leaseAcquired
	window := 1 << 20
	for name, tc := range map[string]struct {
		content  string
		logStart int64
		want     bool
	}{
		"in the first window":             {content: "a\n" + marker + "\nb\n", want: true},
		"absent":                          {content: "a\nb\n", want: false},
		"empty":                           {content: "", want: false},
		"across two windows":              {content: strings.Repeat("x", window-5) + marker + "\n", want: true},
		"in the third window":             {content: strings.Repeat("x", 2*window+17) + marker, want: true},
		"before the process started":      {content: marker + "\nrestarted\n", logStart: int64(len(marker) + 1), want: false},
		"after the process started":       {content: "old\n" + marker + "\n", logStart: 4, want: true},
		"cut by the start of the process": {content: marker + "\n", logStart: 3, want: false},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			p := &process{name: "x", logPath: path, logStart: tc.logStart}
			got, err := p.logContains(marker)
			if err != nil {
				t.Fatalf("logContains() = %v", err)
			}
			if got != tc.want {
				t.Errorf("logContains() = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := (&process{logPath: filepath.Join(t.TempDir(), "missing")}).logContains(marker); err == nil {
		t.Error("logContains() of a missing log = nil error")
	}
}

func TestLeader(t *testing.T) {
	const (
		follows = "echo 'Attempting to acquire leader lease'; exec sleep 60"
		leads   = "echo '" + leaseAcquired + "'; exec sleep 60"
	)
	t.Run("one replica leads without an election", func(t *testing.T) {
		c := newProcessCluster(t)
		startShell(t, c, managerName, "exec sleep 60", false)
		if got, err := c.Leader(managerName); err != nil || got != managerName {
			t.Errorf("Leader() = %q, %v; want %q", got, err, managerName)
		}
	})
	t.Run("the replica that acquired the lease", func(t *testing.T) {
		c := newProcessCluster(t)
		waitLog(t, startShell(t, c, managerName, follows, true), "Attempting")
		second := startShell(t, c, replicaName(managerName, 1), leads, true)
		startShell(t, c, schedulerName, leads, false)
		waitLog(t, second, leaseAcquired)
		if diff := cmp.Diff([]string{"koord-manager", "koord-manager-2"}, c.Replicas(managerName)); diff != "" {
			t.Errorf("Replicas() (-want,+got):\n%s", diff)
		}
		if got, err := c.Leader(managerName); err != nil || got != "koord-manager-2" {
			t.Errorf("Leader() = %q, %v; want koord-manager-2", got, err)
		}
		// A killed leader leads no more, and its log does not make it lead after its restart.
		if err := c.Kill("koord-manager-2"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Leader(managerName); err == nil || !strings.Contains(err.Error(), "none of the running replicas") {
			t.Errorf("Leader() with the leader killed = %v, want an error saying none leads", err)
		}
		c.procsMu.Lock()
		c.procs[1].args = []string{"-c", follows}
		c.procsMu.Unlock()
		if err := c.Restart(t.Context(), "koord-manager-2"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Leader(managerName); err == nil {
			t.Error("Leader() after the old leader restarted as a follower = nil error")
		}
	})
	t.Run("two replicas claiming the lease", func(t *testing.T) {
		c := newProcessCluster(t)
		first := startShell(t, c, managerName, leads, true)
		second := startShell(t, c, replicaName(managerName, 1), leads, true)
		waitLog(t, first, leaseAcquired)
		waitLog(t, second, leaseAcquired)
		if _, err := c.Leader(managerName); err == nil || !strings.Contains(err.Error(), "all say they acquired") {
			t.Errorf("Leader() = %v, want an error naming both", err)
		}
	})
	t.Run("not a component", func(t *testing.T) {
		c := newProcessCluster(t)
		if _, err := c.Leader("koord-nothing"); err == nil || !strings.Contains(err.Error(), "not a component") {
			t.Errorf("Leader() = %v, want an error saying it is not a component", err)
		}
	})
}

func TestReplicaExits(t *testing.T) {
	t.Run("a replica that exits is started again", func(t *testing.T) {
		c := newProcessCluster(t)
		old := startShell(t, c, managerName, "echo started; exec sleep 60", true)
		waitLog(t, old, "started")
		if err := syscall.Kill(old.pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return c.Exits(managerName) == 1, nil
		})
		if err != nil {
			t.Fatalf("Exits() = %d, want 1", c.Exits(managerName))
		}
		c.procsMu.Lock()
		now := c.procs[0]
		c.procsMu.Unlock()
		if now == old || now.exited() {
			t.Errorf("the replica was not started again: pid %d, exited %v", now.pid(), now.exited())
		}
		select {
		case <-c.Failed():
			t.Errorf("the cluster failed: %v", c.Err())
		default:
		}
	})
	t.Run("a replica in a crash loop fails the cluster", func(t *testing.T) {
		c := newProcessCluster(t)
		startShell(t, c, managerName, "echo 'cannot start'; exit 3", true)
		select {
		case <-c.Failed():
		case <-time.After(20 * time.Second):
			t.Fatal("the cluster did not fail")
		}
		if got := c.Err().Error(); !strings.Contains(got, "exited 3 times in a row") || !strings.Contains(got, "cannot start") {
			t.Errorf("Err() = %q, want the crash loop and the end of the log", got)
		}
		if got := c.Exits(managerName); got != maxReplicaCrashes-1 {
			t.Errorf("Exits() = %d, want %d", got, maxReplicaCrashes-1)
		}
	})
	t.Run("a component that is not a replica fails the cluster at once", func(t *testing.T) {
		c := newProcessCluster(t)
		startShell(t, c, "koord-descheduler", "exit 1", false)
		select {
		case <-c.Failed():
		case <-time.After(10 * time.Second):
			t.Fatal("the cluster did not fail")
		}
		if got := c.Exits("koord-descheduler"); got != 0 {
			t.Errorf("Exits() = %d, want 0", got)
		}
	})
}
