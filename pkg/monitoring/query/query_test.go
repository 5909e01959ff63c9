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

package query

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInspect(t *testing.T) {
	for expr, want := range map[string]Info{
		`sum(rate(a_total[5m])) / on() b`:                      {Metrics: []string{"a_total", "b"}},
		`{__name__="c", node="n"}`:                             {Metrics: []string{"c"}},
		`histogram_quantile(0.9, rate(d_bucket[5m])) > bool 1`: {Metrics: []string{"d_bucket"}},
		`max(e) == 0`:                {Metrics: []string{"e"}, Filters: true},
		`f / (g > 0)`:                {Metrics: []string{"f", "g"}, Filters: true},
		`h - time() < 7 * 24 * 3600`: {Metrics: []string{"h"}, Filters: true},
	} {
		got, err := Inspect(expr)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", expr, diff)
		}
	}
	if _, err := Inspect(`sum(rate(a[5m])`); err == nil {
		t.Error("an unbalanced query parsed")
	}
}
