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

package metriccache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

var psiResources = []corev1.ResourceName{
	ResourcePSICPUSomeAvg10, ResourcePSICPUFullAvg10, ResourcePSIMemorySomeAvg10, ResourcePSIMemoryFullAvg10,
	ResourcePSIIOSomeAvg10, ResourcePSIIOFullAvg10,
}

func TestIsPSI(t *testing.T) {
	for _, r := range psiResources {
		if !IsPSI(r) {
			t.Errorf("IsPSI(%s) = false", r)
		}
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, ResourceMemoryWithPageCache, "pressure"} {
		if IsPSI(r) {
			t.Errorf("IsPSI(%s) = true", r)
		}
	}
}

// TestCapacityOfPSI: PSI series of pods, host applications and containers hold PSISamples; those of the node
// and the system hold NodeSamples like every node series.
func TestCapacityOfPSI(t *testing.T) {
	kinds := []Kind{KindNode, KindSystem, KindPod, KindHostApp, KindContainer}
	tests := map[string]struct {
		opts Options
		want map[Kind]int
	}{
		"defaults": {
			want: map[Kind]int{KindNode: 1800, KindSystem: 1800, KindPod: 60, KindHostApp: 60, KindContainer: 60},
		},
		"custom": {
			opts: Options{NodeSamples: 100, PodSamples: 50, ContainerSamples: 40, PSISamples: 10},
			want: map[Kind]int{KindNode: 100, KindSystem: 100, KindPod: 10, KindHostApp: 10, KindContainer: 10},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, r := range psiResources {
				c := New(tc.opts)
				got := map[Kind]int{}
				for _, kind := range kinds {
					k := SeriesKey{Kind: kind, ID: "x", Resource: r}
					for i := range 2000 {
						c.Append(k, at(i), 1)
					}
					a, _ := c.Aggregate(k, at(-1), at(2000))
					got[kind] = a.Count
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: samples kept per kind (-want,+got):\n%s", r, diff)
				}
			}
		})
	}
	t.Run("negative", func(t *testing.T) {
		want := "metric cache psiSamples is -1, want 0 (default) or more"
		if err := (Options{PSISamples: -1}).Validate(); err == nil || err.Error() != want {
			t.Errorf("Validate = %v, want %q", err, want)
		}
	})
}
