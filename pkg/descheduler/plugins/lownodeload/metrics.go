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

package lownodeload

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koord-dev/koord/pkg/metrics"
)

// Metrics are LowNodeLoad's metrics.
type Metrics struct {
	// Nodes counts the nodes of each pool by class after each round.
	Nodes *prometheus.GaugeVec
	// Migrations counts the pods handed to the evictor, by pool and outcome.
	Migrations *prometheus.CounterVec
}

// NewMetrics creates them, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		Nodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: metrics.Namespace, Subsystem: metrics.SubsystemDescheduler, Name: "lownodeload_nodes",
			Help: "Nodes of a LowNodeLoad node pool by class in the last round: low, high, anomalous, prod_low, prod_high, prod_anomalous, both_low, unknown (no fresh NodeMetric).",
		}, []string{"pool", "class"}),
		Migrations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace, Subsystem: metrics.SubsystemDescheduler, Name: "lownodeload_migrations_total",
			Help: "Pods LowNodeLoad chose to move off hot nodes, by pool and result: requested (handed to the evictor), dry_run, failed.",
		}, []string{"pool", "result"}),
	}
}

// Register registers them with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.Nodes), reg.Register(m.Migrations))
}
