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
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// ttlPattern returns the pattern the Reservation CRD puts on spec.ttl.
func ttlPattern(t testing.TB) *regexp.Regexp {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", "scheduling.koordinator.sh_reservations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	pattern := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["ttl"].Pattern
	if pattern == "" {
		t.Fatal("the Reservation CRD has no pattern on spec.ttl")
	}
	return regexp.MustCompile(pattern)
}

// FuzzTTLPatternMatchesParseDuration checks that the CRD pattern on ttl accepts exactly the strings the Go types
// can decode (time.ParseDuration, not negative), so a stored Reservation never breaks a typed client. The one
// thing a pattern cannot check, magnitudes beyond int64 nanoseconds, is left to the CRD's CEL rule
// (duration(self) >= duration('0s')), which the integration test exercises with testdata/invalid.
func FuzzTTLPatternMatchesParseDuration(f *testing.F) {
	for _, s := range []string{"0", "0s", "24h", "1h30m", ".5h", "1.5h", "1.h", "300ms", "2us", "2µs", "10ns",
		"", "-1h", "1 hour", "1d", "h", "1", "1hh", "+1h", "1e3s", "1h-30m", "2700000h"} {
		f.Add(s)
	}
	pattern := ttlPattern(f)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := time.ParseDuration(s)
		decodable := err == nil && d >= 0
		// ParseDuration also accepts "+1h" and, for zero only, a bare "0" with a sign; the pattern is
		// stricter on signs by design, which is safe: it never accepts what Go cannot decode.
		if accepted := pattern.MatchString(s); accepted && !decodable && !overflows(s) {
			t.Errorf("pattern accepts %q, which time.ParseDuration rejects (%v) or is negative (%v)", s, err, d)
		} else if !accepted && decodable && s != "" && s[0] != '+' && s[0] != '-' {
			t.Errorf("pattern rejects %q, which decodes as %v", s, d)
		}
	})
}

var durationUnits = map[string]*big.Float{
	"ns": big.NewFloat(1), "us": big.NewFloat(1e3), "µs": big.NewFloat(1e3), "ms": big.NewFloat(1e6),
	"s": big.NewFloat(1e9), "m": big.NewFloat(60e9), "h": big.NewFloat(3600e9),
}

var durationComponent = regexp.MustCompile(`([0-9]*[.]?[0-9]*)(ns|us|µs|ms|s|m|h)`)

// overflows tells whether a syntactically valid duration string exceeds the int64 nanoseconds of time.Duration.
func overflows(s string) bool {
	total := new(big.Float)
	for _, m := range durationComponent.FindAllStringSubmatch(s, -1) {
		n, ok := new(big.Float).SetString(m[1])
		if !ok {
			return false
		}
		total.Add(total, n.Mul(n, durationUnits[m[2]]))
	}
	return total.Cmp(big.NewFloat(math.MaxInt64)) > 0
}
