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
	"strings"
	"testing"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

// TestRegister: the metrics are served from kube-scheduler's legacy registry under koord_scheduler_, and
// registering twice is harmless.
func TestRegister(t *testing.T) {
	Register()
	Register()
	before, err := testutil.GetCounterMetricValue(GangTimeouts)
	if err != nil {
		t.Fatal(err)
	}
	GangTimeouts.Inc()
	LoadAwareRejections.WithLabelValues("cpu").Inc()
	if after, err := testutil.GetCounterMetricValue(GangTimeouts); err != nil || after != before+1 {
		t.Errorf("gang timeouts = %v, %v; want %v", after, err, before+1)
	}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "koord_scheduler_") {
			names = append(names, f.GetName())
		}
	}
	for _, want := range []string{"koord_scheduler_gang_timeouts_total", "koord_scheduler_load_aware_rejections_total"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("the registry serves %v, not %s", names, want)
		}
	}
}
