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

package scheduler

import (
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"
)

// schedulerCounters returns kube-scheduler's scheduling attempt, plugin evaluation and opportunistic batching
// counters, one "name{labels} value" a line. They tell, e.g., whether pods were scheduled from a batch's cached
// results, and how many nodes each plugin's Filter and Score looked at.
func schedulerCounters() (string, error) {
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return "", fmt.Errorf("gather metrics: %w", err)
	}
	var b strings.Builder
	b.WriteString("kube-scheduler counters:\n")
	for _, f := range families {
		name := f.GetName()
		if f.GetType() != dto.MetricType_COUNTER || !strings.HasPrefix(name, "scheduler_batch_") && name != "scheduler_schedule_attempts_total" && name != "scheduler_plugin_evaluation_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			fmt.Fprintf(&b, "%s{%s} %v\n", name, strings.Join(labels, ","), m.GetCounter().GetValue())
		}
	}
	return b.String(), nil
}
