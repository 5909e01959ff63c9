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

// Package localcluster runs the end-to-end suites that share one local cluster (pkg/koordctl/cluster) per test
// package: it starts the cluster from TestMain, runs the tests, stops it, and keeps the components' logs when
// something failed.
package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/test/testenv"
)

// Suite says how a package's cluster is made.
type Suite struct {
	// Name names the temporary directory, koord-e2e-<name>-*.
	Name string
	// StartTimeout bounds the cluster's start.
	StartTimeout time.Duration
	// Configure changes the options, which come with the binaries and a state directory in tmp set; tmp is
	// the suite's temporary directory, for files the options name.
	Configure func(opts *cluster.Options, tmp string) error
	// SetUp, when set, runs once the cluster is up, before the tests.
	SetUp func(ctx context.Context, c *cluster.Cluster) error
}

// Main starts the suite's cluster, runs the tests and stops the cluster, and exits with the result: it fails
// when a step fails, when the cluster failed while the tests ran, or when it does not stop cleanly. The
// temporary directory is removed when all went well, else its logs are kept and named.
func Main(m *testing.M, s Suite) {
	testenv.RunReaperIfAsked()
	os.Exit(run(m, s))
}

func run(m *testing.M, s Suite) (code int) {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "koord-e2e-"+s.Name+"-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "create a temporary directory: %v\n", err)
		return 1
	}
	code = 1
	defer func() {
		if code == 0 {
			_ = os.RemoveAll(tmp)
			return
		}
		fmt.Fprintf(os.Stderr, "the components' logs are kept in %s\n", filepath.Join(tmp, "state", cluster.LogDir))
	}()

	// Whatever happens to this process (a panic, a timeout's SIGKILL), the cluster's processes do not outlive it:
	// etcd and kube-apiserver are envtest's children and would.
	reaper, err := testenv.ReapProcesses(tmp)
	if err != nil {
		fmt.Fprintf(os.Stderr, "reaper: %v\n", err)
		return 1
	}
	defer reaper.Stop()

	binDir, err := testenv.LocalClusterBinDir(ctx, tmp)
	if err != nil {
		fmt.Fprintf(os.Stderr, "binaries: %v\n", err)
		return 1
	}
	opts := cluster.DefaultOptions()
	opts.BinDir = binDir
	opts.StateDir = filepath.Join(tmp, "state")
	opts.KubeconfigOut = ""
	if err := s.Configure(&opts, tmp); err != nil {
		fmt.Fprintf(os.Stderr, "configure the local cluster: %v\n", err)
		return 1
	}

	startCtx, cancel := context.WithTimeout(ctx, s.StartTimeout)
	c, err := cluster.Start(startCtx, opts, nil)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the local cluster: %v\n", err)
		return 1
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop the local cluster: %v\n", err)
			code = 1
		}
	}()
	if s.SetUp != nil {
		if err := s.SetUp(ctx, c); err != nil {
			fmt.Fprintf(os.Stderr, "set up the suite: %v\n", err)
			return 1
		}
	}
	code = m.Run()
	if err := c.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "the local cluster failed while the tests ran: %v\n", err)
		code = 1
	}
	return code
}

// Eventually calls cond every interval until it returns true, and fails the test when timeout passes first,
// naming what was awaited and the last state cond described. cond gets the test's context, not the poll's: a
// request cut short by the poll's deadline would replace the last real state with a client error.
func Eventually(ctx context.Context, t *testing.T, interval, timeout time.Duration, what string, cond func(context.Context) (bool, string)) {
	t.Helper()
	var state string
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(context.Context) (bool, error) {
		var ok bool
		ok, state = cond(ctx)
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s (%v); last seen: %s", what, timeout, err, state)
	}
}
