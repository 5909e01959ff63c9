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
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Predictors, the values of the predictor label: Koordinator's two predictors and their combination.
const (
	// PredictorPod sums, over the prod pods, each pod's request minus its own predicted peak.
	PredictorPod = "pod"
	// PredictorPriority takes the prod pods' requests minus the predicted peak of the prod tier and the system.
	PredictorPriority = "priority"
	// PredictorMin is the smaller of the two: what is reported.
	PredictorMin = "min"
)

// Results of koord_koordlet_prediction_reports_total.
const (
	// ResultPredicted: a prediction was made.
	ResultPredicted = "Predicted"
	// ResultUnavailable: no prediction (no model of the system or the prod tier yet, or the node is unknown).
	ResultUnavailable = "Unavailable"
)

// Results of koord_koordlet_prediction_checkpoints_total.
const (
	// CheckpointSaved: a model was written.
	CheckpointSaved = "Saved"
	// CheckpointSaveFailed: writing a model failed.
	CheckpointSaveFailed = "SaveFailed"
	// CheckpointRestored: a model was read back at start.
	CheckpointRestored = "Restored"
	// CheckpointDiscarded: a file at start was corrupt or of a pod no longer on the node, and was removed.
	CheckpointDiscarded = "Discarded"
)

// Metrics are the prediction's Prometheus collectors. Create them with NewMetrics, register them with Register
// and pass them to NewServer with WithMetrics; a Server without them keeps private, unregistered ones.
type Metrics struct {
	reclaimable *prometheus.GaugeVec
	peak        *prometheus.GaugeVec
	reports     *prometheus.CounterVec
	models      prometheus.Gauge
	trainings   prometheus.Counter
	training    prometheus.Histogram
	checkpoints *prometheus.CounterVec
}

// NewMetrics creates the collectors, unregistered.
func NewMetrics() *Metrics {
	opts := func(name, help string) (string, string, string, string) {
		return koordmetrics.Namespace, koordmetrics.SubsystemKoordlet, name, help
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		ns, sub, n, h := opts(name, help)
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: n, Help: h}, labels)
	}
	return &Metrics{
		reclaimable: gauge("prediction_prod_reclaimable",
			"Resources predicted reclaimable from the prod pods (cpu in cores, memory in bytes), by predictor: pod, "+
				"priority, and min (the smaller, reported in the NodeMetric's prodReclaimableMetric).", "predictor", "resource"),
		peak: gauge("prediction_prod_peak",
			"Predicted peak usage of the prod pods and the system (cpu in cores, memory in bytes), by predictor: pod, "+
				"priority, and min (the larger, reported in the NodeMetric's prodPeakMetric).", "predictor", "resource"),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "prediction_reports_total",
			Help: "Predictions asked for by the NodeMetric reports, by result: Predicted or Unavailable (no model of the " +
				"system or the prod tier yet, or the node unknown; the report then has an empty prodReclaimableMetric).",
		}, []string{"result"}),
		models: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "prediction_models",
			Help: "Prediction models held: one per pod seen within the model expiration, plus the node's.",
		}),
		trainings: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "prediction_trainings_total",
			Help: "Training rounds: each adds one sample to every model whose usage is known.",
		}),
		training: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "prediction_training_duration_seconds",
			Help:    "Time a training round takes.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 8),
		}),
		checkpoints: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: koordmetrics.Namespace, Subsystem: koordmetrics.SubsystemKoordlet, Name: "prediction_checkpoints_total",
			Help: "Prediction model checkpoints, by result: Saved, SaveFailed, Restored (read back at start) or Discarded " +
				"(corrupt, or of a pod no longer on the node, removed at start).",
		}, []string{"result"}),
	}
}

// Register registers the collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.reclaimable), reg.Register(m.peak), reg.Register(m.reports), reg.Register(m.models),
		reg.Register(m.trainings), reg.Register(m.training), reg.Register(m.checkpoints))
}
