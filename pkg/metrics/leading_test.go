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

package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestLeadingRunnable: the gauge is 0 while standing by, 1 once elected, 0 again when the manager stops.
func TestLeadingRunnable(t *testing.T) {
	g := NewLeadingGauge(SubsystemManager, "koord-manager", "runs the controllers")
	g.Set(-1)
	elected := make(chan struct{})
	r := LeadingRunnable{Elected: elected, Gauge: g}
	if r.NeedLeaderElection() {
		t.Error("the runnable waits for leader election; standbys would not report 0")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()

	waitGauge := func(want float64) {
		t.Helper()
		err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return testutil.ToFloat64(g) == want, nil
		})
		if err != nil {
			t.Fatalf("gauge %v, want %v", testutil.ToFloat64(g), want)
		}
	}
	waitGauge(0)
	close(elected)
	waitGauge(1)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
	if v := testutil.ToFloat64(g); v != 0 {
		t.Errorf("gauge %v after the stop, want 0", v)
	}
}
