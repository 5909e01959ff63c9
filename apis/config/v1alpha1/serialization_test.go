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

package v1alpha1

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// TestSampleDecodesStrictly checks that the shipped sample, taken from Koordinator's colocation-profile docs,
// decodes into the Go types without unknown fields, i.e. that the JSON names match.
func TestSampleDecodesStrictly(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "samples", "config_v1alpha1_clustercolocationprofile.yaml"))
	if err != nil {
		t.Fatalf("reading sample: %v", err)
	}
	var p ClusterColocationProfile
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		t.Fatalf("UnmarshalStrict: %v", err)
	}
	got := struct {
		QoSClass, PriorityClassName, SchedulerName string
		KoordinatorPriority                        int32
		Labels                                     map[string]string
		Patch                                      string
	}{
		QoSClass:          p.Spec.QoSClass,
		PriorityClassName: p.Spec.PriorityClassName,
		SchedulerName:     p.Spec.SchedulerName,
		Labels:            p.Spec.Labels,
		Patch:             string(p.Spec.Patch.Raw),
	}
	if p.Spec.KoordinatorPriority != nil {
		got.KoordinatorPriority = *p.Spec.KoordinatorPriority
	}
	want := got
	want.QoSClass, want.PriorityClassName, want.SchedulerName = "BE", "koord-batch", "koord-scheduler"
	want.KoordinatorPriority = 1000
	want.Labels = map[string]string{"koordinator.sh/mutated": "true"}
	want.Patch = `{"spec":{"terminationGracePeriodSeconds":30}}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded spec (-want,+got):\n%s", diff)
	}
}

func TestProbabilityJSON(t *testing.T) {
	tests := map[string]struct {
		json string
		want intstr.IntOrString
	}{
		"int":     {json: `{"probability":50}`, want: intstr.FromInt32(50)},
		"percent": {json: `{"probability":"50%"}`, want: intstr.FromString("50%")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var s ClusterColocationProfileSpec
			if err := yaml.UnmarshalStrict([]byte(tc.json), &s); err != nil {
				t.Fatalf("UnmarshalStrict: %v", err)
			}
			if s.Probability == nil {
				t.Fatal("probability not decoded")
			}
			if diff := cmp.Diff(tc.want, *s.Probability); diff != "" {
				t.Errorf("probability (-want,+got):\n%s", diff)
			}
		})
	}
}
