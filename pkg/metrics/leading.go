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

	"github.com/prometheus/client_golang/prometheus"
)

// NewLeadingGauge returns koord_<subsystem>_leading, unregistered: 1 once the component's replica leads, 0
// while it stands by. what says what the leader does that the standbys do not.
func NewLeadingGauge(subsystem, component, what string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: subsystem, Name: "leading",
		Help: "1 once this " + component + " replica leads (" + what + "), 0 while it stands by.",
	})
}

// LeadingRunnable is a controller-runtime Runnable that keeps a leading gauge: 0 from its start until elected
// is closed (controller-runtime's Manager.Elected, closed at once without leader election), then 1 until the
// manager stops. It runs in every replica, not only the leader.
type LeadingRunnable struct {
	Elected <-chan struct{}
	Gauge   prometheus.Gauge
}

// Start implements manager.Runnable.
func (r LeadingRunnable) Start(ctx context.Context) error {
	r.Gauge.Set(0)
	select {
	case <-r.Elected:
		r.Gauge.Set(1)
	case <-ctx.Done():
		return nil
	}
	<-ctx.Done()
	r.Gauge.Set(0)
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: the gauge is kept in standbys too.
func (r LeadingRunnable) NeedLeaderElection() bool { return false }
