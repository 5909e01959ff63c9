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
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Config are the prediction's settings, Koordinator's --prediction-* flags. DefaultConfig gives their defaults.
type Config struct {
	// CheckpointDir is the directory the models are checkpointed to, one file per model; "" keeps them in
	// memory only.
	CheckpointDir string
	// ColdStartDuration is how long after its creation a pod's own history is not trusted: until then it
	// counts as using its whole request.
	ColdStartDuration time.Duration
	// SafetyMarginPercent is added on top of every predicted peak, in percent.
	SafetyMarginPercent int
	// MemoryHalfLife is the age at which a memory sample weighs half as much as a new one.
	MemoryHalfLife time.Duration
	// CPUHalfLife is the age at which a CPU sample weighs half as much as a new one.
	CPUHalfLife time.Duration
	// TrainingInterval is how often the models take a sample: the P90 of the usage over the last interval.
	TrainingInterval time.Duration
	// ModelExpiration is how long a model that takes no sample (its pod is gone) is kept.
	ModelExpiration time.Duration
	// CheckpointInterval is how often each model is checkpointed at most.
	CheckpointInterval time.Duration
	// CheckpointMaxPerStep is how many models one checkpoint round writes at most (rounds run every minute).
	CheckpointMaxPerStep int
}

// DefaultConfig returns Koordinator's defaults (pkg/koordlet/prediction/config.go).
func DefaultConfig() Config {
	return Config{
		CheckpointDir:        "/prediction-checkpoints",
		ColdStartDuration:    24 * time.Hour,
		SafetyMarginPercent:  10,
		MemoryHalfLife:       24 * time.Hour,
		CPUHalfLife:          12 * time.Hour,
		TrainingInterval:     time.Minute,
		ModelExpiration:      30 * time.Minute,
		CheckpointInterval:   10 * time.Minute,
		CheckpointMaxPerStep: 12,
	}
}

// AddFlags binds the settings to fs under Koordinator's flag names.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.CheckpointDir, "prediction-checkpoint-filepath", c.CheckpointDir, "Directory the prediction models are checkpointed to, one file per model, and restored from at start; empty keeps them in memory only.")
	fs.DurationVar(&c.ColdStartDuration, "prediction-cold-start-duration", c.ColdStartDuration, "How long after its creation a pod counts as using its whole request in the prediction, before its own history is trusted.")
	fs.IntVar(&c.SafetyMarginPercent, "prediction-safety-margin-percent", c.SafetyMarginPercent, "Margin added to every predicted peak, in percent.")
	fs.DurationVar(&c.MemoryHalfLife, "prediction-memory-histogram-decay-halflife", c.MemoryHalfLife, "Age at which a memory sample weighs half as much as a new one.")
	fs.DurationVar(&c.CPUHalfLife, "prediction-cpu-histogram-decay-halflife", c.CPUHalfLife, "Age at which a CPU sample weighs half as much as a new one.")
	fs.DurationVar(&c.TrainingInterval, "prediction-training-interval", c.TrainingInterval, "How often the prediction models take a sample (the P90 of the usage over the interval).")
	fs.DurationVar(&c.ModelExpiration, "prediction-model-expiration-duration", c.ModelExpiration, "How long a prediction model that takes no sample (its pod is gone) is kept.")
	fs.DurationVar(&c.CheckpointInterval, "prediction-model-checkpoint-interval", c.CheckpointInterval, "How often each prediction model is checkpointed at most.")
	fs.IntVar(&c.CheckpointMaxPerStep, "prediction-model-checkpoint-max-per-step", c.CheckpointMaxPerStep, "Most prediction models written per checkpoint round (a round every minute).")
}

// Validate reports every setting out of range, by flag name.
func (c *Config) Validate() error {
	var errs []error
	positive := []struct {
		flag string
		d    time.Duration
	}{
		{"--prediction-memory-histogram-decay-halflife", c.MemoryHalfLife},
		{"--prediction-cpu-histogram-decay-halflife", c.CPUHalfLife},
		{"--prediction-training-interval", c.TrainingInterval},
		{"--prediction-model-expiration-duration", c.ModelExpiration},
		{"--prediction-model-checkpoint-interval", c.CheckpointInterval},
	}
	for _, p := range positive {
		if p.d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %s must be above zero", p.flag, p.d))
		}
	}
	if c.ColdStartDuration < 0 {
		errs = append(errs, fmt.Errorf("--prediction-cold-start-duration: %s is negative", c.ColdStartDuration))
	}
	if c.SafetyMarginPercent < 0 {
		errs = append(errs, fmt.Errorf("--prediction-safety-margin-percent: %d is negative", c.SafetyMarginPercent))
	}
	if c.CheckpointMaxPerStep < 1 {
		errs = append(errs, fmt.Errorf("--prediction-model-checkpoint-max-per-step: %d must be at least 1", c.CheckpointMaxPerStep))
	}
	if c.TrainingInterval > 0 && c.ModelExpiration > 0 && c.ModelExpiration <= c.TrainingInterval {
		errs = append(errs, fmt.Errorf("--prediction-model-expiration-duration: %s must be longer than --prediction-training-interval %s, or every model expires between two samples",
			c.ModelExpiration, c.TrainingInterval))
	}
	return errors.Join(errs...)
}
