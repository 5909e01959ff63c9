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

package cache

import (
	"errors"
	"slices"
	"testing"

	"github.com/koord-dev/koord/apis/extension"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// FuzzSpecFromPod fuzzes the gang annotations of a pod together, and the cache with them: reading them never
// panics, a malformed one is reported as an error naming a gang annotation, a valid spec is consistent, and a
// pod with malformed annotations is rejected (PodErr) without disturbing its gang.
func FuzzSpecFromPod(f *testing.F) {
	f.Add("2", "4", "30s", "Strict", "once-satisfied", `["default/eval"]`)
	f.Add("1", "", "", "NonStrict", "only-waiting", "")
	f.Add("0", "-1", "forever", "strict", "all", `["x"]`)
	f.Add("3", "2", "1h", "", "waiting-and-running", `[]`)
	f.Fuzz(func(t *testing.T, minMember, total, wait, mode, policy, groups string) {
		g := extension.GangDomainPrefix
		p := utiltesting.MakePod("a").Gang("train", minMember).Annotations(g+"total-number", total, g+"waiting-time", wait, g+"mode", mode, g+"match-policy", policy, g+"groups", groups).Obj()
		spec, err := SpecFromPod(p, defaults)
		if err != nil {
			var ae *extension.AnnotationError
			if !errors.Is(err, errNoMinimum) && !errors.As(err, &ae) {
				t.Fatalf("SpecFromPod() error %v (%T) names no annotation", err, err)
			}
		} else {
			if spec.MinMember < 1 || spec.TotalMember < spec.MinMember || spec.WaitTime <= 0 {
				t.Fatalf("inconsistent spec %+v", spec)
			}
			if !slices.Contains(spec.Groups, gid("train")) || !slices.IsSortedFunc(spec.Groups, ID.compare) {
				t.Fatalf("groups %v do not hold the gang, sorted", spec.Groups)
			}
		}
		cache, _ := newTestCache()
		cache.AddOrUpdatePod(utiltesting.MakePod("b").Gang("train", "2").Obj())
		v, ok := cache.BeginCycle(p)
		if !ok {
			t.Fatalf("BeginCycle() of a gang member reports no gang")
		}
		if (v.PodErr != nil) != (err != nil && !errors.Is(err, errNoMinimum)) {
			t.Fatalf("PodErr = %v, SpecFromPod() error = %v", v.PodErr, err)
		}
		if !v.HasSpec {
			t.Fatalf("the gang lost the spec of its valid member")
		}
		cache.Assume(p)
		cache.Unreserve(p)
		cache.DeletePod(p)
	})
}
