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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
)

// day is a midnight UTC the tests count from.
var day = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

var approx = cmpopts.EquateApprox(1e-12, 1e-9)

func TestProfileAt(t *testing.T) {
	diurnal := Profile{Type: ProfileDiurnal, Base: 1, Amplitude: 0.8, Period: 24 * time.Hour, Peak: 14 * time.Hour}
	hourly := Profile{Type: ProfileDiurnal, Base: 10, Amplitude: 4, Period: time.Hour, Peak: 15 * time.Minute}
	tests := map[string]struct {
		p    Profile
		at   time.Time
		want float64
	}{
		"constant":                    {p: Constant(0.5), at: day.Add(7 * time.Hour), want: 0.5},
		"diurnal-at-peak":             {p: diurnal, at: day.Add(14 * time.Hour), want: 1.8},
		"diurnal-at-trough":           {p: diurnal, at: day.Add(2 * time.Hour), want: 0.2},
		"diurnal-quarter-after-peak":  {p: diurnal, at: day.Add(20 * time.Hour), want: 1},
		"diurnal-quarter-before-peak": {p: diurnal, at: day.Add(8 * time.Hour), want: 1},
		// cos(2π × 2/24) = cos(π/6) = √3/2.
		"diurnal-two-hours-after-peak": {p: diurnal, at: day.Add(16 * time.Hour), want: 1 + 0.8*math.Sqrt(3)/2},
		"diurnal-next-day-peak":        {p: diurnal, at: day.Add(38 * time.Hour), want: 1.8},
		"diurnal-before-epoch":         {p: diurnal, at: time.Date(1969, 12, 31, 14, 0, 0, 0, time.UTC), want: 1.8},
		"diurnal-floored-at-zero": {
			p:  Profile{Type: ProfileDiurnal, Base: 0.5, Amplitude: 1, Period: 24 * time.Hour},
			at: day.Add(12 * time.Hour), want: 0,
		},
		"diurnal-short-period-peak":   {p: hourly, at: day.Add(5*time.Hour + 15*time.Minute), want: 14},
		"diurnal-short-period-trough": {p: hourly, at: day.Add(5*time.Hour + 45*time.Minute), want: 6},
		"bursty-never": {
			p:  Profile{Type: ProfileBursty, Base: 0.2, Burst: 2, Probability: 0, Duration: time.Minute},
			at: day, want: 0.2,
		},
		"bursty-always": {
			p:  Profile{Type: ProfileBursty, Base: 0.2, Burst: 2, Probability: 1, Duration: time.Minute},
			at: day, want: 2,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := tc.p.At(tc.at, Seed("uid-1", corev1.ResourceCPU))
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("At(%s) (-want,+got):\n%s", tc.at, diff)
			}
		})
	}
}

func TestBurstyProfile(t *testing.T) {
	p := Profile{Type: ProfileBursty, Base: 0.2, Burst: 2, Probability: 0.1, Duration: 5 * time.Minute}
	seed := Seed("uid-1", corev1.ResourceCPU)
	const buckets = 20000
	bursts := 0
	for i := range buckets {
		start := day.Add(time.Duration(i) * p.Duration)
		v := p.At(start, seed)
		if v != p.Base && v != p.Burst {
			t.Fatalf("bucket %d: value %v is neither base nor burst", i, v)
		}
		if end := p.At(start.Add(p.Duration-time.Nanosecond), seed); end != v {
			t.Fatalf("bucket %d changed within the bucket: %v then %v", i, v, end)
		}
		if again := p.At(start.Add(time.Minute), seed); again != v {
			t.Fatalf("bucket %d: value not deterministic: %v then %v", i, v, again)
		}
		if v == p.Burst {
			bursts++
		}
	}
	if share := float64(bursts) / buckets; share < 0.09 || share > 0.11 {
		t.Errorf("share of bursts is %v, want about the probability 0.1", share)
	}

	// Another pod, or the other resource of the same pod, bursts at other times.
	for _, other := range []uint64{Seed("uid-2", corev1.ResourceCPU), Seed("uid-1", corev1.ResourceMemory)} {
		same := 0
		for i := range buckets {
			at := day.Add(time.Duration(i) * p.Duration)
			if p.At(at, seed) == p.At(at, other) {
				same++
			}
		}
		// Independent bursts agree in 0.9² + 0.1² = 82 % of the buckets; identical ones in all.
		if share := float64(same) / buckets; share > 0.85 {
			t.Errorf("seeds %x and %x agree in %v of the buckets, want about 0.82", seed, other, share)
		}
	}
}

func TestSeedIsStable(t *testing.T) {
	// FNV-1a of "uid-1\x00cpu", computed independently: the same in every process, so every reader sees the
	// same bursts.
	if got, want := Seed("uid-1", corev1.ResourceCPU), uint64(0xd403bd578d05279d); got != want {
		t.Errorf("Seed = %#x, want %#x", got, want)
	}
}

func TestParseUsage(t *testing.T) {
	tests := map[string]struct {
		value   string
		want    *Usage
		wantErr string
	}{
		"constant-cpu": {
			value: `{"cpu":{"type":"constant","value":"500m"}}`,
			want:  &Usage{CPU: &Profile{Type: ProfileConstant, Value: 0.5}},
		},
		"number-quantity": {
			value: `{"cpu":{"type":"constant","value":1.5}}`,
			want:  &Usage{CPU: &Profile{Type: ProfileConstant, Value: 1.5}},
		},
		"diurnal-and-memory": {
			value: `{"cpu":{"type":"diurnal","base":"1","amplitude":"800m","period":"24h","peak":"14h"},
				"memory":{"type":"constant","value":"2Gi"}}`,
			want: &Usage{
				CPU:    &Profile{Type: ProfileDiurnal, Base: 1, Amplitude: 0.8, Period: 24 * time.Hour, Peak: 14 * time.Hour},
				Memory: &Profile{Type: ProfileConstant, Value: 2 << 30},
			},
		},
		"diurnal-defaults": {
			value: `{"memory":{"type":"diurnal","base":"1Gi","amplitude":"512Mi"}}`,
			want:  &Usage{Memory: &Profile{Type: ProfileDiurnal, Base: 1 << 30, Amplitude: 512 << 20, Period: 24 * time.Hour}},
		},
		"bursty": {
			value: `{"cpu":{"type":"bursty","base":"200m","burst":"2","probability":0.1,"duration":"5m"}}`,
			want:  &Usage{CPU: &Profile{Type: ProfileBursty, Base: 0.2, Burst: 2, Probability: 0.1, Duration: 5 * time.Minute}},
		},
		"bursty-default-duration": {
			value: `{"cpu":{"type":"bursty","base":"0","burst":"1","probability":1}}`,
			want:  &Usage{CPU: &Profile{Type: ProfileBursty, Burst: 1, Probability: 1, Duration: time.Minute}},
		},
		"empty-object": {value: `{}`, want: &Usage{}},
		"not-json": {
			value:   `cpu=1`,
			wantErr: "not a JSON object of profiles per resource: invalid character 'c' looking for beginning of value",
		},
		"null": {value: `null`, wantErr: "not a JSON object of profiles per resource: null"},
		"trailing-data": {
			value:   `{"cpu":{"type":"constant","value":"1"}} {}`,
			wantErr: "not a JSON object of profiles per resource: data after the JSON value",
		},
		"unknown-resource": {
			value:   `{"gpu":{"type":"constant","value":"1"}}`,
			wantErr: `gpu: Unsupported value: "gpu": supported values: "cpu", "memory"`,
		},
		"profile-not-object": {
			value:   `{"cpu":"500m"}`,
			wantErr: `cpu: Invalid value: "\"500m\"": must be a JSON object with a type`,
		},
		"missing-type": {
			value:   `{"cpu":{"value":"1"}}`,
			wantErr: `cpu.type: Required value: one of "constant", "diurnal", "bursty"`,
		},
		"unknown-type": {
			value:   `{"memory":{"type":"sawtooth"}}`,
			wantErr: `memory.type: Unsupported value: "sawtooth": supported values: "constant", "diurnal", "bursty"`,
		},
		"type-not-string": {
			value:   `{"cpu":{"type":1}}`,
			wantErr: `cpu.type: Invalid value: "1": must be a string`,
		},
		"missing-and-foreign-fields": {
			value: `{"cpu":{"type":"diurnal","base":"1","value":"2"}}`,
			wantErr: `[cpu.value: Forbidden: not a field of a diurnal profile, ` +
				`cpu.amplitude: Required value]`,
		},
		"bad-quantity": {
			value:   `{"cpu":{"type":"constant","value":"lots"}}`,
			wantErr: `cpu.value: Invalid value: "lots": must be a quantity such as "500m", "2" or "1Gi"`,
		},
		"quantity-of-wrong-type": {
			value:   `{"cpu":{"type":"constant","value":true}}`,
			wantErr: `cpu.value: Invalid value: "true": must be a quantity such as "500m", "2" or "1Gi"`,
		},
		"negative-quantity": {
			value:   `{"memory":{"type":"constant","value":"-1Gi"}}`,
			wantErr: `memory.value: Invalid value: "-1Gi": must not be negative`,
		},
		"huge-quantity": {
			value: `{"cpu":{"type":"diurnal","base":"1e308","amplitude":"1e308"}}`,
			wantErr: `[cpu.base: Invalid value: "1e308": must be at most 1e18, ` +
				`cpu.amplitude: Invalid value: "1e308": must be at most 1e18]`,
		},
		"bad-duration": {
			value:   `{"cpu":{"type":"diurnal","base":"1","amplitude":"1","period":"a day"}}`,
			wantErr: `cpu.period: Invalid value: "a day": must be a duration such as "5m" or "24h"`,
		},
		"duration-not-string": {
			value:   `{"cpu":{"type":"diurnal","base":"1","amplitude":"1","period":86400}}`,
			wantErr: `cpu.period: Invalid value: "86400": must be a duration string such as "5m" or "24h"`,
		},
		"zero-period": {
			value:   `{"cpu":{"type":"diurnal","base":"1","amplitude":"1","period":"0s"}}`,
			wantErr: `cpu.period: Invalid value: "0s": must be positive`,
		},
		"peak-outside-period": {
			value:   `{"cpu":{"type":"diurnal","base":"1","amplitude":"1","period":"1h","peak":"90m"}}`,
			wantErr: `cpu.peak: Invalid value: "1h30m0s": must be at least 0s and less than the period 1h0m0s`,
		},
		"probability-out-of-range": {
			value:   `{"cpu":{"type":"bursty","base":"1","burst":"2","probability":1.5}}`,
			wantErr: `cpu.probability: Invalid value: 1.5: must be a number from 0 to 1`,
		},
		"probability-string": {
			value:   `{"cpu":{"type":"bursty","base":"1","burst":"2","probability":"10%"}}`,
			wantErr: `cpu.probability: Invalid value: "\"10%\"": must be a number from 0 to 1`,
		},
		"burst-below-base": {
			value:   `{"memory":{"type":"bursty","base":"2Gi","burst":"1Gi","probability":0.5}}`,
			wantErr: `memory.burst: Invalid value: "1Gi": must be at least base (2Gi)`,
		},
		"negative-bucket": {
			value:   `{"cpu":{"type":"bursty","base":"1","burst":"2","probability":0.5,"duration":"-1m"}}`,
			wantErr: `cpu.duration: Invalid value: "-1m0s": must be positive`,
		},
		"errors-of-both-resources": {
			value:   `{"cpu":{"type":"constant"},"memory":{"type":"constant","value":"x"}}`,
			wantErr: `[cpu.value: Required value, memory.value: Invalid value: "x": must be a quantity such as "500m", "2" or "1Gi"]`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseUsage(tc.value)
			var gotErr string
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("usage (-want,+got):\n%s", diff)
			}
		})
	}
}
