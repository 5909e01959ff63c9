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

package features

import (
	"testing"

	"k8s.io/component-base/featuregate"
)

func TestManagerGateDefaults(t *testing.T) {
	g := NewManagerGate()
	for f, specs := range ManagerFeatures() {
		if got, want := g.Enabled(f), specs[len(specs)-1].Default; got != want {
			t.Errorf("%s enabled = %v, want the default %v", f, got, want)
		}
	}
}

func TestManagerGateSetFromFlag(t *testing.T) {
	tests := map[string]struct {
		value   string
		want    map[featuregate.Feature]bool
		wantErr bool
	}{
		"turn one off": {value: "PodMutatingWebhook=false", want: map[featuregate.Feature]bool{PodMutatingWebhook: false, PodValidatingWebhook: true}},
		"unknown gate": {value: "NoSuchGate=true", wantErr: true},
		"not a bool":   {value: "PodMutatingWebhook=maybe", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := NewManagerGate()
			err := g.Set(tc.value)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Set(%q) error = %v, wantErr %v", tc.value, err, tc.wantErr)
			}
			for f, want := range tc.want {
				if got := g.Enabled(f); got != want {
					t.Errorf("%s enabled = %v, want %v", f, got, want)
				}
			}
		})
	}
}
