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

package sim

import (
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// FuzzParseUsage checks that ParseUsage never panics, and that every profile it accepts gives finite,
// non-negative usage no higher than its Max at any time (before and after the epoch, and far in the future).
func FuzzParseUsage(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"cpu":null}`, `{"cpu":{}}`,
		`{"cpu":{"type":"constant","value":"500m"}}`,
		`{"cpu":{"type":"constant","value":0.25},"memory":{"type":"constant","value":"1Gi"}}`,
		`{"cpu":{"type":"diurnal","base":"1","amplitude":"800m","period":"24h","peak":"14h"}}`,
		`{"cpu":{"type":"diurnal","base":"100m","amplitude":"2","period":"1ns"}}`,
		`{"memory":{"type":"diurnal","base":"1Gi","amplitude":"512Mi","peak":"23h59m59s"}}`,
		`{"cpu":{"type":"bursty","base":"200m","burst":"2","probability":0.1,"duration":"5m"}}`,
		`{"cpu":{"type":"bursty","base":"0","burst":"1e3","probability":1,"duration":"1ns"}}`,
		`{"cpu":{"type":"constant","value":"1e308"}}`,
		`{"cpu":{"type":"diurnal","base":"1e18","amplitude":"1e18"}}`,
		`{"cpu":{"type":"constant","value":"9223372036854775807"}}`,
		`{"cpu":{"type":"diurnal","base":"1","amplitude":"1","period":"2562047h"}}`,
		`{"cpu":{"type":"bursty","base":"1","burst":"2","probability":-0}}`,
		`{"cpu":{"type":"constant","value":"1"},"cpu":{"type":"constant","value":"2"}}`,
		`{"cpu":{"type":"constant","value":"1"}}trailing`,
	} {
		f.Add(s)
	}
	times := []time.Time{
		time.Unix(0, 0), time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC), day.Add(13*time.Hour + 7*time.Second),
		time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	f.Fuzz(func(t *testing.T, value string) {
		u, err := ParseUsage(value)
		if err != nil {
			if u != nil {
				t.Fatalf("ParseUsage(%q) returned %+v with error %v", value, u, err)
			}
			return
		}
		for _, p := range []*Profile{u.CPU, u.Memory} {
			if p == nil {
				continue
			}
			for _, at := range times {
				v := p.At(at, Seed("uid", corev1.ResourceCPU))
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > p.Max() {
					t.Fatalf("ParseUsage(%q): profile %+v gives %v at %s, want finite, >= 0 and <= %v", value, *p, v, at, p.Max())
				}
			}
		}
	})
}
