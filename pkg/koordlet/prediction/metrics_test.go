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

package prediction

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	pods := []*corev1.Pod{
		testPod("web-0", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour)),
		testPod("web-1", extension.PriorityProd, "4", "8Gi", start.Add(-48*time.Hour)),
	}
	in := &fakeInputs{node: testNode(), pods: pods}
	s, cache := newTestServer(in, WithMetrics(m))
	if _, _, err := s.Predict(pods, start); err == nil {
		t.Fatal("a prediction before any training")
	}
	now := newPlayer(s, cache).play(t, start, map[string]recorded{
		"web-0": steady(50, 1, 2*gi).then(steady(10, 2, 2*gi)), "web-1": steady(60, 1.5, 3*gi),
	})
	if _, _, err := s.Predict(pods, now); err != nil {
		t.Fatal(err)
	}
	// The values of TestCompute's "two prod pods", cpu in cores.
	const want = `
# HELP koord_koordlet_prediction_models Prediction models held: one per pod seen within the model expiration, plus the node's.
# TYPE koord_koordlet_prediction_models gauge
koord_koordlet_prediction_models 9
# HELP koord_koordlet_prediction_prod_peak Predicted peak usage of the prod pods and the system (cpu in cores, memory in bytes), by predictor: pod, priority, and min (the larger, reported in the NodeMetric's prodPeakMetric).
# TYPE koord_koordlet_prediction_prod_peak gauge
koord_koordlet_prediction_prod_peak{predictor="min",resource="cpu"} 4.551
koord_koordlet_prediction_prod_peak{predictor="min",resource="memory"} 7.400301779e+09
koord_koordlet_prediction_prod_peak{predictor="pod",resource="cpu"} 3.914
koord_koordlet_prediction_prod_peak{predictor="pod",resource="memory"} 5.948400028e+09
koord_koordlet_prediction_prod_peak{predictor="priority",resource="cpu"} 4.551
koord_koordlet_prediction_prod_peak{predictor="priority",resource="memory"} 7.400301779e+09
# HELP koord_koordlet_prediction_prod_reclaimable Resources predicted reclaimable from the prod pods (cpu in cores, memory in bytes), by predictor: pod, priority, and min (the smaller, reported in the NodeMetric's prodReclaimableMetric).
# TYPE koord_koordlet_prediction_prod_reclaimable gauge
koord_koordlet_prediction_prod_reclaimable{predictor="min",resource="cpu"} 3.449
koord_koordlet_prediction_prod_reclaimable{predictor="min",resource="memory"} 9.779567405e+09
koord_koordlet_prediction_prod_reclaimable{predictor="pod",resource="cpu"} 4.086
koord_koordlet_prediction_prod_reclaimable{predictor="pod",resource="memory"} 1.1231469156e+10
koord_koordlet_prediction_prod_reclaimable{predictor="priority",resource="cpu"} 3.449
koord_koordlet_prediction_prod_reclaimable{predictor="priority",resource="memory"} 9.779567405e+09
# HELP koord_koordlet_prediction_reports_total Predictions asked for by the NodeMetric reports, by result: Predicted or Unavailable (no model of the system or the prod tier yet, or the node unknown; the report then has an empty prodReclaimableMetric).
# TYPE koord_koordlet_prediction_reports_total counter
koord_koordlet_prediction_reports_total{result="Predicted"} 1
koord_koordlet_prediction_reports_total{result="Unavailable"} 1
# HELP koord_koordlet_prediction_trainings_total Training rounds: each adds one sample to every model whose usage is known.
# TYPE koord_koordlet_prediction_trainings_total counter
koord_koordlet_prediction_trainings_total 60
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"koord_koordlet_prediction_models", "koord_koordlet_prediction_prod_peak", "koord_koordlet_prediction_prod_reclaimable",
		"koord_koordlet_prediction_reports_total", "koord_koordlet_prediction_trainings_total"); err != nil {
		t.Error(err)
	}
}
