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

package migration

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetricsStartAtZero: every eviction policy and result is exported before any eviction, at 0.
func TestMetricsStartAtZero(t *testing.T) {
	m := NewMetrics()
	if got := testutil.CollectAndCount(m.Evictions); got != 9 {
		t.Errorf("%d eviction series before any eviction, want 9 (3 policies x 3 results)", got)
	}
	if got := testutil.ToFloat64(m.Evictions.WithLabelValues("SoftEviction", "too_many_requests")); got != 0 {
		t.Errorf("SoftEviction too_many_requests = %v before any eviction, want 0", got)
	}
}
