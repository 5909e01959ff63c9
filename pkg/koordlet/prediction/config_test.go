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

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestConfigFlags(t *testing.T) {
	tests := map[string]struct {
		args []string
		want func(*Config)
	}{
		"Koordinator's defaults": {want: func(*Config) {}},
		"every flag": {
			args: []string{
				"--prediction-checkpoint-filepath=/var/lib/koordlet/prediction",
				"--prediction-cold-start-duration=2h",
				"--prediction-safety-margin-percent=20",
				"--prediction-memory-histogram-decay-halflife=48h",
				"--prediction-cpu-histogram-decay-halflife=6h",
				"--prediction-training-interval=30s",
				"--prediction-model-expiration-duration=1h",
				"--prediction-model-checkpoint-interval=5m",
				"--prediction-model-checkpoint-max-per-step=50",
			},
			want: func(c *Config) {
				*c = Config{
					CheckpointDir: "/var/lib/koordlet/prediction", ColdStartDuration: 2 * time.Hour, SafetyMarginPercent: 20,
					MemoryHalfLife: 48 * time.Hour, CPUHalfLife: 6 * time.Hour, TrainingInterval: 30 * time.Second,
					ModelExpiration: time.Hour, CheckpointInterval: 5 * time.Minute, CheckpointMaxPerStep: 50,
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := DefaultConfig()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			got.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			want := Config{
				CheckpointDir: "/prediction-checkpoints", ColdStartDuration: 24 * time.Hour, SafetyMarginPercent: 10,
				MemoryHalfLife: 24 * time.Hour, CPUHalfLife: 12 * time.Hour, TrainingInterval: time.Minute,
				ModelExpiration: 30 * time.Minute, CheckpointInterval: 10 * time.Minute, CheckpointMaxPerStep: 12,
			}
			tc.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want,+got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := map[string]struct {
		change func(*Config)
		want   []string
	}{
		"zero half-life": {
			change: func(c *Config) { c.CPUHalfLife = 0 },
			want:   []string{"--prediction-cpu-histogram-decay-halflife: 0s must be above zero"},
		},
		"negative values": {
			change: func(c *Config) { c.ColdStartDuration, c.SafetyMarginPercent = -time.Second, -1 },
			want: []string{
				"--prediction-cold-start-duration: -1s is negative",
				"--prediction-safety-margin-percent: -1 is negative",
			},
		},
		"no checkpoint per step": {
			change: func(c *Config) { c.CheckpointMaxPerStep = 0 },
			want:   []string{"--prediction-model-checkpoint-max-per-step: 0 must be at least 1"},
		},
		"models expiring between two samples": {
			change: func(c *Config) { c.ModelExpiration = time.Minute },
			want:   []string{"--prediction-model-expiration-duration: 1m0s must be longer than --prediction-training-interval 1m0s"},
		},
		"no checkpoint directory is fine": {change: func(c *Config) { c.CheckpointDir = "" }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := DefaultConfig()
			tc.change(&c)
			err := c.Validate()
			var got []string
			if err != nil {
				for _, line := range strings.Split(err.Error(), "\n") {
					got = append(got, strings.SplitN(line, ", or every", 2)[0])
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}
