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
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// TestWatchAPIServerPaused checks that the apiserver watch counts no failure while a deliberate restart is under
// way, however long it takes, and fails the cluster once /readyz keeps failing afterwards. A slow etcd restart
// on a busy machine made the watch fail a running cluster (TestStartStop, CI of 31fd16e).
func TestWatchAPIServerPaused(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "[-]etcd failed: reason withheld", http.StatusInternalServerError)
	}))
	defer srv.Close()

	var paused atomic.Bool
	paused.Store(true)
	var pausedChecks atomic.Int32
	failed := make(chan error, 2)
	ctx := t.Context()
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchAPIServer(ctx, clock.RealClock{}, &rest.Config{Host: srv.URL}, 5*time.Millisecond, 3,
			func() bool {
				if paused.Load() {
					pausedChecks.Add(1)
					return true
				}
				return false
			},
			func(err error) { failed <- err })
	}()

	// Far more ticks than the 3 failures allowed pass while paused: no request, no failure.
	for pausedChecks.Load() < 20 {
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-failed:
		t.Fatalf("the watch failed the cluster during a restart: %v", err)
	default:
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the paused watch sent %d requests, want 0", n)
	}

	paused.Store(false)
	select {
	case err := <-failed:
		if got := requests.Load(); got < 3 {
			t.Errorf("the watch failed the cluster after %d failed requests, want at least 3: %v", got, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not fail the cluster after the restart, with /readyz failing")
	}
	<-done
}
