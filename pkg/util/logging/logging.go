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

// Package logging applies component-base's logging flags the same way in every Koord command.
package logging

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
)

// Apply validates the logging configuration the command's flags filled in and applies it to klog. The logging
// gates are versioned against Kubernetes releases, so they live in a gate set of their own.
func Apply(c *logsapi.LoggingConfiguration) error {
	gates := featuregate.NewVersionedFeatureGate(version.MustParse("1.37"))
	if err := logsapi.AddFeatureGates(gates); err != nil {
		return fmt.Errorf("register logging feature gates: %w", err)
	}
	if err := logsapi.ValidateAndApply(c, gates); err != nil {
		return fmt.Errorf("logging flags: %w", err)
	}
	return nil
}
