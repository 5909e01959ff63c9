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

package koordlet

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestPredictionFlags: Koordinator's --prediction-* flags, in its Go style, set the prediction and are no longer
// ignored; a bad value fails validation by its flag name.
func TestPredictionFlags(t *testing.T) {
	tests := map[string]struct {
		args        []string
		wantDir     string
		wantCold    time.Duration
		wantInvalid string
	}{
		"defaults": {wantDir: "/prediction-checkpoints", wantCold: 24 * time.Hour},
		"Koordinator's spelling": {
			args:    []string{"-prediction-checkpoint-filepath=/var/run/koordlet/prediction", "-prediction-cold-start-duration=2h"},
			wantDir: "/var/run/koordlet/prediction", wantCold: 2 * time.Hour,
		},
		"invalid": {
			args:    []string{"--prediction-training-interval=0s"},
			wantDir: "/prediction-checkpoints", wantCold: 24 * time.Hour,
			wantInvalid: "--prediction-training-interval: 0s must be above zero",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			o.NodeName = "n1"
			fs := pflag.NewFlagSet("koordlet", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(KoordinatorArgs(fs, tc.args)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{tc.wantDir, tc.wantCold}, []any{o.Prediction.CheckpointDir, o.Prediction.ColdStartDuration}); diff != "" {
				t.Errorf("prediction settings (-want,+got):\n%s", diff)
			}
			if ignored := o.compat.Ignored(); len(ignored) > 0 {
				t.Errorf("flags ignored: %v", ignored)
			}
			err := o.Validate()
			switch {
			case tc.wantInvalid == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.wantInvalid != "" && (err == nil || !strings.Contains(err.Error(), tc.wantInvalid)):
				t.Errorf("Validate = %v, want an error containing %q", err, tc.wantInvalid)
			}
		})
	}
}
