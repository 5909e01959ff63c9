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

package manager

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/koord-dev/koord/pkg/manager/controller/noderesource"
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
	"github.com/koord-dev/koord/pkg/manager/webhook"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are koord-manager's metrics, of every package that records any.
type Metrics struct {
	SLOConfig    *sloconfig.Metrics
	NodeResource *noderesource.Metrics
	Webhook      *webhook.Metrics
	// Leading is koord_manager_leading.
	Leading prometheus.Gauge
}

// NewMetrics creates them, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		SLOConfig: sloconfig.NewMetrics(), NodeResource: noderesource.NewMetrics(), Webhook: webhook.NewMetrics(),
		Leading: koordmetrics.NewLeadingGauge(koordmetrics.SubsystemManager, "koord-manager", "runs the controllers; every replica serves the webhooks"),
	}
}

// Register registers them with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(m.SLOConfig.Register(reg), m.NodeResource.Register(reg), m.Webhook.Register(reg), reg.Register(m.Leading))
}

// registeredMetrics returns koord-manager's metrics, registered in controller-runtime's registry (which the
// manager's metrics endpoint serves) on the first call. The registry is the process's, so managers started
// one after another in a process (tests) share them.
var registeredMetrics = sync.OnceValue(func() *Metrics {
	m := NewMetrics()
	// Registration fails only for a name registered twice: a bug caught by this package's tests.
	utilruntime.Must(m.Register(ctrlmetrics.Registry))
	return m
})
