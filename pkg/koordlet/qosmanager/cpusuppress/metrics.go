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

package cpusuppress

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are the strategy's Prometheus collectors. Create them with NewMetrics, register them once with
// Register and pass them to New with WithMetrics.
type Metrics struct {
	// allowed is koord_koordlet_be_cpu_allowed_cores.
	allowed prometheus.Gauge
	// suppress is koord_koordlet_be_cpu_suppress_cores{policy}.
	suppress *prometheus.GaugeVec
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		allowed: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "be_cpu_allowed_cores",
			Help: "CPU the BE pods may use by the suppression formula, in cores: capacity x " +
				"cpuSuppressThresholdPercent - non-BE pods' and host applications' usage - max(system usage, node reserved), " +
				"scaled by cpuSuppressPSIThresholdPercent / the non-BE pods' CPU pressure when that is higher, " +
				"at least capacity x cpuSuppressMinPercent.",
		}),
		suppress: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "be_cpu_suppress_cores",
			Help: "CPU the besteffort cgroup is limited to, in cores, by the policy in force (cpuset: number of " +
				"CPUs; cfsQuota: quota / period). Absent while suppression is off.",
		}, []string{"policy"}),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.allowed), reg.Register(m.suppress))
}
