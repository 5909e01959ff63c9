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

package sloconfig

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// configValid is koord_manager_slo_config_valid: 1 while the latest version of the ConfigMap is in force (or
	// the ConfigMap is missing and the defaults are), 0 while the latest version was rejected and an older one is
	// in force. It starts at 1, so replicas that are not the leader, which load nothing, raise no alarm.
	configValid = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "koord_manager",
		Subsystem: "slo_config",
		Name:      "valid",
		Help: "1 when the latest version of the slo-controller-config ConfigMap parsed, validated and is in force; " +
			"0 when it was rejected and the last good version stays in force.",
	})
	// configRejected is koord_manager_slo_config_rejected_total: versions of the ConfigMap that were rejected.
	configRejected = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "koord_manager",
		Subsystem: "slo_config",
		Name:      "rejected_total",
		Help:      "Versions of the slo-controller-config ConfigMap that did not parse or validate and were not applied.",
	})
)

func init() {
	configValid.Set(1)
	ctrlmetrics.Registry.MustRegister(configValid, configRejected)
}
