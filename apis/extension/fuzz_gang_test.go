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

package extension

import (
	"errors"
	"strconv"
	"testing"
)

// FuzzGangMinNumLabel fuzzes the lightweight-coscheduling minimum, read from a label: a parse error is a
// *LabelError naming the label, and a parsed value is a positive integer that formats back to itself.
func FuzzGangMinNumLabel(f *testing.F) {
	for _, s := range []string{"", "1", "8", "0", "-1", "x", "2147483648", "007"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pod := podWith(map[string]string{LabelLightweightCoschedulingPodGroupMinAvailable: s}, nil)
		n, err := GetGangMinNum(pod)
		if err != nil {
			if !errors.Is(err, &LabelError{Key: LabelLightweightCoschedulingPodGroupMinAvailable}) {
				t.Fatalf("error %v (%T) is not a *LabelError for %s", err, err, LabelLightweightCoschedulingPodGroupMinAvailable)
			}
			return
		}
		if s == "" {
			if n != 0 {
				t.Fatalf("GetGangMinNum() of an empty label = %d", n)
			}
			return
		}
		if n <= 0 {
			t.Fatalf("GetGangMinNum(%q) = %d, not positive", s, n)
		}
		again, err := GetGangMinNum(podWith(map[string]string{LabelLightweightCoschedulingPodGroupMinAvailable: strconv.Itoa(n)}, nil))
		if err != nil || again != n {
			t.Fatalf("round trip of %q: got %d, %v; want %d", s, again, err, n)
		}
	})
}

// FuzzGangMatchPolicyAlias fuzzes the match policy under the scheduler-plugins key, and its precedence: the
// Koordinator key wins when both are set.
func FuzzGangMatchPolicyAlias(f *testing.F) {
	for _, s := range []string{"", "once-satisfied", "only-waiting", "waiting-and-running", "Only-Waiting", "none"} {
		f.Add(s, "")
		f.Add(s, "only-waiting")
	}
	f.Fuzz(func(t *testing.T, alias, primary string) {
		pod := podWith(nil, map[string]string{AnnotationAliasGangMatchPolicy: alias, AnnotationGangMatchPolicy: primary})
		policy, err := GetGangMatchPolicy(pod)
		key, value := AnnotationGangMatchPolicy, primary
		if primary == "" {
			key, value = AnnotationAliasGangMatchPolicy, alias
		}
		if err != nil {
			if !errors.Is(err, &AnnotationError{Key: key}) {
				t.Fatalf("error %v is not an *AnnotationError for %s", err, key)
			}
			return
		}
		switch {
		case value == "" && policy != GangMatchPolicyOnceSatisfied:
			t.Fatalf("GetGangMatchPolicy() without a policy = %q, want the default", policy)
		case value != "" && string(policy) != value:
			t.Fatalf("GetGangMatchPolicy() = %q, want %q from %s", policy, value, key)
		}
	})
}
